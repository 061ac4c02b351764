"""Collection: resume after a kill, staging cleaned, failures counted and excluded, options,
and demonstration seeds from the reserved range only, recorded in the dataset."""

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

import pyarrow.parquet as pq
import pytest
from support.dataset_helpers import CONFIG, EPISODES, collected_dataset

from agentic_env import cli
from agentic_env.contract.seeds import DEMONSTRATION_SEED_START, SEEDS_FILE
from agentic_env.datasets import collect as collect_module
from agentic_env.datasets.collect import collect, parse_disturbance, parse_resolution
from agentic_env.datasets.lerobot_format import (
    DATA_PATH,
    EPISODES_PATH,
    STAGING,
    staged_folder,
    staged_records,
    unstage_dataset,
)
from agentic_env.datasets.reader import DatasetReader, verify_dataset
from agentic_env.datasets.recording import ExpertRecorder
from agentic_env.errors import InvalidConfigError

#: The first three demonstration seeds (collect's default start).
S0, S1, S2 = range(DEMONSTRATION_SEED_START, DEMONSTRATION_SEED_START + 3)


def _seeds(root: Path) -> list[int]:
    return [int(row["agentic_env/seed"]) for row in DatasetReader(root).episodes]


def _assert_same_dataset(root: Path, reference: Path) -> None:
    """Same frames (every column, depth PNGs included), statistics and episode rows."""
    for e in range(EPISODES):
        path = DATA_PATH.format(chunk_index=0, file_index=e)
        assert pq.read_table(root / path).equals(pq.read_table(reference / path)), path
    assert pq.read_table(root / EPISODES_PATH).equals(pq.read_table(reference / EPISODES_PATH))
    for name in ("stats.json", "info.json"):
        assert (root / "meta" / name).read_text() == (reference / "meta" / name).read_text()


