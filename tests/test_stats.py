"""The statistics of a verdict on known inputs: Wilson intervals, Newcombe's interval and
Fisher's test on published cases, Spearman and SIMPLER's MMRV on hand-computed cases, the
bootstrap over both samples and leave-one-row-out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentic_env.stats import (
    EQUIVALENCE_MARGIN,
    bootstrap_rank_intervals,
    compare_rates,
    fisher_exact,
    jeffreys_draws,
    leave_one_out,
    mmrv,
    newcombe_interval,
    ranks,
    spearman,
    wilson_interval,
)


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    # Reference values (Wilson 1927; e.g. R's prop.test(correct=FALSE) / statsmodels).
    (0, 10, 0.0, 0.2775327),
    (10, 10, 0.7224673, 1.0),
    (5, 10, 0.2365931, 0.7634069),
    (15, 20, 0.5312991, 0.8881383),
    (1, 3, 0.0614919, 0.7923403),
])
def test_wilson_interval_matches_reference_values(k, n, low, high):
    assert wilson_interval(k, n) == pytest.approx((low, high), abs=1e-6)


def test_wilson_interval_edge_cases():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    # exactly 0 and 1 at no and all successes: a plot's error bars (rate - low) never go
    # negative (rounding put the bound a hair above 0 for e.g. n = 11)
    assert all(wilson_interval(0, n)[0] == 0.0 for n in range(1, 100))
    assert all(wilson_interval(n, n)[1] == 1.0 for n in range(1, 100))
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(4, 3)
    for n in (10, 13):  # all or none: exact bounds (error bars never go negative)
        assert wilson_interval(n, n)[1] == 1.0
        assert wilson_interval(0, n)[0] == 0.0


def test_newcombe_matches_the_published_example() -> None:
    # Newcombe (1998), Table II, example (a): 56/70 - 48/80 -> 0.0524 to 0.3339 (method 10)
    low, high = newcombe_interval(56, 70, 48, 80)
    assert low == pytest.approx(0.0524, abs=5e-4)
    assert high == pytest.approx(0.3339, abs=5e-4)


def test_fisher_exact_by_hand() -> None:
    # 20/20 against 15/20: the two extreme tables are the only ones as unlikely
    one = math.comb(20, 15) / math.comb(40, 35)
    assert fisher_exact(20, 20, 15, 20) == pytest.approx(2 * one)
    assert fisher_exact(0, 20, 0, 20) == pytest.approx(1.0)
    assert fisher_exact(5, 20, 5, 20) == pytest.approx(1.0)


def test_a_zero_paper_row_agrees_with_a_few_simulated_successes() -> None:
    """The paper's 0/20 is a sample too: 2/20 simulated is compatible with it, 8/20 not."""
    assert compare_rates(2, 20, 0, 20).agrees
    assert not compare_rates(8, 20, 0, 20).agrees
    assert compare_rates(2, 20, 0, 20).difference == pytest.approx(0.1)


def test_bootstrap_over_both_samples_widens_with_fewer_trials() -> None:
    sim = [(18, 20), (10, 20), (3, 20), (1, 20)]
    paper = [(15, 20), (10, 20), (5, 20), (0, 20)]
    (rho20, mmrv20), = [tuple(bootstrap_rank_intervals(sim, paper, (spearman, mmrv)))]
    small = [(round(k / 4), 5) for k, _ in paper]
    rho5, _ = bootstrap_rank_intervals(sim, small, (spearman, mmrv))
    assert rho20 is not None and mmrv20 is not None and rho5 is not None
    assert rho20[0] <= spearman([k / n for k, n in sim], [k / n for k, n in paper]) <= rho20[1]
    assert rho5[1] - rho5[0] > rho20[1] - rho20[0]
    assert bootstrap_rank_intervals(sim, paper, (spearman,), seed=1) == \
        bootstrap_rank_intervals(sim, paper, (spearman,), seed=1)


def test_leave_one_out_spans_the_statistic_without_each_row() -> None:
    predicted, paper = [0.9, 0.5, 0.1, 0.3], [0.8, 0.4, 0.2, 0.0]
    low, high = leave_one_out(predicted, paper, spearman)
    assert low < high == pytest.approx(1.0)  # dropping the misordered row orders the rest
    assert leave_one_out([0.1, 0.2], [0.1, 0.2], spearman) is None


