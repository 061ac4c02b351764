"""Two-sided agreement: Newcombe's interval and Fisher's test on published cases, the
bootstrap over both samples and leave-one-row-out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentic_env.reports.agreement import (
    EQUIVALENCE_MARGIN,
    bootstrap_rank_intervals,
    compare_rates,
    fisher_exact,
    jeffreys_draws,
    leave_one_out,
    newcombe_interval,
)
from agentic_env.reports.paper_tables import mmrv, spearman


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


def test_paper_tables_resample_the_rate_the_point_uses(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from agentic_env.harness.paper_tables import PaperTable
    from agentic_env.reports import paper_tables

    seen: list[object] = []

    def spy(sim: object, paper: object, statistics: object) -> list[None]:
        seen.append(paper)
        return [None, None]

    monkeypatch.setattr(paper_tables, "bootstrap_rank_intervals", spy)
    table = PaperTable.from_dict({"id": "t", "source": "T", "trials": 9, "rows": [
        {"label": "a", "model": "m1", "success": 0.944},
        {"label": "b", "model": "m2", "success": 0.5}]})
    episodes = [{"model": m, "success": i < 5} for m in ("m1", "m2") for i in range(9)]
    paper_tables.compare(table, episodes)
    assert seen == [[(pytest.approx(0.944 * 9), 9), (4.5, 9)]]


def test_agree_carries_its_equivalence_margin() -> None:
    weak = compare_rates(10, 20, 10, 20)
    assert weak.agrees and not weak.equivalent and weak.margin > 0.25
    assert weak.describe().startswith("agree (not shown equivalent: the interval allows ±")
    strong = compare_rates(500, 1000, 500, 1000)
    assert strong.equivalent
    assert strong.describe() == f"agree (equivalent within ±{100 * EQUIVALENCE_MARGIN:.0f} " \
        "points)"
    assert compare_rates(18, 20, 2, 20).describe() == "DISAGREE"