def _record_seeds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The seeds the expert is recorded on from now on."""
    seeds: list[int] = []
    record = ExpertRecorder.record

    def spy(self, request, videos, keep_frames=False):  # noqa: ANN001, ANN202
        seeds.append(request.seed)
        return record(self, request, videos, keep_frames)

    monkeypatch.setattr(ExpertRecorder, "record", spy)
    return seeds


def test_resume_after_a_simulated_kill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source, _, _ = collected_dataset()
    root = tmp_path / "dataset"
    shutil.copytree(source, root)
    assert not (root / STAGING).exists()
    # a run asking for more episodes stages the finished dataset's episodes again; the kill
    # came while it rebuilt the dataset: seed S1 was mid-write (only its temporary folder
    # exists), info.json was gone and a data file half-written
    unstage_dataset(root)
    staging = root / STAGING
    shutil.rmtree(staged_folder(root, S1))
    partial = staged_folder(root, S1).with_name(f"{staged_folder(root, S1).name}.tmp-424242")
    partial.mkdir()
    (partial / "observation.images.shoulder.mp4").write_bytes(b"\x00" * 100)
    (root / "meta/info.json").unlink()
    (root / "data/chunk-000/file-001.parquet").write_bytes(b"PAR1 truncated")

    recorded = _record_seeds(monkeypatch)
    summary = collect(root, CONFIG, 2, progress=False)

    assert recorded == [S1]  # the finished episode was not redone
    assert summary["episodes_in_dataset"] == 2
    assert summary["episodes_attempted"] == 2
    assert _seeds(root) == [S0, S1]
    assert not staging.exists()
    report = verify_dataset(root)
    assert report.ok, report.problems
    _assert_same_dataset(root, source)  # seed S1 recorded again, exactly as before


def test_a_finished_collection_is_left_alone_or_extended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source, _, _ = collected_dataset()
    root = tmp_path / "dataset"
    shutil.copytree(source, root)
    recorded = _record_seeds(monkeypatch)
    info_mtime = (root / "meta/info.json").stat().st_mtime_ns
    summary = collect(root, CONFIG, 2, progress=False)  # already there: nothing to do
    assert summary["episodes_in_dataset"] == 2
    assert (root / "meta/info.json").stat().st_mtime_ns == info_mtime
    assert not (root / STAGING).exists()

    summary = collect(root, CONFIG, 3, progress=False)  # one more
    assert recorded == [S2]
    assert summary["episodes_in_dataset"] == 3 and summary["episodes_attempted"] == 3
    assert _seeds(root) == [S0, S1, S2]
    assert DatasetReader(root).demonstration_seeds == (S0, S1, S2)
    assert not (root / STAGING).exists()
    assert verify_dataset(root).ok
    for e in range(EPISODES):  # the first two episodes are unchanged
        path = DATA_PATH.format(chunk_index=0, file_index=e)
        assert pq.read_table(root / path).equals(pq.read_table(source / path))


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
    unstage_dataset(root)
    shutil.rmtree(staged_folder(root, S1))
    (root / "meta/info.json").unlink()  # killed before seed S1 was recorded
    record = ExpertRecorder.record

    def fail_seed_s1(self, request, videos, keep_frames=False):  # noqa: ANN001, ANN202
        episode = record(self, request, videos, keep_frames)
        if request.seed == S1:
            episode.metadata["success"] = False
        return episode

    monkeypatch.setattr(ExpertRecorder, "record", fail_seed_s1)
    collect_module._WORKER.clear()
    summary = collect(root, CONFIG, 2, max_attempts=2, progress=False)
    assert summary["episodes_attempted"] == 2
    assert summary["episodes_failed"] == 1
    assert summary["failed_seeds"] == [S1]
    assert summary["episodes_in_dataset"] == 1
    assert _seeds(root) == [S0]
    assert DatasetReader(root).demonstration_seeds == (S0,)  # the failure was not trained on
    stored = json.loads((root / "meta/collection.json").read_text())
    assert stored["failed_seeds"] == [S1]
    assert verify_dataset(root).ok
    assert not (root / STAGING).exists()
    # resuming restages the failure as a record without frames: seed S1 is not tried again
    unstage_dataset(root)
    failed = dict((r["seed"], r) for _, r in staged_records(root))[S1]
    assert failed["has_frames"] is False
    assert [p.name for p in staged_folder(root, S1).iterdir()] == ["episode.json"]


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


def _kill_after_first_episode(command: list[str], root: Path) -> None:
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


def test_cli_collection_resumes_exactly_after_sigkill(tmp_path: Path) -> None:
    """Killed after its first episode, the same command finishes the very same dataset."""
    reference, _, _ = collected_dataset()
    root = tmp_path / "dataset"
    command = [sys.executable, "-m", "agentic_env.cli", "collect", "--task", CONFIG.task,
               "--episodes", str(EPISODES), "--out", str(root), "--depth",
               "--resolution", f"{CONFIG.width}x{CONFIG.height}", "--no-progress"]
    _kill_after_first_episode(command, root)
    result = subprocess.run(command, env={**os.environ, "MUJOCO_GL": "egl"},
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert not (root / STAGING).exists()
    summary = json.loads((root / "meta/collection.json").read_text())
    assert summary["episodes_attempted"] == EPISODES  # nothing recorded twice
    _assert_same_dataset(root, reference)


@pytest.mark.slow
def test_cli_collection_survives_sigkill_and_parallel_resume(tmp_path: Path) -> None:
    root = tmp_path / "dataset"
    command = [sys.executable, "-m", "agentic_env.cli", "collect", "--task", "reorientation",
               "--episodes", "3", "--out", str(root), "--resolution", "64x48",
               "--no-progress"]
    _kill_after_first_episode(command, root)
    result = subprocess.run([*command, "--workers", "2"], env={**os.environ, "MUJOCO_GL": "egl"},
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert _seeds(root) == [S0, S1, S2]
    assert not (root / STAGING).exists()
    report = verify_dataset(root)
    assert report.ok, report.problems


def test_seeds_outside_the_demonstration_range_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InvalidConfigError, match=r"1000000-1999999.*0-999999"):
        collect(tmp_path / "early", CONFIG, 1, seed_start=0, progress=False)
    with pytest.raises(InvalidConfigError, match="2000000"):  # the last tries run past it
        collect(tmp_path / "late", CONFIG, 2, seed_start=1_999_999, progress=False)
    assert cli.main(["collect", "--task", CONFIG.task, "--episodes", "1", "--out",
                     str(tmp_path / "cli"), "--seed-start", "1000", "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert "error: demonstration seed(s) 1000" in error and "--seed-start 1000000" in error
    assert not (tmp_path / "cli" / STAGING).exists()  # refused before anything was recorded


def test_a_collection_from_evaluation_seeds_is_not_extended(tmp_path: Path) -> None:
    """A folder staged before the ranges were reserved (seed 0) is refused, not mixed."""
    root = tmp_path / "dataset"
    old = staged_folder(root, 0)
    old.mkdir(parents=True)
    (old / "episode.json").write_text(json.dumps(
        {"seed": 0, "success": False, "has_frames": False, "error": "", "length": 0}))
    with pytest.raises(InvalidConfigError, match=r"seeds 0-0, outside the demonstration range "
                                                 r"1000000-1999999.*another --out"):
        collect(root, CONFIG, 1, progress=False)


def test_the_dataset_records_its_seeds_and_the_check_compares_them(tmp_path: Path) -> None:
    source, _, _ = collected_dataset()
    assert DatasetReader(source).demonstration_seeds == (S0, S1)
    root = tmp_path / "dataset"
    shutil.copytree(source, root)
    record = root / "meta" / SEEDS_FILE
    record.write_text(json.dumps({"seeds": [S0, 7]}))
    report = verify_dataset(root)
    assert any(f"records seeds [{S0}, 7]" in line for line in report.problems), report.problems
    record.unlink()  # a dataset collected before seeds were recorded still reads and checks
    assert DatasetReader(root).demonstration_seeds is None
    assert verify_dataset(root).ok
