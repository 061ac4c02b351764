"""Read a LeRobot v3.0 dataset written by :mod:`agentic_env.datasets.collect` and verify it.

:class:`DatasetReader` loads ``meta/`` and gives each episode's frames (numeric columns as
arrays, videos decoded to RGB, depth decoded to metres). :func:`verify_dataset` checks the
whole folder frame by frame: file layout against ``meta/info.json``, row counts, indices and
timestamps, task strings, decodable videos of the right size and length, every statistic
LeRobot normalises with for every feature in ``meta/stats.json``, the recorded demonstration
seeds against the episodes' (when recorded), and, given the
episodes as recorded, every numeric value exactly, every depth pixel to the millimetre and
every video frame to a PSNR bound (video is lossy).

``agentic-env check-dataset DIR`` runs the structural checks and prints a summary.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentic_env.contract.seeds import SEEDS_FILE, read_seeds
from agentic_env.datasets.lerobot_format import (
    CODEBASE_VERSION,
    DATA_PATH,
    EPISODES_PATH,
    TASKS_PATH,
    VIDEO_PATH,
    DatasetFormatError,
    depth_key,
    require_pyarrow,
    vector_features,
    video_key,
)
from agentic_env.datasets.recording import CAMERAS, RecordedEpisode, decode_depth_png
from agentic_env.datasets.stats import STAT_KEYS
from agentic_env.datasets.video import psnr, read_video, video_info

#: Lowest per-frame PSNR (dB) accepted between a recorded and a decoded video frame: H.264 at
#: CRF 23 gives >= 38 dB at 640 x 360 and >= 29 dB on the close-up wrist view at 128 x 96.
MIN_PSNR_DB = 27.0


def _optional_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``, or ``{}`` when the file does not exist."""
    return dict(json.loads(path.read_text())) if path.is_file() else {}


