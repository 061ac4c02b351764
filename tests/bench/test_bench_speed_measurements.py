"""The speed benchmarks record into the harness's results database as measurements:
``bench-sweep`` (a real sweep of instant episodes), ``bench-real`` (a real run over the twin
devices), ``bench-robosuite`` (both sides' step counts stubbed: robosuite is no dependency)
and ``bench`` (its measurement stubbed here: its real ``--quick`` run is
``test_bench_env.py``'s) each leave one row per natural unit, keyed by benchmark and
parameters, that a run again with the same parameters replaces; the output ends with the
command that reports them, and the report shows each benchmark's table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.instant_episode import INSTANT_EPISODE

from agentic_env.bench.store import report_command
from agentic_env.cli.harness import report_main
from agentic_env.harness.db import ResultStore


def _report(db: Path, out: Path) -> str:
    assert report_main([str(db), "--out", str(out)]) == 0
    return (out / "report.md").read_text()


def _rows(db: Path) -> list[dict[str, Any]]:
    with ResultStore(db) as store:
        assert store.episodes() == []  # measurements, not episodes
        return store.measurements()


def _last_line(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().out.strip().splitlines()[-1]


def test_bench_sweep_records_the_harness_figures_of_a_real_sweep(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_env.cli.bench.sweep import main

    file = tmp_path / "tiny.yaml"
    file.write_text(yaml.safe_dump({"name": "tiny", "episode_fn": INSTANT_EPISODE,
                                    "grid": {"tasks": ["sorting"], "seeds": [0, 1, 2]}}))
    db = tmp_path / "bench_sweep.db"
    assert main([str(file), "--limit", "2", "--db", str(db)]) == 0
    printed = capsys.readouterr().out
    assert "episodes: 2" in printed and "scaling 2 vs 1 workers:" in printed
    assert printed.strip().splitlines()[-1] == (f"measurements recorded in {db}; report: "
                                                f"{report_command(db)}")
    (row,) = _rows(db)
    assert row["bench"] == "bench-sweep" and row["params"] == {"sweep": "tiny", "episodes": 2}
    figures = row["figures"]
    assert figures["episodes"] == 2 and figures["pool1_s"] > 0 and figures["pool2_s"] > 0
    assert figures["scaling"] == pytest.approx(figures["per_minute_2"] / figures["per_minute_1"])
    assert figures["direct_s_per_episode"] == pytest.approx(figures["direct_s"] / 2)
    assert row["run_s"] >= figures["pool1_s"] + figures["pool2_s"]
    text = _report(db, tmp_path / "report")
    assert "### bench-sweep:" in text
    assert f"| tiny | 2 | {figures['direct_s_per_episode']:.2f} | " in text
    assert main([str(file), "--limit", "2", "--db", str(db)]) == 0
    assert [r["key"] for r in _rows(db)] == [row["key"]]


def test_bench_real_records_the_latency_over_the_twin(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("serial")
    from agentic_env.bench import real
    from agentic_env.cli.bench.real import main

    db = tmp_path / "bench_real.db"
    assert main(["--repeats", "2", "--seed", "1", "--db", str(db)]) == 0
    printed = capsys.readouterr().out
    assert "overhead ratio RealEnv+twin / SimEnv:" in printed
    assert printed.strip().splitlines()[-1].endswith(f"report: {report_command(db)}")
    (row,) = _rows(db)
    assert row["bench"] == "bench-real" and row["params"] == {"repeats": 2, "seed": 1}
    figures = row["figures"]
    assert set(figures["paths"]) == {name.strip() for name in (
        real.SIM, real.REAL, real.CAPTURE, real.FITTING, real.READ)}
    assert all(cell["mean_ms"] > 0 for cell in figures["paths"].values())
    means = {name: cell["mean_ms"] for name, cell in figures["paths"].items()}
    assert figures["overhead_ratio"] == pytest.approx(means[real.REAL] / means[real.SIM])
    text = _report(db, tmp_path / "report")
    assert "### bench-real:" in text and f"| {figures['resolution']} | 2, seed 1 | " in text
    # The same measurement again replaces its row (its figures stubbed: 1 ms everywhere).
    monkeypatch.setattr(real, "observation_latency", lambda repeats, seed: (
        {name: [1.0, 1.0] for name in (real.SIM, real.REAL, real.CAPTURE, real.FITTING,
                                       real.READ)}, (640, 360)))
    assert main(["--repeats", "2", "--seed", "1", "--db", str(db)]) == 0
    (again,) = _rows(db)
    assert again["key"] == row["key"] and again["figures"]["pipeline_ratio"] == 2.0


def test_bench_robosuite_records_each_world_against_robosuite(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from agentic_env.bench import robosuite as bench_robosuite
    from agentic_env.cli.bench.robosuite import main

    rates = {"ideal": 30.0, "realistic": 24.0}
    monkeypatch.setattr(bench_robosuite, "_own_steps", lambda realism, steps, seed: {
        "steps_per_s": rates[realism], "reset_s": 0.5})
    monkeypatch.setattr(bench_robosuite, "_robosuite_steps", lambda python, steps, seed: {
        "steps_per_s": 4.0, "reset_s": 3.0, "version": "1.5.2"})
    db, out = tmp_path / "bench_robosuite.db", tmp_path / "bench_robosuite.json"
    argv = ["--robosuite-python", str(tmp_path / "python"), "--steps", "5", "--rounds", "2",
            "--out", str(out), "--db", str(db)]
    assert main(argv) == 0  # realistic 6x >= 5
    assert _last_line(capsys).endswith(f"report: {report_command(db)}")
    assert json.loads(out.read_text())["ratio_to_robosuite"]["realistic"] == 6.0  # JSON kept
    rows = _rows(db)
    assert [r["params"] for r in rows] == [
        {"world": world, "steps": 5, "rounds": 2, "seed": 0} for world in ("ideal", "realistic")]
    ideal, realistic = (r["figures"] for r in rows)
    assert (ideal["ratio_to_robosuite"], ideal["ratio_per_round"]) == (7.5, [7.5, 7.5])
    assert ideal["target"] is None and ideal["passed"] is None
    assert realistic["target"] == 5.0 and realistic["passed"] is True
    assert realistic["robosuite_steps_per_s"] == 4.0 and realistic["resolution"] == "640x480"
    text = _report(db, tmp_path / "report")
    assert "### bench-robosuite:" in text
    assert ("| realistic | 5 x 2, seed 0 | 640x480 at 20 Hz | 24.0 | 0.50 | 4.0 (1.5.2) | "
            "6.00x | 6.00 6.00 | >= 5: PASS |") in text
    rates["realistic"] = 16.0
    assert main(argv) == 1  # 4x: the target missed, still recorded
    again = _rows(db)
    assert [r["key"] for r in again] == [r["key"] for r in rows]
    assert again[1]["figures"]["passed"] is False


def _document(seed: int) -> dict[str, Any]:
    """A ``bench`` JSON document with the figures its report row reads."""
    world = {"ideal_ms": 40.0, "realistic_ms": 50.0, "cost_ratio": 1.25}
    return {"seed": seed, "quick": True,
            "control_loop": {"overhead_ratio": 1.06, "send_rate_hz": 1602.0,
                             "env_step_rate_hz": 22.1},
            "observation": {"cameras": {"shoulder": "640x360", "wrist": "640x360"},
                            "env_ms": 18.7, "overhead_ratio": 0.67},
            "observation_high_resolution": {"env_ms": 61.3, "overhead_ratio": 0.786},
            "realistic_world": {**world, "moving": {**world, "cost_ratio": 1.55,
                                                    "realistic_ms": 62.0}},
            "pick_timing": {"realtime_factor": 43.0, "mean_wall_s": 0.097},
            "pick_success": {"succeeded": 3, "picks": 3},
            "import": {"best_s": 0.11, "heavy_modules_loaded": []},
            "targets": [{"pass": True}] * 5 + [{"pass": False}] * 2, "all_targets_met": False}


def test_bench_records_its_run_and_a_run_again_replaces_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from agentic_env.cli.bench import env

    monkeypatch.setattr(env, "run_benchmark", lambda counts, seed, progress, quick:
                        _document(seed))
    db, out = tmp_path / "bench.db", tmp_path / "bench.json"
    argv = ["--quick", "--picks", "3", "--out", str(out), "--db", str(db)]
    assert env.main(argv) == 0
    assert _last_line(capsys) == f"measurements recorded in {db}; report: {report_command(db)}"
    (row,) = _rows(db)
    assert row["params"]["quick"] is True and row["params"]["counts"]["picks"] == 3
    assert row["figures"] == json.loads(out.read_text())
    assert env.main(argv) == 0 and env.main([*argv, "--seed", "1"]) == 0
    assert [r["params"]["seed"] for r in _rows(db)] == [0, 1]
    text = _report(db, tmp_path / "report")
    assert "### bench:" in text
    assert ("| quick, seed 0: 150 periods, 3 picks | 1.060 | 1602 (22.1) | 640x360: 18.70 "
            "(0.670) | 61.30 (0.786) | 1.250 (50.0 vs 40.0 ms) | 1.550 (62.0 vs 40.0 ms) | "
            "43.0x (97 ms) | 3/3 | 0.110 | 5/7 |") in text
