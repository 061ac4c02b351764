"""The simulation against each arithmetic baseline, matched for noise and paired by row.

ρ, MMRV and MAE compare a 20-seed estimate (noisy) with a baseline's exact number
(noiseless), which is unfair to the simulation: one whose true rates *equal* the baseline's
loses to it on ρ most of the time. Here both are judged by one yardstick, the binomial
log-likelihood of the paper's own k of n under the predictor's rate, summed over the same
rows (paired), and the baseline is given the simulation's noise: each of
:data:`~agentic_env.stats.BOOTSTRAP_DRAWS` draws simulates it at the
simulation's trial counts (k* ~ Binomial(n_sim, rate)) and smooths it as the simulation is
smoothed (Jeffreys: (k + ½) / (n + 1), so a 0/n row has a rate the paper's successes can
have). :func:`compare` gives, per baseline, the simulation's log-likelihood, the baseline's
exact one, the noise-matched baseline's mean and the share of draws the simulation is ahead
of it; the simulation *beats* a baseline when it is ahead in at least
:data:`BEATS_SHARE` of the draws (and is *beaten* when behind in as many), else the two cannot
be told apart at these trial counts. :func:`verdict_line` says so in one line, whichever way
it comes out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.stats import BOOTSTRAP_DRAWS, JEFFREYS

#: Share of noise-matched draws the simulation must be ahead in to beat a baseline (one-sided
#: 95 %), stated before any comparison.
BEATS_SHARE = 0.95
_EPS = 1e-9


def jeffreys_rate(k: Any, n: Any) -> Any:
    """The Jeffreys-smoothed rate (k + ½) / (n + 1) (of numbers or arrays alike)."""
    return (k + JEFFREYS) / (n + 2 * JEFFREYS)


def binomial_loglik(k: float, n: float, p: float) -> float:
    """log P(k of n | rate p), ``k`` possibly fractional (a published rate times its trials);
    ``p`` kept a hair inside (0, 1)."""
    p = min(max(p, _EPS), 1.0 - _EPS)
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log(1.0 - p))


@dataclass(frozen=True)
class Matched:
    """The simulation against one baseline over the rows both predict.

    Attributes:
        name: the baseline.
        rows: rows compared (the paper's rate and trials, episodes and a baseline rate).
        simulation: summed log-likelihood of the paper's k/n under the simulation's
            Jeffreys-smoothed rates.
        exact: the same under the baseline's own (noiseless) rates.
        matched: its mean over draws of the baseline simulated at the simulation's trials.
        ahead: share of those draws in which the simulation's log-likelihood is higher.
    """

    name: str
    rows: int
    simulation: float
    exact: float
    matched: float
    ahead: float

    @property
    def outcome(self) -> str:
        """``beats``, ``beaten`` or ``tie`` (cannot be told apart at these trial counts);
        ``none`` without rows."""
        if not self.rows:
            return "none"
        if self.ahead >= BEATS_SHARE:
            return "beats"
        if self.ahead <= 1.0 - BEATS_SHARE:
            return "beaten"
        return "tie"

    def describe(self) -> str:
        """One line: the three log-likelihoods, the share ahead and the outcome."""
        if not self.rows:
            return f"{self.name}: no row both predict"
        said = {"beats": "the simulation BEATS it",
                "beaten": "the simulation is BEATEN by it",
                "tie": "the simulation does NOT beat it (cannot be told apart at these "
                       "trial counts)"}[self.outcome]
        return (f"{self.name}: log-likelihood of the paper's k/n over {self.rows} rows: "
                f"simulation {self.simulation:.1f}, arithmetic exact {self.exact:.1f}, "
                f"arithmetic at the simulation's trials {self.matched:.1f} (mean); simulation "
                f"ahead in {100 * self.ahead:.0f} % of draws: {said}")


def compare(sim: Sequence[tuple[int, int]], paper: Sequence[tuple[float, int] | None],
            baselines: Mapping[str, Sequence[float | None]], draws: int = BOOTSTRAP_DRAWS,
            seed: int = 0) -> list[Matched]:
    """Each baseline against the simulation, over the rows with simulated episodes
    (``sim``: ``(k, n)``), the paper's ``(k, n)`` (``k``: its rate times its trials; ``None``:
    no rate or trials) and a baseline rate (``None``: it does not apply).

    Raises:
        ValueError: the sequences differ in length.
    """
    out = []
    rng = np.random.default_rng(seed)
    for name, rates in baselines.items():
        if not len(sim) == len(paper) == len(rates):
            raise ValueError(f"noise-matched: {len(sim)} simulated rows, {len(paper)} paper "
                             f"rows, {len(rates)} {name} rates")
        used = [(s, p, b) for s, p, b in zip(sim, paper, rates, strict=True)
                if s[1] > 0 and p is not None and p[1] > 0 and b is not None]
        if not used:
            out.append(Matched(name, 0, 0.0, 0.0, 0.0, 0.0))
            continue
        simulation = math.fsum(binomial_loglik(p[0], p[1], jeffreys_rate(*s))
                               for s, p, _ in used)
        exact = math.fsum(binomial_loglik(p[0], p[1], b) for _, p, b in used)
        n_sim = np.array([s[1] for s, _, _ in used])
        drawn = rng.binomial(n_sim, [b for *_, b in used], size=(draws, len(used)))
        rate = np.clip(jeffreys_rate(drawn, n_sim), _EPS, 1.0 - _EPS)
        k, n = np.array([p[0] for _, p, _ in used]), np.array([p[1] for _, p, _ in used])
        constant = math.fsum(binomial_loglik(ki, ni, 0.5) - ni * math.log(0.5)
                             for ki, ni in zip(k, n, strict=True))
        matched = constant + (k * np.log(rate) + (n - k) * np.log1p(-rate)).sum(axis=1)
        ahead = float(np.mean(simulation > matched + 1e-12))
        out.append(Matched(name, len(used), simulation, exact, float(matched.mean()), ahead))
    return out


def verdict_line(table: str, results: Sequence[Matched]) -> str:
    """One line for ``table``: whether the simulation beats the arithmetic under the
    noise-matched comparison, whichever way it comes out."""
    scored = [r for r in results if r.rows]
    if not scored:
        return f"{table}: no noise-matched comparison (no row has a paper k/n, episodes and a "\
               "baseline rate)"
    beats = [r.name for r in scored if r.outcome == "beats"]
    beaten = [r.name for r in scored if r.outcome == "beaten"]
    if len(beats) == len(scored):
        head = "the simulation BEATS the arithmetic (every baseline)"
    elif beats:
        head = (f"the simulation beats {', '.join(beats)} but NOT "
                + ", ".join(r.name for r in scored if r.outcome != "beats"))
    else:
        head = "the simulation does NOT beat the arithmetic"
    tail = f"; beaten by {', '.join(beaten)}" if beaten else ""
    return (f"{table}, noise-matched (paired log-likelihood of the paper's k/n, each baseline "
            f"simulated at the simulation's trial counts): {head}{tail}.")
