"""A paper table compared two-sided: the verdict, the Wilson column, cost tolerance, the
bootstrap and leave-one-out columns, the baselines and the ledger in the report's section."""

from __future__ import annotations

from agentic_env.harness.paper_tables import PaperTable, compare
from agentic_env.reports.blocks import Para, Table
from agentic_env.reports.ledger import Prediction
from agentic_env.reports.paper_section import paper_table_section

TABLE = PaperTable.from_dict({
    "id": "agenticlab-table1", "source": "AgenticLab Table I", "trials": 20,
    "rows": [{"label": "Flash", "model": "emulated:gemini-3-flash", "success": 0.75,
              "time_s": 334, "tokens": 67000},
             {"label": "Max", "model": "emulated:qwen-vl-max", "success": 0.0},
             {"label": "Plus", "model": "emulated:qwen3-vl-plus", "success": 0.25,
              "time_s": 538, "tokens": 43000}]})


def _episodes(model: str, won: int, n: int = 20, time_s: float = 400.0) -> list[dict]:
    return [{"key": f"{model}/{i}", "model": model, "success": i < won, "sim_s": time_s,
             "model_s": 0.0, "input_tokens": 60000, "output_tokens": 0,
             "failure": None if i < won else "limits"} for i in range(n)]


EPISODES = (_episodes("emulated:gemini-3-flash", 17) + _episodes("emulated:qwen-vl-max", 2)
            + _episodes("emulated:qwen3-vl-plus", 5, time_s=1000.0))


def test_a_zero_paper_row_agrees_two_sided_but_not_one_sided() -> None:
    flash, weak, plus = compare(TABLE, EPISODES).rows
    assert weak.wilson_agrees is False and weak.agrees is True
    assert weak.two_sided is not None and weak.two_sided.p_value > 0.05
    assert flash.agrees and flash.time_agrees is True and flash.tokens_agree is True
    assert plus.time_agrees is False  # 1000 s against 538 s: beyond a factor 1.5
    assert weak.time_agrees is None  # the paper prints "-"
    assert compare(TABLE, EPISODES, paper_trials=None).rows[1].agrees is True  # table's 20
    one_sided = PaperTable.from_dict({**TABLE.to_dict(), "trials": None})
    assert compare(one_sided, EPISODES).rows[1].agrees is False


def test_the_comparison_carries_intervals_over_both_samples() -> None:
    comparison = compare(TABLE, EPISODES)
    assert comparison.spearman_ci is not None and comparison.mmrv_ci is not None
    assert comparison.spearman_ci[0] <= comparison.spearman <= comparison.spearman_ci[1]
    assert comparison.spearman_loo is not None


def test_the_section_sets_the_baselines_beside_the_simulation_and_shows_the_ledger() -> None:
    prediction = Prediction(id="t1", target="AgenticLab Table I", sweep="s.yaml",
                            seeds={"start": 1000, "count": 20})
    blocks = paper_table_section(compare(TABLE, EPISODES), [], EPISODES, prediction)
    tables = [b for b in blocks if isinstance(b, Table)]
    predictors = [row[0] for row in tables[1].rows]
    assert predictors == ["simulation", "checker⁶", "parser × checker⁶ × detector³"]
    texts = " ".join(b.text for b in blocks if isinstance(b, Para))
    assert "The simulation" in texts  # the one line of what it adds
    assert any("Prediction ledger: t1" in getattr(b, "text", "") for b in blocks)
    breakdown = tables[2]
    assert breakdown.headers == ("row", "failed", "limits")


def test_the_section_says_whether_the_simulation_beats_the_arithmetic_noise_matched() -> None:
    """With each episode's own calls recorded, the pre-registered baseline joins the declared
    ones, and the noise-matched verdict is stated for the table."""
    with_calls = [{**e, "module_calls": {"checker": 6, "parser": 1}} for e in EPISODES]
    blocks = paper_table_section(compare(TABLE, with_calls), [], with_calls)
    tables = [b for b in blocks if isinstance(b, Table)]
    assert [row[0] for row in tables[1].rows][-1] == "run's own calls"
    texts = [b.text for b in blocks if isinstance(b, Para)]
    verdict = next(t for t in texts if t.startswith("AgenticLab Table I, noise-matched"))
    assert "beat" in verdict
    assert any(t.startswith("run's own calls: log-likelihood") for t in texts)
    cells = tables[0].rows[0]
    assert cells[5].startswith("agree (")  # the verdict carries its equivalence margin
