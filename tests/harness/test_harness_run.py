"""Sweep runner: resume after SIGKILL, crashed episodes, worker deaths, the Ray path.

``fake_episode`` is a deterministic stand-in for the agent runtime's episode function (same
signature, same result type): outcome, calls and tokens are a pure function of the spec's key,
so any two runners must store identical outcomes for the same specs.
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

import pytest

from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec, ModuleCall
from agentic_env.harness.run import run_sweep
from agentic_env.harness.sweep import parse_sweep

TESTS = pathlib.Path(__file__).resolve().parent
REPO = TESTS.parents[1]
FAKE = "test_harness_run:fake_episode"
#: Seconds each fake episode sleeps (set by the SIGKILL test for its subprocess).
SLEEP_VAR = "AGENTIC_ENV_FAKE_EPISODE_SLEEP_S"
CRASH_SEED, DIE_SEED = 13, 14


def fake_episode(spec: EpisodeSpec, *, trace_root: pathlib.Path | None = None,
                 on_event: Callable[[str], None] | None = None) -> EpisodeResult:
    """Deterministic fake: seed 13 raises, seed 14 kills its own process."""
    time.sleep(float(os.environ.get(SLEEP_VAR, "0")))
    if spec.seed == CRASH_SEED:
        raise RuntimeError("fake episode crashed on purpose")
    if spec.seed == DIE_SEED:
        os.kill(os.getpid(), signal.SIGKILL)
    rng = random.Random(spec.key())
    error = float(spec.model.partition("checker=")[2] or 0.0)
    n_checks = 2 + rng.randrange(4)
    wrong = [rng.random() < error for _ in range(n_checks)]
    success = not any(wrong) and rng.random() < 0.9
    calls = tuple(ModuleCall(module="checker", model=spec.model, latency_s=0.01 * (i + 1),
                             input_tokens=100, output_tokens=20, cost_usd=None, attempts=1,
                             verdict="false" if w else "true") for i, w in enumerate(wrong))
    failure = None if success else ("checker" if any(wrong) else "execution")
    trace = None if trace_root is None else trace_root / spec.key()
    if trace is not None:
        trace.mkdir(parents=True, exist_ok=True)
        (trace / "index.html").write_text("<html><body>fake trace</body></html>")
    return EpisodeResult(spec=spec, success=success, progress=1.0 if success else 0.5,
                         score=1.0 if success else round(rng.random() * 0.8, 3),
                         actions=2 * n_checks, wall_s=0.1, input_tokens=100 * n_checks,
                         output_tokens=20 * n_checks, failure=failure, calls=calls,
                         trace_dir=None if trace is None else str(trace))


def _sweep(seeds: Any, tasks: tuple[str, ...] = ("sorting", "stacking")) -> dict[str, Any]:
    return {"name": "t", "episode_fn": FAKE,
            "grid": {"tasks": list(tasks), "models": ["sim-oracle", "sim-oracle?checker=0.3"],
                     "verification": ["full", "goal"], "seeds": seeds}}


def _outcomes(db: pathlib.Path) -> dict[str, tuple[Any, ...]]:
    with ResultStore(db) as store:
        calls: dict[str, list[tuple[Any, ...]]] = {}
        for c in store.calls():
            calls.setdefault(c["episode_key"], []).append((c["seq"], c["verdict"]))
        return {r["key"]: (r["success"], r["score"], r["actions"], r["failure"],
                           tuple(calls.get(r["key"], ()))) for r in store.episodes()}


def test_crashed_and_dead_episodes_are_errors_and_the_sweep_goes_on(tmp_path):
    sweep = parse_sweep(_sweep([0, CRASH_SEED, DIE_SEED, 1], tasks=("sorting",)))
    summary = run_sweep(sweep, tmp_path / "r.db", workers=2, trace_root=tmp_path / "tr",
                        progress=False)
    assert summary.declared == summary.ran == 16
    assert summary.errors == 8
    with ResultStore(tmp_path / "r.db") as store:
        rows = store.episodes()
    errors = [r for r in rows if r["failure"] == "error"]
    assert {EpisodeSpec.from_dict(json.loads(r["spec_json"])).seed for r in errors} == {
        CRASH_SEED, DIE_SEED}
    crashed = [r for r in errors if r["seed"] == CRASH_SEED]
    assert all("fake episode crashed on purpose" in r["error"] for r in crashed)
    assert all("Traceback" in r["error"] for r in crashed)
    died = [r for r in errors if r["seed"] == DIE_SEED]
    assert all("worker process died" in r["failure_detail"] for r in died)
    ok = [r for r in rows if r["failure"] != "error"]
    assert all(pathlib.Path(r["trace_dir"], "index.html").is_file() for r in ok)
    assert all(pathlib.Path(r["trace_dir"]).name == r["key"] for r in ok)


def test_resume_skips_finished_and_retry_errors_reruns_them(tmp_path):
    db = tmp_path / "r.db"
    first = run_sweep(parse_sweep(_sweep([0, CRASH_SEED])), db, workers=1, progress=False)
    assert (first.ran, first.errors) == (16, 8)
    again = run_sweep(parse_sweep(_sweep([0, CRASH_SEED, 1])), db, workers=1, progress=False)
    assert (again.skipped, again.ran) == (16, 8)
    retry = run_sweep(parse_sweep(_sweep([0, CRASH_SEED, 1])), db, workers=1,
                      retry_errors=True, progress=False)
    assert (retry.skipped, retry.ran, retry.errors) == (16, 8, 8)
    assert len(_outcomes(db)) == 24


def _kill_when(db: pathlib.Path, at_least: int, proc: subprocess.Popen[bytes]) -> int:
    """SIGKILL the sweep's process group once ``db`` holds ``at_least`` episodes."""
    deadline = time.monotonic() + 120
    count = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            try:
                with sqlite3.connect(db, timeout=5) as conn:
                    count = conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
            except sqlite3.OperationalError:
                count = 0
            if count >= at_least:
                break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    return count


