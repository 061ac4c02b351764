"""A paper's end-to-end table beside the simulation's prediction of it.

A sweep file may carry the paper's table as data (``paper_table:``): one row per
configuration the paper ran, with the paper's success rate, time and tokens per episode, and
the sweep's episodes that predict it (the row's ``model`` and per-module ``modules``, as in
the grid)::

    paper_table:
      id: agenticlab-table1
      source: AgenticLab Table I
      where: {task: sorting}          # column filters every row adds (a list = any of)
      rows:
        - {label: Gemini 3 Flash, model: "emulated:gemini-3-flash", success: 0.75,
           time_s: 334, tokens: 67000}
        - {label: GPT-5.2 + LangSAM, model: "emulated:gpt-5.2",
           modules: {detector: "emulated:langsam"}, success: 0.0, time_s: null, tokens: null}

``time_s`` / ``tokens`` are ``null`` where the paper prints "–"; ``trials`` (optional) is
the paper's trials per row, which makes its success rates a sample the verdicts compare with
(:mod:`agentic_env.reports.paper_tables`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentic_env.errors import InvalidConfigError, check_keys
from agentic_env.harness.episode import models_label

_TABLE_KEYS = ("id", "source", "where", "rows", "trials")
_ROW_KEYS = ("label", "model", "modules", "success", "time_s", "tokens")


@dataclass(frozen=True)
class PaperRow:
    """One row of the paper's table.

    Attributes:
        label: the row's name in the paper (``Gemini 3 Pro + LangSAM``).
        model: the model spec of the episodes that predict it.
        modules: per-module model specs overriding ``model``, sorted by module.
        success: the paper's success rate, in [0, 1].
        time_s: the paper's time per episode, seconds; ``None`` where it prints "–".
        tokens: the paper's tokens per episode; ``None`` where it prints "–".
    """

    label: str
    model: str
    modules: tuple[tuple[str, str], ...] = ()
    success: float = 0.0
    time_s: float | None = None
    tokens: float | None = None

    @property
    def model_label(self) -> str:
        """The ``model`` column of the episodes that predict this row."""
        return models_label(self.model, self.modules)


@dataclass(frozen=True)
class PaperTable:
    """A paper's end-to-end table (see the module docstring).

    Attributes:
        id: a short name of the table.
        source: the paper and table it is copied from.
        where: column filters every row's episodes must pass (a tuple of values = any of).
        rows: the rows, in the paper's order.
        trials: the paper's trials per row (e.g. 20 for AgenticLab Table I), ``None`` when
            the table does not say.
    """

    id: str
    source: str
    where: tuple[tuple[str, tuple[Any, ...]], ...]
    rows: tuple[PaperRow, ...]
    trials: int | None = None

    @classmethod
    def from_dict(cls, data: Any) -> PaperTable:
        """Validate a sweep file's ``paper_table:`` mapping."""
        if not isinstance(data, Mapping):
            raise InvalidConfigError("'paper_table' is a mapping with keys "
                                     + ", ".join(_TABLE_KEYS))
        check_keys(data, _TABLE_KEYS, "paper_table")
        for key in ("id", "source"):
            if not data.get(key):
                raise InvalidConfigError(f"paper_table needs {key!r}")
        where = data.get("where") or {}
        if not isinstance(where, Mapping):
            raise InvalidConfigError("paper_table: 'where' maps columns to a value or a list")
        rows = data.get("rows")
        if not isinstance(rows, list) or not rows:
            raise InvalidConfigError("paper_table: 'rows' is a non-empty list of "
                                     "{" + ", ".join(_ROW_KEYS) + "}")
        parsed = tuple(_row(entry) for entry in rows)
        labels = [r.model_label for r in parsed]
        if len(set(labels)) != len(labels):
            raise InvalidConfigError(f"paper_table: two rows name the same models: {labels}")
        trials = data.get("trials")
        if trials is not None and (not isinstance(trials, int) or trials < 1):
            raise InvalidConfigError(f"paper_table: 'trials' is a positive count, got {trials!r}")
        return cls(id=str(data["id"]), source=str(data["source"]), trials=trials,
                   where=tuple((str(k), tuple(v) if isinstance(v, list | tuple) else (v,))
                               for k, v in where.items()),
                   rows=parsed)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form that :meth:`from_dict` reads back."""
        return {"id": self.id, "source": self.source,
                "where": {k: list(v) for k, v in self.where},
                "rows": [{"label": r.label, "model": r.model, "modules": dict(r.modules),
                          "success": r.success, "time_s": r.time_s, "tokens": r.tokens}
                         for r in self.rows], "trials": self.trials}


def parse_paper_table(data: Any) -> PaperTable | None:
    """The ``paper_table:`` of a sweep file (``None`` -> no table)."""
    return None if data is None else PaperTable.from_dict(data)


def _row(entry: Any) -> PaperRow:
    if not isinstance(entry, Mapping):
        raise InvalidConfigError(f"paper_table row {entry!r}: give a mapping of "
                                 + ", ".join(_ROW_KEYS))
    check_keys(entry, _ROW_KEYS, "paper_table row")
    for key in ("label", "model", "success"):
        if entry.get(key) is None:
            raise InvalidConfigError(f"paper_table row {entry.get('label')!r} needs {key!r}")
    modules = entry.get("modules") or {}
    if not isinstance(modules, Mapping):
        raise InvalidConfigError(f"paper_table row {entry['label']!r}: 'modules' maps module "
                                 "names to model specs")
    success = float(entry["success"])
    if not 0.0 <= success <= 1.0:
        raise InvalidConfigError(f"paper_table row {entry['label']!r}: success is a rate in "
                                 f"[0, 1], got {success}")
    return PaperRow(label=str(entry["label"]), model=str(entry["model"]),
                    modules=tuple(sorted((str(k), str(v)) for k, v in modules.items())),
                    success=success, time_s=_optional(entry.get("time_s")),
                    tokens=_optional(entry.get("tokens")))


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)
