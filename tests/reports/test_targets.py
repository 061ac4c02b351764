"""Target tables: parsing, the per-row arithmetic read from the shipped profiles, two-sided
verdicts and time against hand-computed values, the departure line without paper rates, the
shipped target files, and the report and ``predict check`` showing them."""

from __future__ import annotations

import pathlib

import pytest

from agentic_env.cli.predict import main as predict_main
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.db import Finished, ResultStore
from agentic_env.harness.episode import EpisodeResult
from agentic_env.harness.sweep import parse_sweep
from agentic_env.oracle.profile import load_profile
from agentic_env.reports import ledger
from agentic_env.reports.baselines import module_rate, open_loop_rate, open_loop_seconds
from agentic_env.reports.report import write_report
from agentic_env.reports.scorecard import scorecard
from agentic_env.reports.target_section import row_cells
from agentic_env.reports.targets import compare, load_targets, parse_target, target_for
from agentic_env.stats import compare_rates

ROOT = pathlib.Path(__file__).resolve().parents[2]
FLASH = "emulated:gemini-3-flash"
GPT = "emulated:gpt-5.2"

TABLE = {
    "id": "t", "source": "Paper Table 9", "predictions": ["p"], "trials": 10,
    "time": "model_s",
    "baselines": [{"name": "checker⁶", "roles": ["checker"], "source": "six checks"},
                  {"name": "open loop", "roles": "all", "source": "each call once"}],
    "not_applicable": ["goal²: no goal checker here"],
    "rows": [
        {"label": "Flash", "model": FLASH, "where": {"agent_options": "default"},
         "calls": {"parser": 1, "checker": 6}, "success": 0.8, "time_s": 100},
        {"label": "GPT checker", "model": "sim-oracle", "modules": {"checker": GPT},
         "where": {"agent_options": "default"}, "calls": {"checker": 6}, "success": 0.1,
         "trials": 20, "time_s": 30},
        {"label": "unprinted", "model": FLASH, "where": {"agent_options": "mode=\"tap\""},
         "calls": {"checker": 6}},
    ]}


def _episode(model: str, success: bool, model_s: float, options: str = "default"
             ) -> dict[str, object]:
    return {"model": model, "agent_options": options, "success": success,
            "model_s": model_s}


def _rate(name: str, module: str) -> float:
    return load_profile(name).modules[module].success.value


def test_parsing_refuses_what_it_cannot_score() -> None:
    with pytest.raises(InvalidConfigError, match="bogus"):
        parse_target({**TABLE, "bogus": 1})
    with pytest.raises(InvalidConfigError, match="predictions"):
        parse_target({k: v for k, v in TABLE.items() if k != "predictions"})
    bad_rate = {**TABLE, "rows": [{**TABLE["rows"][0], "success": 75}]}
    with pytest.raises(InvalidConfigError, match=r"rate in \[0, 1\]"):
        parse_target(bad_rate)
    with pytest.raises(InvalidConfigError, match="positive count"):
        parse_target({**TABLE, "trials": 0})


def test_rows_are_scored_two_sided_beside_the_profiles_arithmetic() -> None:
    table = parse_target(TABLE)
    episodes = ([_episode(FLASH, i < 7, 120.0) for i in range(10)]
                + [_episode("sim-oracle [checker=emulated:gpt-5.2]", i < 3, 20.0)
                   for i in range(10)]
                + [_episode(FLASH, True, 1.0, options="reflector=false")])  # no row's
    result = compare(table, episodes)
    flash, gpt, unprinted = result.rows
    assert (flash.n, flash.successes, flash.trials) == (10, 7, 10)
    assert flash.two_sided == compare_rates(7, 10, 8, 10) and flash.agrees is True
    assert (gpt.successes, gpt.trials) == (3, 20)  # the row's own trial count
    assert gpt.two_sided == compare_rates(3, 10, 2, 20)
    c_flash, c_gpt = _rate("gemini-3-flash", "checker"), _rate("gpt-5.2", "checker")
    assert flash.baselines == pytest.approx((c_flash ** 6,
                                             _rate("gemini-3-flash", "parser") * c_flash ** 6))
    assert gpt.baselines[0] == pytest.approx(c_gpt ** 6)
    assert gpt.baselines[1] == pytest.approx(c_gpt ** 6)  # only the checker is called
    assert flash.time_s == 120.0 and flash.time_agrees is True  # 1.2 within 1.5
    assert gpt.time_s == 20.0 and gpt.time_agrees is True
    assert unprinted.n == 0 and unprinted.agrees is None and unprinted.two_sided is None
    sim, checker6, _ = result.scores
    assert (sim.rows, checker6.rows) == (2, 2)
    assert sim.mae == pytest.approx((0.1 + 0.2) / 2)
    assert result.adds.startswith(("The simulation", "No comparison"))
    untimed = compare(parse_target({**TABLE, "time": None}), episodes).rows[0]
    assert untimed.time_s is None and len(row_cells(untimed, False)) == 6 + 2


def test_without_paper_rates_the_line_says_how_far_the_arithmetic_is() -> None:
    table = parse_target({**TABLE, "rows": [{**TABLE["rows"][1], "success": None}]})
    result = compare(table, [_episode("sim-oracle [checker=emulated:gpt-5.2]", True, 1.0)])
    c6 = _rate("gpt-5.2", "checker") ** 6
    assert result.scores[0].rows == 0
    assert "prints no measured rate" in result.adds
    assert f"checker⁶ {1.0 - c6:.2f}" in result.adds


