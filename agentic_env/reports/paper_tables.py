"""A paper's end-to-end table (:mod:`agentic_env.harness.paper_tables`) beside the
simulation's prediction of it.

:func:`compare` turns the table and episode rows (``ResultStore.episodes()``) into a
:class:`Comparison`: per row the predicted success with its Wilson 95 % interval, the verdict
of the two-sided comparison of the two samples (:mod:`agentic_env.reports.agreement`), the
predicted time and tokens per episode, and across rows Spearman's rank correlation and
SIMPLER's Mean Maximum Rank Violation (:func:`mmrv`) of the success rates.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_env.harness.paper_tables import PaperRow, PaperTable
from agentic_env.reports.agreement import (
    RateAgreement,
    bootstrap_rank_intervals,
    compare_rates,
    leave_one_out,
)
from agentic_env.reports.metrics import wilson_interval

#: A predicted time or token count agrees with the paper's within this factor either way.
#: The paper gives one mean per row and no spread, so no interval can be computed; a factor
#: of 1.5 is stated before any comparison as what 'the same cost' means (it allows the
#: profiles' assumed tokens per call and the virtual clock's missing overheads).
COST_TOLERANCE = 1.5


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
        return self.successes / self.n if self.n else 0.0

    @property
    def wilson_agrees(self) -> bool | None:
        """The paper's success lies in the predicted Wilson interval (the one-sided, secondary
        verdict); ``None`` when no episode predicts the row."""
        if not self.n:
            return None
        return self.ci_low - 1e-9 <= self.row.success <= self.ci_high + 1e-9

    @property
    def agrees(self) -> bool | None:
        """The verdict: the two samples' difference is compatible with 0 (Newcombe 95 %);
        the Wilson verdict when the paper's trial count is unknown; ``None`` without
        episodes."""
        if self.two_sided is not None:
            return self.two_sided.agrees
        return self.wilson_agrees

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


def within_tolerance(predicted: float | None, paper: float | None) -> bool | None:
    """``predicted`` within a factor :data:`COST_TOLERANCE` of ``paper`` either way;
    ``None`` when either is missing (or the paper's is not positive)."""
    if predicted is None or paper is None or paper <= 0:
        return None
    return 1 / COST_TOLERANCE <= predicted / paper <= COST_TOLERANCE
