"""bench-episode: exclusive time per component, patches undone, and one short run end to end."""

from __future__ import annotations

import json
import time
from pathlib import Path

import mujoco
import pytest

from agentic_env.bench.episode import COMPONENTS, ComponentClock, timed_components
from agentic_env.cli.bench.episode import main
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeSpec


def test_nested_timed_functions_count_once() -> None:
    clock = ComponentClock()

    def inner() -> None:
        time.sleep(0.05)

    timed_inner = clock.wrap("physics", inner)

    def outer() -> None:
        time.sleep(0.02)
        timed_inner()

    clock.wrap("control", outer)()
    seconds = clock.take()
    assert seconds["physics"] == pytest.approx(0.05, abs=0.02)
    assert seconds["control"] == pytest.approx(0.02, abs=0.015)  # the inner call excluded
    assert clock.take() == {}


def test_timing_patches_are_undone() -> None:
    step, observe = mujoco.mj_step, SimEnv.observe
    with timed_components(ComponentClock()):
        assert mujoco.mj_step is not step and SimEnv.observe is not observe
    assert mujoco.mj_step is step and SimEnv.observe is observe


def test_a_short_benchmark_prints_ratios_and_components(tmp_path: Path, capsys) -> None:
    out, db = tmp_path / "bench.json", tmp_path / "bench_episode.db"
    assert main(["--tasks", "reorientation", "--seeds", "0", "--settings", "--out",
                 str(out), "--db", str(db)]) == 0
    printed = capsys.readouterr().out
    assert printed.strip().splitlines()[-1].endswith(f"report: agentic-env report {db}")
    with ResultStore(db) as store:  # the measured episode, not the warm-up's run of it
        (row,) = store.episodes()
    assert row["key"] == EpisodeSpec("reorientation", seed=0).key() and row["success"]
    assert row["trace_dir"] is None  # the traces were in a temporary folder
    assert "wall/sim" in printed and "worst wall/sim" in printed
    assert all(component[:11] in printed for component in COMPONENTS)
    data = json.loads(out.read_text())
    row = data["tasks"][0]
    assert row["task"] == "reorientation" and row["score"] == 1.0
    assert sum(row["components_s"].values()) == pytest.approx(row["wall_s"], rel=1e-6)
    assert data["video"] == []