def test_jeffreys_draws_let_rows_at_zero_and_n_vary() -> None:
    """Binomial redraws at 0/20 or 20/20 never move: every redraw of these rows was the same
    table, so the interval collapsed to a point; Jeffreys draws of the true rates vary."""
    sim = [(0, 20), (0, 20), (20, 20)]
    paper = [(0, 20), (20, 20), (20, 20)]
    (low, high), = bootstrap_rank_intervals(sim, paper, (mmrv,))
    assert low < high


def test_the_bootstrap_is_centred_on_the_published_rate() -> None:
    """A fractional paper count (0.944 of 9 trials = 8.5) is drawn about 8.5, not 8."""
    rng = np.random.default_rng(0)
    draws = jeffreys_draws(rng, [(0.944 * 9, 9)], 20000)
    assert float(draws.mean()) == pytest.approx((0.944 * 9 + 0.5) / 10, abs=0.005)
    with pytest.raises(ValueError):
        jeffreys_draws(rng, [(11, 10)], 5)


def test_agree_carries_its_equivalence_margin() -> None:
    weak = compare_rates(10, 20, 10, 20)
    assert weak.agrees and not weak.equivalent and weak.margin > 0.25
    assert weak.describe().startswith("agree (not shown equivalent: the interval allows ±")
    strong = compare_rates(500, 1000, 500, 1000)
    assert strong.equivalent
    assert strong.describe() == f"agree (equivalent within ±{100 * EQUIVALENCE_MARGIN:.0f} " \
        "points)"
    assert compare_rates(18, 20, 2, 20).describe() == "DISAGREE"


def test_ranks_average_ties() -> None:
    assert ranks([3, 1, 3]) == [2.5, 1.0, 2.5]
    assert ranks([0.1, 0.0, 0.0, 0.0]) == [4.0, 2.0, 2.0, 2.0]


def test_spearman_on_hand_computed_cases() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # d = (0, 1, 1): 1 - 6 * 2 / (3 * 8) = 0.5
    assert spearman([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)
    # ties: ranks (1.5, 1.5, 3, 4) and (2, 1, 3, 4): 4.5 / sqrt(4.5 * 5)
    assert spearman([0.0, 0.0, 0.5, 0.75], [0.1, 0.0, 0.5, 0.75]) == pytest.approx(
        4.5 / (4.5 * 5) ** 0.5)
    assert spearman([1.0], [2.0]) is None
    assert spearman([1, 1, 1], [1, 2, 3]) is None
    with pytest.raises(ValueError, match="3 values against 2"):
        spearman([1, 2, 3], [1, 2])


def test_mmrv_on_hand_computed_cases() -> None:
    # the same order: no violation
    assert mmrv([0.9, 0.5, 0.1], [0.75, 0.5, 0.0]) == 0.0
    # rows 1 and 2 swapped (real gap 0.4): row 0 violates nothing, rows 1 and 2 0.4 each
    assert mmrv([0.9, 0.5, 0.1], [0.75, 0.10, 0.50]) == pytest.approx(0.8 / 3)
    # a simulated tie against a real order counts (strict, as SIMPLER's code): only from
    # the row the real runs put higher
    assert mmrv([0.5, 0.5], [0.2, 0.6]) == pytest.approx(0.2)
    # a violation weighs the real gap, the worst per row
    assert mmrv([0.1, 0.2, 0.3], [0.3, 0.2, 0.1]) == pytest.approx((0.2 + 0.1 + 0.2) / 3)
    with pytest.raises(ValueError):
        mmrv([], [])


def test_a_rate_verdict_is_two_sided_where_it_can_be_and_the_interval_otherwise() -> None:
    from agentic_env.stats import compare_rates, rate_verdict, success_rate

    assert success_rate(3, 4) == 0.75 and success_rate(0, 0) == 0.0
    two_sided = compare_rates(9, 10, 1, 10)  # 90 % against 10 %: apart
    assert rate_verdict(two_sided, 10, 0.0, 1.0, 0.1) is False  # the samples decide
    assert rate_verdict(None, 10, 0.5, 0.8, 0.6) is True
    assert rate_verdict(None, 10, 0.5, 0.8, 0.81) is False
    assert rate_verdict(None, 0, 0.0, 1.0, 0.5) is None
    assert rate_verdict(None, 10, 0.0, 1.0, None) is None