def test_sigkill_mid_sweep_then_resume_gives_exactly_the_declared_episodes(tmp_path):
    sweep_file = tmp_path / "kill.yaml"
    sweep_file.write_text(textwrap.dedent(f"""\
        name: kill
        episode_fn: {FAKE}
        grid:
          tasks: [sorting, stacking]
          models: [sim-oracle, "sim-oracle?checker=0.3"]
          verification: [full, goal]
          seeds: 3
        """))
    db = tmp_path / "kill.db"
    command = [sys.executable, "-m", "agentic_env.cli", "sweep", str(sweep_file), "--workers",
               "2", "--db", str(db), "--traces", str(tmp_path / "traces")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(REPO)]),
           SLEEP_VAR: "0.15"}
    counts = []
    for at_least in (3, 11):
        proc = subprocess.Popen(command, env=env, cwd=tmp_path, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        counts.append(_kill_when(db, at_least, proc))
        assert proc.returncode == -signal.SIGKILL
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=True)
    assert "24 episodes declared" in done.stdout
    declared = parse_sweep(_sweep(3)).specs
    outcomes = _outcomes(db)
    assert 3 <= counts[0] < counts[1] < 24
    assert set(outcomes) == {s.key() for s in declared}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0] == 24
        orphans = conn.execute("SELECT COUNT(*) FROM calls WHERE episode_key NOT IN "
                               "(SELECT key FROM episodes)").fetchone()[0]
        assert orphans == 0
    expected = {s.key(): fake_episode(s) for s in declared}
    for key, (success, score, actions, failure, calls) in outcomes.items():
        assert (success, score, actions, failure) == (
            expected[key].success, expected[key].score, expected[key].actions,
            expected[key].failure)
        assert [seq for seq, _ in calls] == list(range(len(expected[key].calls)))