class DatasetReader:
    """A LeRobot v3.0 dataset folder.

    Attributes:
        demonstration_seeds: the trial seeds of its episodes as ``meta/`` records them
            (:data:`agentic_env.contract.seeds.SEEDS_FILE`), ``None`` for a dataset collected
            before they were recorded (disjointness from evaluations cannot be checked).

    Raises:
        DatasetFormatError: if ``meta/info.json`` is missing (an unfinished collection) or is
            of another codebase version.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        info_path = self.root / "meta/info.json"
        if not info_path.is_file():
            raise DatasetFormatError(
                f"{self.root} has no meta/info.json: not a dataset, or its collection did not "
                "finish (run the same collect command again to complete it)"
            )
        self.info: dict[str, Any] = json.loads(info_path.read_text())
        if self.info.get("codebase_version") != CODEBASE_VERSION:
            raise DatasetFormatError(
                f"{self.root}: codebase_version {self.info.get('codebase_version')!r}; this "
                f"reader reads {CODEBASE_VERSION}"
            )
        _, pq = require_pyarrow()
        self.features: dict[str, dict[str, Any]] = self.info["features"]
        self.fps = float(self.info["fps"])
        self.episodes: list[dict[str, Any]] = (
            pq.read_table(self.root / EPISODES_PATH).to_pylist()
            if self.info["total_episodes"] else [])
        tasks = pq.read_table(self.root / TASKS_PATH).to_pylist()
        self.tasks: list[str] = [row["task"] for row in sorted(tasks,
                                                                key=lambda r: r["task_index"])]
        # cameras.json and collection.json are the exporter's own; a dataset LeRobot recorded
        # (lerobot-record with the agentic_ur5e robot) has neither: they read as empty.
        self.cameras: dict[str, Any] = _optional_json(self.root / "meta/cameras.json")
        self.stats: dict[str, dict[str, Any]] = json.loads(
            (self.root / "meta/stats.json").read_text())
        self.collection: dict[str, Any] = _optional_json(self.root / "meta/collection.json")
        self.demonstration_seeds: tuple[int, ...] | None = read_seeds(self.root / "meta")

    def __len__(self) -> int:
        return len(self.episodes)

    def _data_path(self, episode: int) -> Path:
        row = self.episodes[episode]
        return self.root / DATA_PATH.format(chunk_index=row["data/chunk_index"],
                                            file_index=row["data/file_index"])

    def video_path(self, episode: int, camera: str) -> Path:
        """The MP4 holding ``camera``'s frames of ``episode``."""
        key = video_key(camera)
        row = self.episodes[episode]
        return self.root / VIDEO_PATH.format(video_key=key,
                                             chunk_index=row[f"videos/{key}/chunk_index"],
                                             file_index=row[f"videos/{key}/file_index"])

    def frames(self, episode: int) -> dict[str, np.ndarray]:
        """Numeric columns of ``episode``: name -> (T,) or (T, n) array."""
        _, pq = require_pyarrow()
        row = self.episodes[episode]
        table = pq.read_table(self._data_path(episode))
        index = table.column("index").to_numpy()
        table = table.filter((index >= row["dataset_from_index"])
                             & (index < row["dataset_to_index"]))
        out: dict[str, np.ndarray] = {}
        for name, feature in self.features.items():
            if feature["dtype"] in ("video", "image"):
                continue
            column = table.column(name).combine_chunks()
            if feature["shape"] == [1]:
                out[name] = column.to_numpy()
            else:
                out[name] = column.flatten().to_numpy().reshape(len(column), -1)
        return out

    def video(self, episode: int, camera: str) -> Iterator[np.ndarray]:
        """Decoded RGB frames (H, W, 3) uint8 of ``camera`` in ``episode``."""
        row = self.episodes[episode]
        key = video_key(camera)
        first = int(round(row[f"videos/{key}/from_timestamp"] * self.fps))
        height, width = self.features[key]["shape"][:2]
        for i, frame in enumerate(read_video(self.video_path(episode, camera), width, height)):
            if first <= i < first + row["length"]:
                yield frame

    def depth(self, episode: int, camera: str) -> np.ndarray:
        """Depth images (T, H, W) float32 metres of ``camera`` in ``episode``.

        Raises:
            DatasetFormatError: if the dataset has no depth.
        """
        key = depth_key(camera)
        if key not in self.features:
            raise DatasetFormatError(f"{self.root} has no depth (collect with --depth)")
        _, pq = require_pyarrow()
        column = pq.read_table(self._data_path(episode), columns=[key]).column(key)
        return np.stack([decode_depth_png(item["bytes"]) for item in column.to_pylist()])

    def task(self, episode: int) -> str:
        """The instruction (LeRobot task string) of ``episode``."""
        return str(self.episodes[episode]["tasks"][0])

    def trial(self, episode: int) -> dict[str, Any]:
        """The TrialSpec dict of ``episode`` (rebuild with ``reset(options={"trial": ...})``)."""
        return dict(json.loads(self.episodes[episode]["agentic_env/trial"]))


@dataclass
class VerificationReport:
    """Outcome of :func:`verify_dataset`.

    Attributes:
        episodes: episodes checked.
        frames: frames checked.
        min_psnr_db: lowest PSNR of a decoded video frame against the recorded one (only
            when recordings were given; ``inf`` otherwise).
        max_depth_error_m: largest depth difference, metres (with recordings and depth).
        problems: what did not match, one line each; empty when the dataset is sound.
    """

    episodes: int = 0
    frames: int = 0
    min_psnr_db: float = float("inf")
    max_depth_error_m: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not self.problems


