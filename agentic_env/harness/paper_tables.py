"""A paper's end-to-end table: declared in a sweep file, compared with its episodes.

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
the paper's trials per row, which makes its success rates a sample the verdicts compare with.

:func:`parse_paper_table` reads a sweep file's table; :func:`compare` turns the table and
episode rows (``ResultStore.episodes()``) into a :class:`Comparison`: per row the predicted
success with its Wilson 95 % interval, the verdict of the two-sided comparison of the two
samples (:mod:`agentic_env.stats`), the predicted time and tokens per episode, and across
rows Spearman's rank correlation and SIMPLER's Mean Maximum Rank Violation
(:func:`~agentic_env.stats.mmrv`) of the success rates.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_env.errors import InvalidConfigError, check_keys
from agentic_env.harness.episode import models_label
from agentic_env.stats import (
    RateAgreement,
    bootstrap_rank_intervals,
    compare_rates,
    leave_one_out,
    mmrv,
    rate_verdict,
    spearman,
    success_rate,
    wilson_interval,
)

_TABLE_KEYS = ("id", "source", "where", "rows", "trials")
_ROW_KEYS = ("label", "model", "modules", "success", "time_s", "tokens")
#: A predicted time or token count agrees with the paper's within this factor either way.
#: The paper gives one mean per row and no spread, so no interval can be computed; a factor
#: of 1.5 is stated before any comparison as what 'the same cost' means (it allows the
#: profiles' assumed tokens per call and the virtual clock's missing overheads).
COST_TOLERANCE = 1.5


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
        paper_trials: the paper's trials behind the row's rate (``None``: unknown, and the
            verdict falls back to the Wilson interval alone).
        two_sided: the two samples compared (``None`` without episodes or paper trials).
    """

    row: PaperRow
    n: int
    successes: int
    ci_low: float
    ci_high: float
    time_s: float | None
    tokens: float | None
    time_all_s: float | None
    paper_trials: int | None = None
    two_sided: RateAgreement | None = None

    @property
    def success(self) -> float:
        """The predicted success rate (0 when there are no episodes)."""
        return success_rate(self.successes, self.n)

    @property
    def wilson_agrees(self) -> bool | None:
        """The paper's success lies in the predicted Wilson interval (the one-sided, secondary
        verdict); ``None`` when no episode predicts the row."""
        return rate_verdict(None, self.n, self.ci_low, self.ci_high, self.row.success)

    @property
    def agrees(self) -> bool | None:
        """The verdict: the two samples' difference is compatible with 0 (Newcombe 95 %);
        the Wilson verdict when the paper's trial count is unknown; ``None`` without
        episodes."""
        return rate_verdict(self.two_sided, self.n, self.ci_low, self.ci_high,
                            self.row.success)

    @property
    def time_agrees(self) -> bool | None:
        """Predicted time per successful episode within :data:`COST_TOLERANCE` of the
        paper's; ``None`` when either is missing."""
        return within_tolerance(self.time_s, self.row.time_s)

    @property
    def tokens_agree(self) -> bool | None:
        """Predicted tokens per successful episode within :data:`COST_TOLERANCE` of the
        paper's; ``None`` when either is missing."""
        return within_tolerance(self.tokens, self.row.tokens)

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
        spearman_ci / mmrv_ci: 95 % bootstrap intervals over both samples (``None`` without
            the paper's trial count), centred on the same rates as the point values (the
            paper's published rate, the simulation's k/n).
        spearman_loo / mmrv_loo: lowest and highest with one row left out.
    """

    table: PaperTable
    rows: tuple[RowComparison, ...]
    spearman: float | None
    mmrv: float | None
    spearman_ci: tuple[float, float] | None = None
    mmrv_ci: tuple[float, float] | None = None
    spearman_loo: tuple[float, float] | None = None
    mmrv_loo: tuple[float, float] | None = None


def compare(table: PaperTable, episodes: Sequence[Mapping[str, Any]],
            paper_trials: int | None = None) -> Comparison:
    """Each row of ``table`` beside the episodes (rows with ``model``, ``success``,
    ``sim_s``, ``model_s``, ``input_tokens``, ``output_tokens`` and the ``where`` columns)
    that predict it; ``paper_trials`` (default: the table's ``trials``) is the paper's
    trials per row, which makes each verdict two-sided."""
    trials = paper_trials if paper_trials is not None else table.trials
    compared = []
    for row in table.rows:
        mine = row_episodes(table, row, episodes)
        won = [e for e in mine if e.get("success")]
        low, high = wilson_interval(len(won), len(mine))
        two_sided = (compare_rates(len(won), len(mine), paper_successes(row, trials), trials)
                     if mine and trials else None)
        compared.append(RowComparison(
            row=row, n=len(mine), successes=len(won), ci_low=low, ci_high=high,
            time_s=_mean([_episode_s(e) for e in won]),
            tokens=_mean([float((e.get("input_tokens") or 0) + (e.get("output_tokens") or 0))
                          for e in won]),
            time_all_s=_mean([_episode_s(e) for e in mine]), paper_trials=trials,
            two_sided=two_sided))
    measured = [c for c in compared if c.n]
    predicted = [c.success for c in measured]
    paper = [c.row.success for c in measured]
    intervals: list[tuple[float, float] | None] = [None, None]
    if trials and measured:
        intervals = bootstrap_rank_intervals(
            [(c.successes, c.n) for c in measured],
            [(c.row.success * trials, trials) for c in measured], (spearman, mmrv))
    return Comparison(table=table, rows=tuple(compared), spearman=spearman(predicted, paper),
                      mmrv=mmrv(predicted, paper) if measured else None,
                      spearman_ci=intervals[0], mmrv_ci=intervals[1],
                      spearman_loo=leave_one_out(predicted, paper, spearman),
                      mmrv_loo=leave_one_out(predicted, paper, mmrv))


def row_episodes(table: PaperTable, row: PaperRow, episodes: Sequence[Mapping[str, Any]]
                 ) -> list[Mapping[str, Any]]:
    """The episodes that predict ``row``: the table's ``where`` columns match (a list = any
    of) and the ``model`` column is the row's model label."""
    return [e for e in episodes if e.get("model") == row.model_label
            and all(str(e.get(k)) in {str(v) for v in values} for k, values in table.where)]


def paper_successes(row: PaperRow, trials: int) -> int:
    """The paper's successful trials of ``row``: its rate times its trials, rounded."""
    return round(row.success * trials)


def _episode_s(episode: Mapping[str, Any]) -> float:
    """An episode's time as on the real robot: robot motion plus model time, seconds."""
    return float(episode.get("sim_s") or 0.0) + float(episode.get("model_s") or 0.0)


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def within_tolerance(predicted: float | None, paper: float | None) -> bool | None:
    """``predicted`` within a factor :data:`COST_TOLERANCE` of ``paper`` either way;
    ``None`` when either is missing (or the paper's is not positive)."""
    if predicted is None or paper is None or paper <= 0:
        return None
    return 1 / COST_TOLERANCE <= predicted / paper <= COST_TOLERANCE
