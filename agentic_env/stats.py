"""The statistics of a verdict: pure functions of counts and rates, shared by the paper's
tables (:mod:`agentic_env.harness.paper_tables`), the target tables and the reports.

One sample: :func:`wilson_interval` bounds a binomial rate. Two samples: a paper's success
rate over its own trials is a sample too (AgenticLab's Table I rows are k of 20 trials), so a
verdict compares two binomial samples rather than asking whether the paper's rate lies in
the simulation's interval: :func:`newcombe_interval` bounds the difference of the two rates
(Newcombe 1998, "Interval estimation for the difference between independent proportions",
Stat. Med. 17, method 10: built from the two Wilson intervals) and :func:`fisher_exact`
gives the exact two-sided p-value of equal rates; beside "agree", :attr:`RateAgreement.margin`
says how large a difference the interval still allows (an "agree" at ±30 points is weak) and
:attr:`RateAgreement.equivalent` whether it lies within the pre-stated
:data:`EQUIVALENCE_MARGIN`. Across rows, :func:`spearman` (on :func:`ranks`) and SIMPLER's
:func:`mmrv` say how well one column of rates orders the rows as another does;
:func:`bootstrap_rank_intervals` redraws both samples' true rates from their Jeffreys
posteriors (Beta(k + ½, n − k + ½), so a row at 0/n or n/n varies too), centred on the very
rates the point statistic uses (the paper's published rate times its trials, not a rounded
count), to put 95 % intervals on such a statistic, and :func:`leave_one_out` shows how far
one row moves a statistic estimated from the rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import fmean

import numpy as np

#: Two-sided 95 % normal quantile.
Z95 = 1.959963984540054
#: Bootstrap redraws of both samples.
BOOTSTRAP_DRAWS = 2000
#: The difference of two rates that counts as "the same" (equivalence): ±15 points, stated
#: before any comparison (a tenth of the 0–100 % scale and a half of the widest 20-trial
#: Newcombe half-width), not fitted to any run.
EQUIVALENCE_MARGIN = 0.15
#: The Jeffreys prior's pseudo-counts (Beta(½, ½)).
JEFFREYS = 0.5


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion.

    Args:
        successes: successes, 0..n.
        n: trials; ``n == 0`` gives the uninformative ``(0.0, 1.0)``.
        z: normal quantile (default 95 % two-sided).

    Returns:
        ``(low, high)`` in [0, 1].
    """
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in 0..{n}, got {successes}")
    p = successes / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # the bounds at 0 and n successes are exactly 0 and 1 (rounding would put them a hair
    # inside, above the rate or below it)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def newcombe_interval(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float]:
    """95 % interval of ``k1/n1 - k2/n2`` (Newcombe's hybrid score method), in [-1, 1].

    Raises:
        ValueError: a sample is empty or its successes lie outside 0..n.
    """
    if n1 <= 0 or n2 <= 0:
        raise ValueError(f"newcombe_interval: both samples need trials, got {n1} and {n2}")
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1)
    l2, u2 = wilson_interval(k2, n2)
    d = p1 - p2
    return (d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def fisher_exact(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided p-value of Fisher's exact test that the two samples share one rate: the
    probability, given the margins, of every table no more likely than the observed one."""
    total, successes = n1 + n2, k1 + k2
    low, high = max(0, successes - n2), min(successes, n1)

    def probability(a: int) -> float:
        return (math.comb(n1, a) * math.comb(n2, successes - a)) / math.comb(total, successes)

    observed = probability(k1)
    p = math.fsum(q for a in range(low, high + 1)
                  if (q := probability(a)) <= observed * (1 + 1e-9))
    return min(1.0, p)


@dataclass(frozen=True)
class RateAgreement:
    """One simulated rate beside one paper rate, as two samples.

    Attributes:
        difference: simulated minus paper rate.
        low / high: Newcombe 95 % interval of the difference.
        p_value: Fisher's exact two-sided p-value of equal rates.
    """

    difference: float
    low: float
    high: float
    p_value: float

    @property
    def agrees(self) -> bool:
        """The interval of the difference holds 0 (the samples are compatible at 95 %)."""
        return self.low - 1e-12 <= 0.0 <= self.high + 1e-12

    @property
    def margin(self) -> float:
        """The largest difference either way the 95 % interval still allows: the samples
        are shown equivalent within ±``margin`` and no closer."""
        return max(abs(self.low), abs(self.high))

    @property
    def equivalent(self) -> bool:
        """The whole interval lies within ±:data:`EQUIVALENCE_MARGIN` (equivalence shown,
        not just a difference not shown)."""
        return self.margin <= EQUIVALENCE_MARGIN + 1e-12

    def describe(self) -> str:
        """``agree (equivalent within ±15 points)``, ``agree (not shown equivalent: the
        interval allows ±31 points)`` or ``DISAGREE``."""
        if not self.agrees:
            return "DISAGREE"
        if self.equivalent:
            return f"agree (equivalent within ±{100 * EQUIVALENCE_MARGIN:.0f} points)"
        return (f"agree (not shown equivalent: the interval allows ±{100 * self.margin:.0f} "
                f"points, the margin is ±{100 * EQUIVALENCE_MARGIN:.0f})")


def compare_rates(sim_k: int, sim_n: int, paper_k: int, paper_n: int) -> RateAgreement:
    """The simulation's ``sim_k`` of ``sim_n`` beside the paper's ``paper_k`` of ``paper_n``."""
    low, high = newcombe_interval(sim_k, sim_n, paper_k, paper_n)
    return RateAgreement(difference=sim_k / sim_n - paper_k / paper_n, low=low, high=high,
                         p_value=fisher_exact(sim_k, sim_n, paper_k, paper_n))


def success_rate(successes: int, n: int) -> float:
    """``successes / n``, 0 when ``n`` is 0."""
    return successes / n if n else 0.0


def rate_verdict(two_sided: RateAgreement | None, n: int, ci_low: float, ci_high: float,
                 paper: float | None) -> bool | None:
    """Whether a simulated rate agrees with a paper's: the two samples' verdict
    (:class:`RateAgreement`) where the paper's trials are known, else whether ``paper`` lies
    in the simulation's Wilson interval [``ci_low``, ``ci_high``]; ``None`` without episodes
    (``n`` = 0) or a paper rate."""
    if two_sided is not None:
        return two_sided.agrees
    if not n or paper is None:
        return None
    return ci_low - 1e-9 <= paper <= ci_high + 1e-9


def bootstrap_rank_intervals(
        sim: Sequence[tuple[float, int]], paper: Sequence[tuple[float, int]],
        statistics: Sequence[Callable[[Sequence[float], Sequence[float]], float | None]],
        draws: int = BOOTSTRAP_DRAWS, seed: int = 0) -> list[tuple[float, float] | None]:
    """95 % percentile intervals of each ``statistic(sim_rates, paper_rates)`` over redraws
    of both samples' true rates: row i's simulated rate from Beta(k + ½, n − k + ½) of its
    ``(k, n)`` in ``sim``, its paper rate likewise from ``paper``, where ``k`` may be a
    fraction (the paper's published rate times its trials: the same rate the point statistic
    uses, so point and interval share one centre). A row at 0/n varies as every other does.
    A statistic that is undefined (``None``) in a redraw is left out of it; ``None`` when it
    is undefined in every one.

    Raises:
        ValueError: ``sim`` and ``paper`` differ in length, or a ``k`` lies outside 0..n.
    """
    if len(sim) != len(paper):
        raise ValueError(f"bootstrap: {len(sim)} simulated rows against {len(paper)}")
    rng = np.random.default_rng(seed)
    sim_draws = jeffreys_draws(rng, sim, draws)
    paper_draws = jeffreys_draws(rng, paper, draws)
    out: list[tuple[float, float] | None] = []
    for statistic in statistics:
        values = [v for s, p in zip(sim_draws, paper_draws, strict=True)
                  if (v := statistic(list(s), list(p))) is not None]
        out.append((float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5)))
                   if values else None)
    return out


def jeffreys_draws(rng: np.random.Generator, samples: Sequence[tuple[float, int]],
                   draws: int) -> np.ndarray:
    """``draws`` × rows true rates, row i drawn from Beta(k + ½, n − k + ½) of its ``(k, n)``
    (``k`` may be fractional).

    Raises:
        ValueError: a row has no trials or its ``k`` lies outside 0..n.
    """
    for k, n in samples:
        if n <= 0 or not -1e-9 <= k <= n + 1e-9:
            raise ValueError(f"jeffreys_draws: {k} successes of {n} trials")
    k = np.clip(np.array([float(k) for k, _ in samples]), 0.0, None)
    n = np.array([float(n) for _, n in samples])
    k = np.minimum(k, n)
    return rng.beta(k + JEFFREYS, n - k + JEFFREYS, size=(draws, len(samples)))


def leave_one_out(predicted: Sequence[float], paper: Sequence[float],
                  statistic: Callable[[Sequence[float], Sequence[float]], float | None]
                  ) -> tuple[float, float] | None:
    """The lowest and highest ``statistic`` over the row sets with one row left out
    (``None`` when it is undefined on all of them, or with fewer than three rows)."""
    if len(predicted) < 3:
        return None
    values = [v for i in range(len(predicted))
              if (v := statistic([*predicted[:i], *predicted[i + 1:]],
                                 [*paper[:i], *paper[i + 1:]])) is not None]
    return (min(values), max(values)) if values else None


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
    mx, my = fmean(rx), fmean(ry)
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
    return fmean(worst)