def _check_episode(reader: DatasetReader, e: int, offset: int,
                   recording: RecordedEpisode | None, report: VerificationReport) -> None:
    row = reader.episodes[e]
    n = int(row["length"])
    frames = reader.frames(e)

    def problem(text: str) -> None:
        report.problems.append(f"episode {e}: {text}")

    if row["episode_index"] != e or (row["dataset_from_index"], row["dataset_to_index"]) != (
            offset, offset + n):
        problem("episode row has wrong indices")
    expected = {"frame_index": np.arange(n), "episode_index": np.full(n, e),
                "index": np.arange(offset, offset + n)}
    for name, values in expected.items():
        if len(frames[name]) != n or not np.array_equal(frames[name], values):
            problem(f"{name} is not {values[0]}..{values[-1]}")
    if not np.allclose(frames["timestamp"], np.arange(n) / reader.fps, atol=1e-4):
        problem("timestamps are not frame_index / fps")
    tasks = set(frames["task_index"].tolist())
    if len(tasks) != 1 or reader.tasks[tasks.pop()] != reader.task(e):
        problem("task_index does not name the episode's task")
    if reader.trial(e).get("instruction") != reader.task(e):
        problem("task string differs from the trial's instruction")
    for cam in CAMERAS:
        shape = reader.features[video_key(cam)]["shape"]
        info = video_info(reader.video_path(e, cam))
        if info["frames"] != n or tuple(info["size"]) != (shape[1], shape[0]):
            problem(f"{cam} video has {info['frames']} frames of {info['size']}, expected {n} "
                    f"of {(shape[1], shape[0])}")
    if recording is None:
        return
    columns = {"observation.state": recording.state, "observation.tcp_pose": recording.tcp_pose,
               "action": recording.action, "action.ee_delta": recording.ee_delta,
               **{f"observation.extrinsics.{c}": recording.extrinsics[c] for c in CAMERAS}}
    for name in vector_features():
        if not np.array_equal(frames[name], columns[name]):
            problem(f"{name} differs from the recording")
    if reader.task(e) != recording.metadata["instruction"]:
        problem("task string differs from the recorded instruction")
    for cam in CAMERAS:
        decoded = list(reader.video(e, cam))
        if len(decoded) != len(recording.rgb[cam]):
            problem(f"{cam}: {len(decoded)} decoded frames, {len(recording.rgb[cam])} recorded")
            continue
        worst = min(psnr(a, b) for a, b in zip(decoded, recording.rgb[cam], strict=True))
        report.min_psnr_db = min(report.min_psnr_db, worst)
        if worst < MIN_PSNR_DB:
            problem(f"{cam} video frame PSNR {worst:.1f} dB < {MIN_PSNR_DB} dB")
        if recording.depth:
            error = float(np.max(np.abs(reader.depth(e, cam) - np.stack(recording.depth[cam]))))
            report.max_depth_error_m = max(report.max_depth_error_m, error)
            if error > 0.0005 + 1e-6:
                problem(f"{cam} depth differs by {error * 1000:.2f} mm (> 0.5 mm rounding)")


def verify_dataset(root: str | Path,
                   recordings: Mapping[int, RecordedEpisode] | None = None) -> VerificationReport:
    """Check a dataset frame by frame (see the module docstring).

    Args:
        root: dataset folder.
        recordings: optional trial seed -> the episode as recorded (with ``keep_frames``),
            compared value by value with what the dataset holds for that seed.
    """
    reader = DatasetReader(root)
    report = VerificationReport()
    offset = 0
    declared = reader.info["total_episodes"], reader.info["total_frames"]
    for e, row in enumerate(reader.episodes):
        seed = int(row["agentic_env/seed"])
        recording = None if recordings is None else recordings.get(seed)
        if recordings is not None and recording is None:
            report.problems.append(f"episode {e}: seed {seed} was not recorded")
        _check_episode(reader, e, offset, recording, report)
        offset += int(row["length"])
        report.episodes += 1
    report.frames = offset
    if declared != (report.episodes, report.frames):
        report.problems.append(f"info.json declares {declared[0]} episodes / {declared[1]} "
                               f"frames; found {report.episodes} / {report.frames}")
    for name in reader.features if reader.episodes else ():
        missing = [stat for stat in STAT_KEYS if stat not in reader.stats.get(name, {})]
        if missing:
            report.problems.append(f"meta/stats.json: {name} has no {', '.join(missing)}")
    seeds = [int(row["agentic_env/seed"]) for row in reader.episodes]
    if len(set(seeds)) != len(seeds):
        report.problems.append(f"duplicate episodes (seeds {seeds})")
    recorded = reader.demonstration_seeds
    if recorded is not None and sorted(recorded) != sorted(seeds):
        report.problems.append(f"meta/{SEEDS_FILE} records seeds {list(recorded)}; the "
                               f"episodes are of seeds {seeds}")
    return report