def test_turn_roles_and_seconds_follow_the_emulation() -> None:
    profile = load_profile("claude-4.5-opus")
    parser = profile.modules["parser"]
    share = profile.planner_turn_share.value
    turn = module_rate("emulated:claude-4.5-opus", "task_executor")
    assert turn == pytest.approx(1 - (1 - parser.success.value) * share)
    assert module_rate("emulated:claude-4.5-opus", "parser") == parser.success.value
    calls = {"task_planner": 4, "task_executor": 3}
    assert open_loop_rate("emulated:claude-4.5-opus", {}, calls) == pytest.approx(turn ** 7)
    assert open_loop_seconds("emulated:claude-4.5-opus", {}, calls) == pytest.approx(
        7 * parser.seconds.value)
    assert open_loop_rate("emulated:claude-4.5-opus", {}, {}) is None
    assert open_loop_seconds("sim-oracle", {}, {"checker": 6}) is None


def test_the_shipped_targets_name_predictions_of_the_ledger() -> None:
    tables = load_targets(ROOT)
    assert {"alrm-table3", "mallvi-table1", "agenticlab-sec6a"} <= {t.id for t in tables}
    ledger_ids = {p.id for p in ledger.all_predictions(ROOT)}
    for table in tables:
        assert set(table.predictions) <= ledger_ids, table.id
        for row in table.rows:  # every row's arithmetic is computable from the profiles
            assert all(b is not None for b in
                       (open_loop_rate(row.model, dict(row.modules), row.baseline_calls(base))
                        for base in table.baselines if row.baseline_calls(base))), row.label
        assert table.rows or table.not_applicable, table.id
    alrm = target_for(ROOT, "alrm-table3-emulated")
    assert alrm is not None and alrm.time == "model_s"
    assert target_for(ROOT, "no-such-prediction") is None


def test_two_tables_naming_one_prediction_are_refused(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "predictions" / "targets"
    folder.mkdir(parents=True)
    for name in ("a", "b"):
        (folder / f"{name}.yaml").write_text(f"id: {name}\nsource: s\npredictions: [p]\n")
    with pytest.raises(InvalidConfigError, match="keep one"):
        target_for(tmp_path, "p")
    (folder / "b.yaml").write_text("id: b\nsource: [unclosed\n")
    with pytest.raises(InvalidConfigError, match="not valid YAML"):
        load_targets(tmp_path)


def _database(tmp_path: pathlib.Path) -> pathlib.Path:
    sweep = parse_sweep({"grid": {"tasks": ["sorting"], "agents": ["agenticlab"],
                                  "models": [FLASH, {"model": "sim-oracle",
                                                     "modules": {"checker": GPT}}],
                                  "seeds": 4}})
    db = tmp_path / "results.db"
    with ResultStore(db) as store:
        for spec in sweep.specs:
            won = spec.model == FLASH and spec.seed < 3
            result = EpisodeResult(spec=spec, success=won, progress=1.0 if won else 0.0,
                                   score=1.0 if won else 0.0, wall_s=1.0, sim_s=40.0,
                                   failure=None if won else "checker")
            store.record(Finished(key=spec.key(), result=result, run_s=0.1, worker="test"))
    return db


def test_report_and_check_show_the_target(tmp_path: pathlib.Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    db = _database(tmp_path)
    table = parse_target(TABLE)
    text = write_report(db, tmp_path / "report", target=table).markdown.read_text()
    assert "## Paper Table 9 beside the simulation's prediction" in text
    assert "| Flash | 80.0 % of 10 | 3/4 = 75.0 % [" in text
    assert "| GPT checker | 10.0 % of 20 | 0/4 = 0.0 % [" in text
    assert "Does not apply: goal²: no goal checker here" in text
    assert "First failing module (Fig. 5's shape)" in text
    assert "| model emulated:gemini-3-flash | 1 | 1 |" in text  # booked to the checker
    assert "| model sim-oracle [checker=emulated:gpt-5.2] | 4 | 4 |" in text
    # predict check reads the newest run of the ledger
    (tmp_path / "predictions" / "targets").mkdir(parents=True)
    (tmp_path / "predictions" / "targets" / "t.yaml").write_text(
        __import__("yaml").safe_dump(TABLE, allow_unicode=True))
    prediction = ledger.record_run(ledger.Prediction(
        id="p", target="Paper Table 9", sweep="s.yaml", seeds={"start": 0, "count": 4},
        entries=(ledger.Entry(1, "2026-01-01T00:00:00+00:00", "first freeze", False, {}),)),
        "results.db", "summary")
    lines = scorecard(tmp_path, prediction)
    assert lines[0].startswith("newest run (revision 1")
    assert any(line.startswith("  Flash: paper 80.0 % of 10, simulation 3/4") for line in lines)
    assert any("does not apply: goal²" in line for line in lines)
    assert ("  first failures (Fig. 5's shape), model sim-oracle [checker=emulated:gpt-5.2]: "
            "checker 4") in lines
    gone = ledger.record_run(prediction, "missing.db", "x")
    assert "not in this checkout" in scorecard(tmp_path, gone)[1]
    # predict report rewrites the newest run's report with the target as it stands now
    (tmp_path / "s.yaml").write_text("name: s\ngrid: {tasks: [sorting]}\n")
    ledger.save_prediction(tmp_path, prediction)
    (tmp_path / "report" / "report.md").unlink()
    assert predict_main(["--root", str(tmp_path), "report", "p"]) == 0
    assert "Paper Table 9 beside" in (tmp_path / "report" / "report.md").read_text()
    ledger.save_prediction(tmp_path, ledger.Prediction(
        id="never", target="T", sweep="s.yaml", seeds={"start": 0, "count": 1}))
    assert predict_main(["--root", str(tmp_path), "report", "never"]) == 2
    assert "was never run" in capsys.readouterr().out
