"""The simulation against the arithmetic, matched for noise and paired by row."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentic_env.reports import noise_matched
from agentic_env.reports.noise_matched import Matched, binomial_loglik, jeffreys_rate

PAPER = [(15.0, 20), (10.0, 20), (4.0, 20), (0.0, 20)]


def test_the_likelihood_and_the_smoothing() -> None:
    assert jeffreys_rate(0, 20) == pytest.approx(0.5 / 21)
    assert binomial_loglik(3, 10, 0.2) == pytest.approx(
        math.log(math.comb(10, 3) * 0.2 ** 3 * 0.8 ** 7))
    assert math.isfinite(binomial_loglik(2, 20, 0.0))  # a 0 rate is kept inside (0, 1)
    assert binomial_loglik(8.5, 9, 0.9) > binomial_loglik(8.5, 9, 0.5)


def test_a_simulation_equal_to_the_arithmetic_beats_it_only_by_chance() -> None:
    """Matched for noise, a simulator whose true rates are the arithmetic's is one draw of
    the same distribution: it 'beats' it in about 5 % of its runs (on rho it loses most)."""
    arithmetic = [0.75, 0.5, 0.2, 0.05]
    rng = np.random.default_rng(7)
    outcomes = []
    for _ in range(200):
        sample = [(int(k), 20) for k in rng.binomial(20, arithmetic)]
        result, = noise_matched.compare(sample, PAPER, {"a": arithmetic}, draws=400)
        outcomes.append(result.outcome)
    assert outcomes.count("beats") / len(outcomes) < 0.1
    assert outcomes.count("tie") / len(outcomes) > 0.8


def test_a_better_simulation_wins_and_a_worse_one_loses() -> None:
    arithmetic = [0.75, 0.5, 0.2, 0.0]
    on_paper = [(15, 20), (10, 20), (4, 20), (0, 20)]
    far = [0.2, 0.9, 0.9, 0.6]
    won, = noise_matched.compare(on_paper, PAPER, {"far": far})
    assert won.outcome == "beats" and won.simulation > won.matched
    lost, = noise_matched.compare([(4, 20), (18, 20), (18, 20), (12, 20)], PAPER,
                                  {"a": arithmetic})
    assert lost.outcome == "beaten"
    skipped, = noise_matched.compare(on_paper, [None] * 4, {"a": arithmetic})
    assert skipped.rows == 0 and skipped.outcome == "none"
    partial, = noise_matched.compare(on_paper, PAPER, {"a": [0.7, None, 0.2, 0.0]})
    assert partial.rows == 3
    with pytest.raises(ValueError):
        noise_matched.compare(on_paper, PAPER, {"a": [0.5]})


def test_the_verdict_is_said_whichever_way_it_comes_out() -> None:
    beats = Matched("b", 8, -20.0, -30.0, -31.0, 0.99)
    tie = Matched("t", 8, -20.0, -19.0, -21.0, 0.5)
    assert "BEATS the arithmetic (every baseline)" in noise_matched.verdict_line("T", [beats])
    assert "does NOT beat the arithmetic" in noise_matched.verdict_line("T", [tie])
    mixed = noise_matched.verdict_line("Table I", [beats, tie])
    assert mixed.startswith("Table I, noise-matched") and "beats b but NOT t" in mixed
    assert "BEATEN" in Matched("x", 8, -40.0, -20.0, -21.0, 0.01).describe()
    assert "no noise-matched comparison" in noise_matched.verdict_line("T", [])
