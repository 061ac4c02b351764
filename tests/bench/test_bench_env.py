"""Smoke test of ``agentic_env.bench.env`` through ``agentic-env bench``: a ``--quick`` run
writes a complete JSON report and records it as a measurement that the report shows."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from agentic_env.bench.env import QUICK_COUNTS
from agentic_env.bench.env_measures import HEAVY_MODULES
from agentic_env.bench.store import report_command
from agentic_env.cli.bench import env as bench
from agentic_env.cli.harness import report_main
from agentic_env.harness.db import ResultStore


def _positive_finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and (
        math.isfinite(value) and value > 0
    )


def test_quick_bench_writes_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, db = tmp_path / "nested" / "b.json", tmp_path / "bench.db"
    assert bench.main(["--quick", "--out", str(out), "--db", str(db)]) == 0
    report = json.loads(out.read_text())

    assert {"machine", "control_loop", "observation", "observation_high_resolution", "pick_timing",
            "pick_success", "import", "targets", "all_targets_met", "counts"} <= set(report)
    assert report["quick"] is True
    machine = report["machine"]
    for key in ("platform", "cpu_count", "mujoco_version", "MUJOCO_GL"):
        assert key in machine
    assert machine["cpu_count"] >= 1

    positive = {
        "control_loop": ["send_s_per_period", "raw_mj_step_s_per_period", "send_rate_hz",
                         "raw_mj_step_rate_hz", "overhead_ratio", "env_step_no_render_rate_hz",
                         "env_step_rate_hz", "send_realtime_factor"],
        "observation": ["env_ms", "raw_renderer_ms", "overhead_ratio"],
        "observation_high_resolution": ["env_ms", "raw_renderer_ms", "overhead_ratio"],
        "pick_timing": ["mean_wall_s", "mean_sim_duration_s", "realtime_factor"],
        "import": ["best_s"],
    }
    for section, keys in positive.items():
        for key in keys:
            assert _positive_finite(report[section][key]), (section, key, report[section][key])
    assert report["observation_high_resolution"]["cameras"] == {"shoulder": "1280x720",
                                                                "wrist": "1280x720"}

    success = report["pick_success"]
    assert success["picks"] == QUICK_COUNTS.picks
    assert 0.0 <= success["success_rate"] <= 1.0
    assert success["succeeded"] + sum(success["failures_by_reason"].values()) == success["picks"]
    assert report["import"]["heavy_modules_checked"] == list(HEAVY_MODULES)

    metrics = [target["metric"] for target in report["targets"]]
    assert len(metrics) == 8
    world = report["realistic_world"]
    # ratios of timings, not compared with anything: a quick run on a loaded machine may time
    # the realistic world's still scene (its frames reused) at or below the ideal one's
    assert world["resolution"] == [640, 480] and _positive_finite(world["cost_ratio"])
    assert world["arm_moving"] is False and world["moving"]["arm_moving"] is True
    assert _positive_finite(world["moving"]["cost_ratio"])
    assert sum("observation time, arm moving" in metric for metric in metrics) == 1
    filtering = world["depth_filter"]
    assert all(_positive_finite(filtering[key]) for key in (
        "shoulder_ms", "wrist_ms", "filter_ms", "ideal_observation_ms", "filter_ratio"))
    assert filtering["filter_ms"] == pytest.approx(filtering["shoulder_ms"]
                                                   + filtering["wrist_ms"])
    for target in report["targets"]:
        assert math.isfinite(target["value"]) and isinstance(target["pass"], bool)

    printed = capsys.readouterr().out
    assert "PASS" in printed or "MISS" in printed
    assert str(out) in printed
    assert printed.strip().splitlines()[-1] == (f"measurements recorded in {db}; report: "
                                                f"{report_command(db)}")

    with ResultStore(db) as store:
        (row,) = store.measurements()
    assert row["bench"] == "bench" and row["figures"] == report
    assert row["params"] == {"seed": 0, "quick": True, "counts": report["counts"]}
    assert report_main([str(db), "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    met = sum(target["pass"] for target in report["targets"])
    assert "### bench:" in text and "| quick, seed 0: 150 periods, 3 picks | " in text
    assert f" | {report['pick_success']['succeeded']}/3 | " in text
    assert f" | {met}/{len(metrics)} | " in text
