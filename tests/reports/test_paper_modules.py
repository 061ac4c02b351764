"""Table II beside the module benchmark: emulating specs, per-cell checks, the text table."""

from __future__ import annotations

import pytest

from agentic_env.agents.models.registry import parse_model_spec
from agentic_env.bench.modules import MODULE_ORDER
from agentic_env.reports.paper_modules import (
    TABLE_TWO,
    compare,
    emulating_spec,
    format_comparison,
    paper_row,
)


def _instances(spec: str, module: str, successes: int, n: int) -> list[dict]:
    return [{"model": spec, "module": module, "success": i < successes} for i in range(n)]


def test_the_table_is_the_papers() -> None:
    assert len(TABLE_TWO) == 11
    flash = paper_row("gemini 3 flash")
    assert [flash.success[m] for m in MODULE_ORDER] == pytest.approx(
        [0.923, 1.0, 0.881, 0.741, 1.0])
    assert paper_row("Qwen2.5-VL-7B").success["parser"] is None
    with pytest.raises(KeyError, match="rows: Gemini 3 Pro"):
        paper_row("GPT-3")


def test_molmo_is_the_tables_last_row() -> None:
    """The paper's last row, Molmo-7B: "–" for the task parser and grasp planner, 33.9 / 76.2
    / 43.8 % for the action checker, detector (pointing) and goal checker."""
    molmo = TABLE_TWO[-1]
    assert molmo == paper_row("molmo-7b") and molmo.model == "Molmo-7B"
    assert molmo.success["parser"] is None and molmo.success["grasp"] is None
    assert [molmo.success[m] for m in ("checker", "detector", "goal")] == pytest.approx(
        [0.339, 0.762, 0.438])
    rates = parse_model_spec(emulating_spec(molmo)).error_rates
    assert rates == pytest.approx({"parser": 1.0, "checker": 0.661, "detector": 0.238,
                                   "grasp": 1.0, "goal": 0.562})


def test_emulating_spec_injects_the_failure_rates() -> None:
    spec = emulating_spec(paper_row("Gemini 3 Flash"))
    rates = parse_model_spec(spec).error_rates
    assert rates == pytest.approx({"parser": 0.077, "checker": 0.0, "detector": 0.119,
                                   "grasp": 0.259, "goal": 0.0})
    assert parse_model_spec(emulating_spec(paper_row("Qwen2.5-VL-7B"))).error_rates[
        "parser"] == 1.0


def test_cells_agree_within_the_interval_and_rows_need_every_cell() -> None:
    row = paper_row("Gemini 3 Flash")
    spec = emulating_spec(row)
    instances = (_instances(spec, "parser", 37, 40) + _instances(spec, "checker", 40, 40)
                 + _instances(spec, "detector", 20, 40) + _instances(spec, "goal", 40, 40))
    (checked_row, cells), = compare(instances, [row])
    verdicts = {c.module: c.verdict.agrees for c in cells}
    assert verdicts == {"parser": True, "checker": True, "detector": False, "grasp": None,
                        "goal": True}
    assert [c.n for c in cells] == [40, 40, 40, 0, 40]
    text = format_comparison([(checked_row, cells)])
    line = text.splitlines()[-1]
    assert line.startswith("Gemini 3 Flash") and line.endswith("DISAGREE")
    assert "88.1 / 50.0 (40) DISAGREE" in line and "74.1 / no data" in line
    agreeing = [i for i in instances if i["module"] != "detector"]
    agreeing += _instances(spec, "detector", 35, 40)
    (_, cells), = compare(agreeing, [row])
    assert all(c.verdict.agrees in (True, None) for c in cells)


@pytest.mark.slow
@pytest.mark.parametrize(("profile", "row"), [("gemini-3-flash", "Gemini 3 Flash"),
                                              ("gpt-4o", "GPT-4o")])
def test_an_emulated_profile_measures_its_table_two_row(tmp_path, profile: str,
                                                        row: str) -> None:
    """``agentic-env modules --model emulated:P`` on the calibration replica's own tasks and
    seeds reproduces the row P was built from for the modules calibrated on that replica
    (action checker, grasp judge, goal checker): success within the 95 % Wilson interval.
    Agreement by construction (the normalisers were solved on these rollouts' recorded
    situations): what it checks is that the live path (rendered frame -> visible pixels,
    clutter -> cause model) computes what the replica records. Not compared: the parser (one
    instruction per rollout: 10 here, too few for an interval) and the detector (calibrated
    on the sorting and stacking sightings of ``_benchmark_sightings.toml``, not on these
    tasks, where its rate follows their images)."""
    from agentic_env.bench.modules import run_module_bench
    from agentic_env.contract.seeds import CALIBRATION_SEEDS
    from agentic_env.harness.db import ResultStore
    from agentic_env.oracle.replica import REPLICA_TASKS

    spec = f"emulated:{profile}"
    with ResultStore(tmp_path / "m.db") as store:
        run_module_bench(spec, REPLICA_TASKS, "lab", CALIBRATION_SEEDS[:2], store)
        instances = [i for i in store.module_instances()
                     if i["module"] in ("checker", "grasp", "goal")]
    (_, cells), = compare(instances, [paper_row(row)], {row: spec})
    checked = {cell.module: cell.verdict.agrees for cell in cells if cell.n}
    assert checked == {"checker": True, "grasp": True, "goal": True}, format_comparison(
        compare(instances, [paper_row(row)], {row: spec}))


def test_the_rates_are_the_profiles_one_copy() -> None:
    """Each cell is its profile's number read from the row (the paper's "–" the profile's 0
    with its note), and a profile that does not copy a Table II row gives none."""
    from agentic_env.errors import InvalidConfigError
    from agentic_env.oracle.profile import load_profile
    from agentic_env.reports.paper_modules import ROWS, _row

    assert [row.model for row in TABLE_TWO] == list(ROWS)
    gpt = load_profile("gpt-4o")
    assert paper_row("GPT-4o").success == {m: gpt.modules[m].success.value for m in MODULE_ORDER}
    qwen = load_profile("qwen2.5-vl-7b").modules["parser"].success
    assert qwen.value == 0.0 and paper_row("Qwen2.5-VL-7B").success["parser"] is None
    assert paper_row("Qwen2.5-VL-7B").success["goal"] == pytest.approx(0.5)
    with pytest.raises(InvalidConfigError, match="not read from AgenticLab Table II"):
        _row(load_profile("gpt-5-cap"))
