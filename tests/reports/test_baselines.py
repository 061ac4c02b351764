"""The arithmetic baselines read the shipped profiles; scores and the one-line verdict."""

from __future__ import annotations

import pytest

from agentic_env.harness.paper_tables import PaperRow
from agentic_env.oracle.profile import load_profile
from agentic_env.reports.baselines import (
    TABLE_ONE_BASELINES,
    Score,
    baseline_rate,
    score,
    what_it_adds,
)


def test_the_open_loop_product_uses_the_rows_own_detector() -> None:
    checker6, product = TABLE_ONE_BASELINES
    pro = load_profile("gemini-3-pro").modules
    sam = load_profile("langsam").modules["detector"].success.value
    row = PaperRow(label="Gemini 3 Pro + LangSAM", model="emulated:gemini-3-pro",
                   modules=(("detector", "emulated:langsam"),))
    c, p = pro["checker"].success.value, pro["parser"].success.value
    assert baseline_rate(row, checker6) == pytest.approx(c ** 6)
    assert baseline_rate(row, product) == pytest.approx(p * c ** 6 * sam ** 3)
    assert baseline_rate(PaperRow(label="x", model="sim-oracle"), product) is None


def test_score_and_what_the_simulation_adds() -> None:
    paper = [0.75, 0.1, 0.5, 0.0]
    perfect = score("simulation", [0.7, 0.1, 0.5, 0.05], paper)
    assert perfect.spearman == pytest.approx(1.0) and perfect.mmrv == 0.0
    assert perfect.mae == pytest.approx(0.025)
    worse = score("b", [0.9, 0.8, 0.5, None], paper)
    assert worse.rows == 3
    assert what_it_adds(perfect, [worse]).startswith("The simulation beats every baseline on ρ")
    assert "adds nothing yet" in what_it_adds(worse, [perfect])
    assert "No comparison" in what_it_adds(Score("s", 0, None, None, None), [worse])
    flat = score("simulation", [0.0, 0.0, 0.0, 0.0], paper)
    assert flat.spearman is None and "it ranks nothing" in what_it_adds(flat, [worse])
    assert "ranks nothing" not in what_it_adds(perfect, [worse])


def test_the_run_calls_baseline_uses_each_episodes_own_calls() -> None:
    from agentic_env.reports.baselines import run_calls_rate

    pro = load_profile("gemini-3-pro").modules
    c, p = pro["checker"].success.value, pro["parser"].success.value
    episodes = [{"checker": 6, "parser": 1}, {"checker": 2, "no_such_role": 4}]
    assert run_calls_rate("emulated:gemini-3-pro", {}, episodes) == pytest.approx(
        (c ** 6 * p + c ** 2) / 2)
    # a role answered by the perfect oracle cannot err
    assert run_calls_rate("emulated:gemini-3-pro", {"checker": "sim-oracle"},
                          episodes) == pytest.approx((p + 1.0) / 2)
    assert run_calls_rate("sim-oracle", {}, episodes) is None
    assert run_calls_rate("emulated:gemini-3-pro", {}, []) is None
