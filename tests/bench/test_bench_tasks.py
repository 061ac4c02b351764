"""bench-tasks runs the scripted expert on the harness's pool: its episodes go through the
pool's crash rule and into the results database, which ``agentic-env report`` reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_env.bench.tasks import (
    EXPERT_AGENT,
    expert_specs,
    format_table,
    run_expert_episodes,
    summarise,
)
from agentic_env.cli.harness import report_main
from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeSpec


def test_the_expert_runs_on_the_pool_with_its_crash_rule(tmp_path: Path) -> None:
    (spec,) = expert_specs(["reorientation"], ["lab"], 1, resolution=160, realism="ideal")
    crash = EpisodeSpec("no-such-task", agent=EXPERT_AGENT, realism="ideal")
    db = tmp_path / "bench_tasks.db"
    solved, crashed = run_expert_episodes([spec, crash], workers=1, db=db)
    assert solved.spec == spec and solved.success and solved.failure is None
    assert solved.score == 1.0 and solved.actions > 0 and solved.sim_s > 0
    assert crashed.failure == "error" and "Traceback" in (crashed.error or "")
    with ResultStore(db) as store:
        rows = {r["key"]: r for r in store.episodes()}
    assert set(rows) == {spec.key(), crash.key()}
    assert rows[spec.key()]["agent"] == EXPERT_AGENT and rows[spec.key()]["success"]
    assert rows[crash.key()]["failure"] == "error"
    cells = summarise([solved, crashed])
    assert [(c["task"], c["errors"]) for c in cells] == [("no-such-task", 1),
                                                         ("reorientation", 0)]
    assert "PASS" in format_table(cells).splitlines()[2]
    assert report_main([str(db), "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert f"| {spec.key()} | reorientation | lab |" in text and crash.key() in text


def test_the_command_ends_with_the_report_command(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_env.cli.bench.tasks import main

    db = tmp_path / "tasks.db"
    assert main(["--tasks", "reorientation", "--settings", "lab", "--seeds", "1",
                 "--workers", "1", "--resolution", "160", "--realism", "ideal", "--db",
                 str(db), "--out", str(tmp_path / "tasks.json"), "--strict"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].endswith(f"report: agentic-env report {db}")
    with ResultStore(db) as store:
        assert len(store.episodes()) == 1
