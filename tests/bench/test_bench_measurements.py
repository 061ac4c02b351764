"""Every measurement benchmark records into the harness's results database: one real run of
the smallest size of ``bench-grasp``, ``bench-calibration`` and ``bench-collect`` leaves its
measurements there (keyed by benchmark and parameters, not fake episodes), ``agentic-env
report`` on that database shows them in its measurements section, the output ends with the
command that does, and running the same measurement again replaces its rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_env.bench.store import measurement, record_measurements, report_command
from agentic_env.cli.harness import report_main
from agentic_env.harness.db import ResultStore


def _report(db: Path, out: Path) -> str:
    assert report_main([str(db), "--out", str(out)]) == 0
    return (out / "report.md").read_text()


def _rows(db: Path) -> list[dict]:
    with ResultStore(db) as store:
        assert store.episodes() == []  # measurements, not episodes
        return store.measurements()


def _last_line(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().out.strip().splitlines()[-1]


def test_a_measurement_made_again_replaces_its_row(tmp_path: Path) -> None:
    db = tmp_path / "runs" / "bench.db"
    first = measurement("bench-x", {"n": 1, "task": "sorting"}, {"rate": 0.5}, 2.0)
    again = measurement("bench-x", {"task": "sorting", "n": 1}, {"rate": 0.75}, 3.0)
    other = measurement("bench-x", {"n": 2, "task": "sorting"}, {"rate": 1.0}, 1.0)
    assert first.key() == again.key() != other.key()
    record_measurements(db, [first])
    record_measurements(db, [again, other])
    rows = _rows(db)
    assert [(r["params"]["n"], r["figures"]["rate"], r["run_s"]) for r in rows] == [
        (1, 0.75, 3.0), (2, 1.0, 1.0)]
    assert rows[0]["bench"] == "bench-x" and ":" in rows[0]["worker"] and rows[0]["finished_at"]
    text = _report(db, tmp_path / "report")
    assert "### bench-x: figures as recorded" in text and '"rate": 0.75' in text


def test_bench_grasp_records_each_task_and_world(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_env.cli.bench.perception import main

    db = tmp_path / "bench_grasp.db"
    argv = ["--layouts", "1", "--tasks", "reorientation", "--worlds", "ideal",
            "--no-attribution", "--db", str(db)]
    assert main(argv) == 0
    assert _last_line(capsys) == f"measurements recorded in {db}; report: {report_command(db)}"
    (row,) = _rows(db)
    assert row["bench"] == "bench-grasp"
    assert row["params"] == {"task": "reorientation", "world": "ideal", "layouts": 1,
                             "seed": 0, "camera": "shoulder"}
    figures = row["figures"]
    assert figures["picks"] >= 1 and 0 <= figures["lifted"] <= figures["picks"]
    assert sum(c["picks"] for c in figures["per_kind"].values()) == figures["picks"]
    assert len(figures["failures"]) == figures["picks"] - figures["lifted"]
    assert main(argv) == 0
    (again,) = _rows(db)
    assert again["key"] == row["key"] and again["figures"]["picks"] == figures["picks"]
    text = _report(db, tmp_path / "report")
    assert "## Measurements" in text and "### bench-grasp:" in text
    assert f"| reorientation | ideal | 1 from 0 | shoulder | {figures['lifted']}/" in text


def test_bench_calibration_records_each_camera(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("cv2")
    from agentic_env.cli.bench.calibration import main

    db = tmp_path / "bench_calibration.db"
    argv = ["--sessions", "1", "--views", "3", "--seed", "4", "--out",
            str(tmp_path / "calibration.toml"), "--db", str(db)]
    assert main(argv) == 0
    assert _last_line(capsys).endswith(f"report: {report_command(db)}")
    assert (tmp_path / "calibration.toml").is_file()  # the TOML output still written
    rows = _rows(db)
    assert [r["params"]["camera"] for r in rows] == ["wrist", "shoulder"]
    assert all(r["params"] == {"camera": r["params"]["camera"], "sessions": 1, "views": 3,
                               "seed": 4} for r in rows)
    assert len(rows[0]["figures"]["translation_std_mm"]) == 3
    assert rows[0]["figures"]["frame"] == "flange"
    assert main(argv) == 0
    assert [r["key"] for r in _rows(db)] == [r["key"] for r in rows]
    text = _report(db, tmp_path / "report")
    assert "### bench-calibration:" in text and "| wrist -> flange | 1 x 3 from 4 |" in text
    assert "| shoulder -> " in text


def test_bench_collect_records_its_figures_and_keeps_the_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_env.cli.bench.collect import main

    db, out = tmp_path / "bench_collect.db", tmp_path / "bench_collect.json"
    argv = ["--task", "reorientation", "--episodes", "1", "--resolution", "128x96",
            "--json", str(out), "--db", str(db)]
    assert main(argv) == 0
    assert _last_line(capsys).endswith(f"report: {report_command(db)}")
    (row,) = _rows(db)
    assert row["bench"] == "bench-collect"
    assert row["params"]["task"] == "reorientation" and row["params"]["resolution"] == "128x96"
    assert row["figures"] == json.loads(out.read_text())
    assert row["figures"]["frames"] > 0
    assert main(argv) == 0
    (again,) = _rows(db)
    assert again["key"] == row["key"]
    text = _report(db, tmp_path / "report")
    assert "### bench-collect:" in text and "| reorientation/lab |" in text
