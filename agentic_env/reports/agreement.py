"""Two-sided agreement between a simulated sample and a paper's sample.

A paper's success rate over its own trials is a sample too (AgenticLab's Table I rows are
k of 20 trials), so a verdict compares two binomial samples rather than asking whether the
paper's rate lies in the simulation's interval: :func:`newcombe_interval` bounds the
difference of the two rates (Newcombe 1998, "Interval estimation for the difference between
independent proportions", Stat. Med. 17, method 10: built from the two Wilson intervals) and
:func:`fisher_exact` gives the exact two-sided p-value of equal rates; beside "agree",
:attr:`RateAgreement.margin` says how large a difference the interval still allows (an
"agree" at ±30 points is weak) and :attr:`RateAgreement.equivalent` whether it lies within the
pre-stated :data:`EQUIVALENCE_MARGIN`. Across rows, :func:`bootstrap_rank_intervals` redraws
both samples' true rates from their Jeffreys posteriors (Beta(k + ½, n − k + ½), so a row at
0/n or n/n varies too), centred on the very rates the point statistic uses (the paper's
published rate times its trials, not a rounded count), to put 95 % intervals on Spearman's ρ
and SIMPLER's MMRV, and :func:`leave_one_out` shows how far one row moves a statistic
estimated from the rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from agentic_env.reports.metrics import wilson_interval

#: Bootstrap redraws of both samples.
BOOTSTRAP_DRAWS = 2000
#: The difference of two rates that counts as "the same" (equivalence): ±15 points, stated
#: before any comparison (a tenth of the 0–100 % scale and a half of the widest 20-trial
#: Newcombe half-width), not fitted to any run.
EQUIVALENCE_MARGIN = 0.15
#: The Jeffreys prior's pseudo-counts (Beta(½, ½)).
JEFFREYS = 0.5


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
