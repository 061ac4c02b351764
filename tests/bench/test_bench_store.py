"""Every episode-running benchmark records into the harness's results database: one
benchmark run of the smallest size (one episode, ideal world, the offline sim-oracle) leaves
its episodes there, ``agentic-env report`` on that database shows them, and the output ends
with the command that does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_env.bench.store import in_process, recorded, report_command
from agentic_env.cli.harness import report_main
from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec


def _report(db: Path, out: Path) -> str:
    assert report_main([str(db), "--out", str(out)]) == 0
    return (out / "report.md").read_text()


def test_a_rerun_replaces_the_stored_episode(tmp_path: Path) -> None:
    spec = EpisodeSpec("sorting", realism="ideal")
    first, again = (EpisodeResult(spec, ok, 1.0, 1.0, wall_s=s) for ok, s in ((False, 2.0),
                                                                              (True, 3.0)))
    db = tmp_path / "runs" / "bench.db"
    passed = list(recorded(db, [in_process(first, 2.5), in_process(again, 3.5)]))
    assert [f.result for f in passed] == [first, again]
    with ResultStore(db) as store:
        (row,) = store.episodes()
    assert row["key"] == spec.key() and row["success"] and row["run_s"] == 3.5
    assert ":" in row["worker"]  # host:pid, as a sweep's worker
    assert report_command(db) == f"agentic-env report {db}"


def test_bench_agent_records_its_episodes_and_the_report_shows_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_env.cli.bench.agent import main

    db = tmp_path / "bench_agent.db"
    assert main(["--tasks", "reorientation", "--seeds", "0:1", "--checker-errors",
                 "--realism", "ideal", "--workers", "1", "--db", str(db),
                 "--out", str(tmp_path / "bench_agent.json")]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].endswith(f"report: agentic-env report {db}")
    spec = EpisodeSpec("reorientation", seed=0, realism="ideal")
    with ResultStore(db) as store:
        (row,) = store.episodes()
        calls = store.calls()
    assert row["key"] == spec.key() and row["success"] and row["agent"] == "agenticlab"
    assert row["run_s"] > 0 and calls and {c["episode_key"] for c in calls} == {spec.key()}
    text = _report(db, tmp_path / "report")
    assert "1 episodes: success 1/1" in text and f"| {spec.key()} | reorientation | lab |" in text


def test_bench_tools_records_its_in_process_episode(tmp_path: Path) -> None:
    from agentic_env.bench.tools import TOOLS, in_process

    db = tmp_path / "bench_tools.db"
    figures = in_process("sorting", 0, 2, db)
    assert set(figures) == {name for name, _ in TOOLS}
    with ResultStore(db) as store:
        (row,) = store.episodes()
    spec = EpisodeSpec.from_dict(json.loads(row["spec_json"]))
    assert row["key"].startswith(spec.key()) and row["agent"] == "bench"
    assert row["worker"].endswith(":in-process") and not row["success"]  # never finished
