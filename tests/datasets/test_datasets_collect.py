"""Collection: resume after a kill, failures counted and excluded, options checked."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from support.dataset_helpers import CONFIG, collected_dataset

from agentic_env import cli
from agentic_env.datasets import collect as collect_module
from agentic_env.datasets.collect import collect, parse_disturbance, parse_resolution
from agentic_env.datasets.lerobot_format import STAGING, staged_records
from agentic_env.datasets.reader import DatasetReader, verify_dataset
from agentic_env.datasets.recording import ExpertRecorder
from agentic_env.errors import InvalidConfigError


def _seeds(root: Path) -> list[int]:
    return [int(row["agentic_env/seed"]) for row in DatasetReader(root).episodes]


def test_resume_after_a_simulated_kill(tmp_path: Path) -> None:
    source, _, _ = collected_dataset()
    root = tmp_path / "dataset"
    shutil.copytree(source, root)
    staging = root / STAGING
    kept = staging / "seed-000000" / "episode.json"
    kept_mtime = kept.stat().st_mtime_ns
    # the kill: seed 1 was mid-write (only its temporary folder exists) and the dataset
    # metadata was being rebuilt (info.json missing, a half-written data file)
    shutil.rmtree(staging / "seed-000001")
    partial = staging / "seed-000001.tmp-424242"
    partial.mkdir()
    (partial / "observation.images.shoulder.mp4").write_bytes(b"\x00" * 100)
    (root / "meta/info.json").unlink()
    (root / "data/chunk-000/file-001.parquet").write_bytes(b"PAR1 truncated")

    summary = collect(root, CONFIG, 2, progress=False)

    assert summary["episodes_in_dataset"] == 2
    assert summary["episodes_attempted"] == 2  # nothing recorded twice
    assert _seeds(root) == [0, 1]
    assert not list(staging.glob("*.tmp-*"))
    assert kept.stat().st_mtime_ns == kept_mtime  # the finished episode was not redone
    report = verify_dataset(root)
    assert report.ok, report.problems


def test_resume_refuses_other_settings(tmp_path: Path) -> None:
    source, _, _ = collected_dataset()
    root = tmp_path / "dataset"
    shutil.copytree(source, root)
    with pytest.raises(InvalidConfigError, match="width"):
        collect(root, replace(CONFIG, width=256), 2, progress=False)


def test_failed_expert_episodes_are_counted_and_left_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source, _, _ = collected_dataset()
    root = tmp_path / "dataset"
    shutil.copytree(source, root)
    shutil.rmtree(root / STAGING / "seed-000001")
    record = ExpertRecorder.record

    def fail_seed_1(self, request, videos, keep_frames=False):  # noqa: ANN001, ANN202
        episode = record(self, request, videos, keep_frames)
        if request.seed == 1:
            episode.metadata["success"] = False
        return episode

    monkeypatch.setattr(ExpertRecorder, "record", fail_seed_1)
    collect_module._WORKER.clear()
    summary = collect(root, CONFIG, 2, max_attempts=2, progress=False)
    assert summary["episodes_attempted"] == 2
    assert summary["episodes_failed"] == 1
    assert summary["failed_seeds"] == [1]
    assert summary["episodes_in_dataset"] == 1
    assert _seeds(root) == [0]
    failed = dict((r["seed"], r) for _, r in staged_records(root))[1]
    assert failed["has_frames"] is False  # no frames or videos kept for a failure
    assert not list((root / STAGING / "seed-000001").glob("*.mp4"))
    stored = json.loads((root / "meta/collection.json").read_text())
    assert stored["failed_seeds"] == [1]
    assert verify_dataset(root).ok


def test_option_parsing() -> None:
    assert parse_resolution("128x96") == (128, 96)
    with pytest.raises(InvalidConfigError, match="even"):
        parse_resolution("127x96")
    with pytest.raises(InvalidConfigError, match="WxH"):
        parse_resolution("big")
    assert parse_disturbance("move_target:pick:1:0.05") == {
        "kind": "move_target", "primitive": "pick", "occurrence": 1, "magnitude": 0.05}
    with pytest.raises(InvalidConfigError, match="valid: move_target"):
        parse_disturbance("earthquake")
    with pytest.raises(InvalidConfigError, match="kind"):
        parse_disturbance("move_target:pick:first")


def test_cli_lists_the_dataset_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    for command in ("collect", "replay-demo", "check-dataset", "bench-collect"):
        assert command in out


@pytest.mark.slow
def test_cli_collection_survives_sigkill_and_parallel_resume(tmp_path: Path) -> None:
    root = tmp_path / "dataset"
    command = [sys.executable, "-m", "agentic_env.cli", "collect", "--task", "reorientation",
               "--episodes", "3", "--out", str(root), "--resolution", "64x48",
               "--no-progress"]
    env = {**os.environ, "MUJOCO_GL": "egl"}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not staged_records(root) and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert staged_records(root), "no episode finished before the deadline"
    assert not (root / "meta/info.json").exists()
    result = subprocess.run([*command, "--workers", "2"], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert _seeds(root) == [0, 1, 2]
    report = verify_dataset(root)
    assert report.ok, report.problems
