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

``time_s`` / ``tokens`` are ``null`` where the paper prints "–". :func:`compare` turns the
table and episode rows (``ResultStore.episodes()``) into a :class:`Comparison`: per row the
predicted success with its Wilson 95 % interval (the simulation's sampling uncertainty only:
the profiles' own uncertainty is not in it), a verdict (agree when the paper's success lies
in that interval), the predicted time and tokens per episode, and across rows Spearman's rank
correlation and SIMPLER's Mean Maximum Rank Violation (:func:`mmrv`) of the success rates.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_env.errors import InvalidConfigError, check_keys
from agentic_env.harness.episode import models_label
from agentic_env.harness.metrics import wilson_interval

_TABLE_KEYS = ("id", "source", "where", "rows")
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
    """

    id: str
    source: str
    where: tuple[tuple[str, tuple[Any, ...]], ...]
    rows: tuple[PaperRow, ...]

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
        return cls(id=str(data["id"]), source=str(data["source"]),
                   where=tuple((str(k), tuple(v) if isinstance(v, list | tuple) else (v,))
                               for k, v in where.items()),
                   rows=parsed)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form that :meth:`from_dict` reads back."""
        return {"id": self.id, "source": self.source,
                "where": {k: list(v) for k, v in self.where},
                "rows": [{"label": r.label, "model": r.model, "modules": dict(r.modules),
                          "success": r.success, "time_s": r.time_s, "tokens": r.tokens}
                         for r in self.rows]}


def parse_paper_table(data: Any) -> PaperTable | None:
    """The ``paper_table:`` of a sweep file (``None`` -> no table)."""
    return None if data is None else PaperTable.from_dict(data)


@dataclass(frozen=True)
class RowComparison:
    """One paper row beside its prediction.

    Attributes:
        row: the paper's row.
        n / successes: the predicting episodes and how many succeeded.
        ci_low / ci_high: Wilson 95 % interval of the predicted success rate.
        time_s: mean episode time (robot motion + model time, ``sim_s + model_s``) over the
            successful episodes, seconds; ``None`` when none succeeded.
        tokens: mean model tokens (input + output) over the successful episodes, ``None``
            when none succeeded.
        time_all_s: mean episode time over all its episodes, seconds (``None`` when n = 0).
    """

    row: PaperRow
    n: int
    successes: int
    ci_low: float
    ci_high: float
    time_s: float | None
    tokens: float | None
    time_all_s: float | None

    @property
    def success(self) -> float:
        """The predicted success rate (0 when there are no episodes)."""
        return self.successes / self.n if self.n else 0.0

    @property
    def agrees(self) -> bool | None:
        """The paper's success lies in the predicted Wilson interval; ``None`` when no
        episode predicts the row."""
        if not self.n:
            return None
        return self.ci_low - 1e-9 <= self.row.success <= self.ci_high + 1e-9

    @property
    def label(self) -> str:
        """``agree``, ``disagree`` or ``no data``."""
        return {True: "agree", False: "disagree", None: "no data"}[self.agrees]


@dataclass(frozen=True)
class Comparison:
    """The table beside its prediction.

    Attributes:
        table: the paper's table.
        rows: one comparison per paper row, in the paper's order.
        spearman: Spearman's rank correlation of predicted and paper success over the rows
            with episodes (``None`` with fewer than two or a constant column).
        mmrv: SIMPLER's Mean Maximum Rank Violation of the same (``None`` with no rows).
    """

    table: PaperTable
    rows: tuple[RowComparison, ...]
    spearman: float | None
    mmrv: float | None


def compare(table: PaperTable, episodes: Sequence[Mapping[str, Any]]) -> Comparison:
    """Each row of ``table`` beside the episodes (rows with ``model``, ``success``,
    ``sim_s``, ``model_s``, ``input_tokens``, ``output_tokens`` and the ``where`` columns)
    that predict it."""
    selected = [e for e in episodes if all(str(e.get(k)) in {str(v) for v in values}
                                           for k, values in table.where)]
    compared = []
    for row in table.rows:
        mine = [e for e in selected if e.get("model") == row.model_label]
        won = [e for e in mine if e.get("success")]
        low, high = wilson_interval(len(won), len(mine))
        compared.append(RowComparison(
            row=row, n=len(mine), successes=len(won), ci_low=low, ci_high=high,
            time_s=_mean([_episode_s(e) for e in won]),
            tokens=_mean([float((e.get("input_tokens") or 0) + (e.get("output_tokens") or 0))
                          for e in won]),
            time_all_s=_mean([_episode_s(e) for e in mine])))
    measured = [c for c in compared if c.n]
    predicted = [c.success for c in measured]
    paper = [c.row.success for c in measured]
    return Comparison(table=table, rows=tuple(compared), spearman=spearman(predicted, paper),
                      mmrv=mmrv(predicted, paper) if measured else None)


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ascending, ties given their average rank (``[3, 1, 3] -> [2.5, 1,
    2.5]``)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            result[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return result


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation: Pearson's correlation of the average ranks (so ties are
    handled), in [-1, 1]; ``None`` with fewer than two pairs or a constant column.

    Raises:
        ValueError: ``x`` and ``y`` differ in length.
    """
    if len(x) != len(y):
        raise ValueError(f"spearman: {len(x)} values against {len(y)}")
    if len(x) < 2:
        return None
    rx, ry = ranks(x), ranks(y)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = math.fsum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = math.fsum((a - mx) ** 2 for a in rx)
    syy = math.fsum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def mmrv(simulated: Sequence[float], real: Sequence[float]) -> float:
    """SIMPLER's Mean Maximum Rank Violation (Li et al., "Evaluating Real-World Robot
    Manipulation Policies in Simulation", 2024): for each row i, the largest real-success gap
    ``|real_i - real_j|`` over the rows j whose order the simulation gets wrong
    (``(sim_i > sim_j) != (real_i > real_j)``, strict as in SIMPLER's code, so a tie on one
    side against an order on the other counts), averaged over the rows. In [0, 1] for rates;
    0: the simulation orders every pair as the real runs do (or errs only between rows the
    real runs score alike).

    Raises:
        ValueError: the sequences differ in length or are empty.
    """
    if len(simulated) != len(real) or not simulated:
        raise ValueError(f"mmrv: needs two non-empty sequences of one length, got "
                         f"{len(simulated)} and {len(real)}")
    worst = []
    for i in range(len(simulated)):
        violations = [abs(real[i] - real[j]) for j in range(len(simulated))
                      if (simulated[i] > simulated[j]) != (real[i] > real[j])]
        worst.append(max(violations, default=0.0))
    return statistics.fmean(worst)


def _episode_s(episode: Mapping[str, Any]) -> float:
    """An episode's time as on the real robot: robot motion plus model time, seconds."""
    return float(episode.get("sim_s") or 0.0) + float(episode.get("model_s") or 0.0)


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


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