def test_ray_and_pool_store_the_same_outcomes(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray", reason="Ray is the optional 'ray' extra")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), str(REPO)]))
    sweep = parse_sweep(_sweep([0, 1]))
    run_sweep(sweep, tmp_path / "pool.db", workers=2, progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        summary = run_sweep(sweep, tmp_path / "ray.db", ray_address="local", progress=False)
    finally:
        ray.shutdown()
    assert summary.ran == len(sweep.specs) == 16
    assert _outcomes(tmp_path / "ray.db") == _outcomes(tmp_path / "pool.db")


@pytest.mark.slow
def test_ray_and_pool_give_the_same_results_with_the_agent_runtime(tmp_path):
    """The shipped episode function (AgenticLab + sim-oracle with injected checker error) on
    a local Ray instance and on the spawn pool: the same outcomes and model calls."""
    ray = pytest.importorskip("ray", reason="Ray is the optional 'ray' extra")
    sweep = parse_sweep({"name": "real", "grid": {
        "tasks": ["sorting"], "models": ["sim-oracle?checker=0.3"], "seeds": [0, 1]},
        "episode": {"max_actions": 20, "max_wall_s": 300}})
    assert sweep.episode_fn == "agentic_env.harness.runner:run_episode"
    run_sweep(sweep, tmp_path / "pool.db", workers=2, progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        run_sweep(sweep, tmp_path / "ray.db", ray_address="local", progress=False)
    finally:
        ray.shutdown()
    pool, on_ray = _outcomes(tmp_path / "pool.db"), _outcomes(tmp_path / "ray.db")
    assert len(pool) == 2 and pool == on_ray
    with ResultStore(tmp_path / "pool.db") as store:
        assert all(r["failure"] != "error" for r in store.episodes())
        assert len(store.calls()) > 10


def test_a_folder_runs_each_sweep_and_prints_the_wall_time_per_sweep_and_in_total(
        tmp_path, monkeypatch, capsys):
    from agentic_env.cli.harness import sweep_main

    suite = tmp_path / "suite"
    suite.mkdir()
    for name, tasks in (("b-second", ["stacking"]), ("a-first", ["sorting", "stacking"])):
        (suite / f"{name}.yaml").write_text(textwrap.dedent(f"""\
            name: {name}
            episode_fn: {FAKE}
            grid: {{tasks: {tasks}, seeds: 5}}
            """))
    (suite / "notes.txt").write_text("not a sweep")
    monkeypatch.chdir(tmp_path)
    assert sweep_main([str(suite), "--workers", "1", "--seeds", "2", "--no-traces",
                       "--report"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines if "episodes declared" in line] == [
        "a-first", "b-second"]
    assert "a-first: 4 episodes declared, 0 already done, 4 run" in out
    table = lines[lines.index(f"suite {suite}: wall time per sweep (episodes run)") + 1:]
    assert [row.split()[:2] for row in table] == [["a-first", "4"], ["b-second", "2"],
                                                 ["total", "6"]]
    assert all(row.endswith(" min") for row in table)
    for name in ("a-first", "b-second"):
        assert (tmp_path / "runs" / "sweeps" / name / "report" / "report.html").is_file()
    # run again: everything is stored, nothing runs
    assert sweep_main([str(suite), "--workers", "1", "--seeds", "2", "--no-traces"]) == 0
    rerun = capsys.readouterr().out.splitlines()
    assert rerun[-1].split()[:2] == ["total", "0"]
    # --tasks slices every sweep: a sweep without the task runs nothing
    assert sweep_main([str(suite), "--workers", "1", "--seeds", "3:1", "--no-traces",
                       "--tasks", "sorting"]) == 0
    sliced = capsys.readouterr().out.splitlines()
    assert [row.split()[:2] for row in sliced[-3:]] == [["a-first", "1"], ["b-second", "0"],
                                                        ["total", "1"]]
    with pytest.raises(SystemExit):
        sweep_main([str(suite), "--db", str(tmp_path / "one.db")])
    assert "each sweep writes its own" in capsys.readouterr().err
    assert sweep_main([str(tmp_path / "runs")]) == 2
    assert "no sweep files" in capsys.readouterr().out
