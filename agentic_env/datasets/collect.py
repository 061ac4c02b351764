"""Collect scripted-expert demonstrations as a LeRobot dataset (``agentic-env collect``).

Runs the privileged scripted expert over seeded trials (seed ``--seed-start``, then upwards)
until ``--episodes`` successful episodes are recorded, in ``--workers`` spawned processes, and
writes a LeRobot v3.0 dataset to ``--out`` (see :mod:`agentic_env.datasets.lerobot_format`).
Demonstration seeds come from the reserved range
(:data:`agentic_env.contract.seeds.DEMONSTRATION_SEEDS`, from 1000000 by default), apart from
every evaluation's; the dataset records them in ``meta/demonstration_seeds.json``.
Instructions cycle through the paraphrase categories (seed modulo the category list; a trial
without that category gets the env's uniform choice). Failed expert episodes are counted in
``meta/collection.json`` and left out unless ``--keep-failed``.

Resumable: each finished episode is written to ``.staging/seed-NNNNNN.tmp-PID/`` and renamed to
``.staging/seed-NNNNNN/`` in one step, so a killed run leaves either a whole episode or a
temporary folder that the next run deletes. Running the same command again records only the
missing episodes, then rebuilds ``data/``, ``videos/`` and ``meta/`` from the staged ones.
Once the dataset is built, ``.staging/`` is deleted; running again into a finished dataset does
nothing if it holds the episodes asked for, and otherwise stages its episodes again and adds
the missing ones (the settings, kept in ``meta/collection.json``, must match).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from agentic_env.contract.seeds import (
    DEMONSTRATION_SEED_START,
    DEMONSTRATION_SEEDS,
    EVALUATION_SEEDS,
    check_demonstration_seeds,
    describe,
)
from agentic_env.datasets.lerobot_format import (
    STAGING,
    STAGING_TRASH,
    assemble_dataset,
    remove_staging,
    stage_atomically,
    staged_folder,
    staged_records,
    unstage_dataset,
    video_key,
    write_staged_frames,
)
from agentic_env.datasets.video import VideoConfig

if TYPE_CHECKING:
    from agentic_env.datasets.recording import RecordedEpisode
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.realism import BENCHMARK_REALISM, check_realism

#: Collection settings that must match when a run resumes into an existing folder.
CONFIG_FILE = "config.json"


@dataclass(frozen=True)
class CollectConfig:
    """What to collect; everything that shapes the recorded frames.

    Attributes:
        task: task name (see :data:`agentic_env.tasks.TASKS`).
        setting: ``lab``, ``kitchen`` or ``outdoor``.
        width: camera image width, pixels (both cameras; even).
        height: camera image height, pixels (even).
        depth: also record depth images.
        randomize: randomise the setting's dressing per episode (domain randomisation).
        disturbances: disturbance dicts applied to every episode.
        codec: video codec (``h264`` or ``av1``).
        crf: video constant rate factor.
        keep_failed: keep failed expert episodes in the dataset.
        control_hz: control (and frame) rate, Hz.
        realism: the simulated world (:mod:`agentic_env.sim.realism`): ``realistic`` (the
            default for data: device models, calibration error, contact drawn per object)
            or ``ideal``.
    """

    task: str = "stacking"
    setting: str = "lab"
    width: int = 640
    height: int = 360
    depth: bool = False
    randomize: bool = False
    disturbances: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    codec: str = "h264"
    crf: int = 23
    keep_failed: bool = False
    control_hz: float = 20.0
    realism: str = BENCHMARK_REALISM

    def __post_init__(self) -> None:
        check_realism(self.realism)

    def video(self) -> VideoConfig:
        """Encoder settings."""
        return VideoConfig(codec=self.codec, crf=self.crf)


_WORKER: dict[str, Any] = {}


def _recorder(config: CollectConfig) -> Any:
    """The worker's env and recorder for ``config`` (built once per process)."""
    if _WORKER.get("config") != config:
        from agentic_env.contract.workcell import SceneConfig
        from agentic_env.datasets.recording import ExpertRecorder
        from agentic_env.envs.sim_env import SimEnv

        if "env" in _WORKER:
            _WORKER["env"].close()
        scene = SceneConfig.at_resolution(config.width, config.height,
                                          randomize=config.randomize)
        env = SimEnv(task=config.task, setting=config.setting, scene=scene,
                     control_hz=config.control_hz, record_rollouts=True,
                     realism=config.realism)
        _WORKER.update(config=config, env=env,
                       recorder=ExpertRecorder(env, config.video(), config.depth))
    return _WORKER["recorder"]


def collect_episode(root: Path, config: CollectConfig, seed: int,
                    keep_frames: bool = False) -> tuple[dict[str, Any], RecordedEpisode | None]:
    """Record one seed into ``root/.staging`` (atomically).

    Returns:
        The record (``episode.json``: episode metadata, ``has_frames`` and ``error``, non-empty
        when the expert crashed, which counts as a failure) and, with ``keep_frames``, the
        episode as recorded (raw frames included), else ``None``.
    """
    from agentic_env.datasets.recording import EpisodeRequest
    from agentic_env.tasks.instructions import CATEGORIES

    final = staged_folder(root, seed)
    tmp = final.with_name(f"{final.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    request = EpisodeRequest(seed=seed, instruction_category=CATEGORIES[seed % len(CATEGORIES)],
                             disturbances=config.disturbances)
    videos = {cam: tmp / f"{video_key(cam)}.mp4" for cam in ("shoulder", "wrist")}
    recorder = _recorder(config)
    episode = None
    try:
        episode = recorder.record(request, videos, keep_frames=keep_frames)
    except Exception as error:  # a crashed expert episode is a failure to count, not the end
        record: dict[str, Any] = {"seed": seed, "success": False, "has_frames": False,
                                  "error": f"{type(error).__name__}: {error}", "length": 0}
    else:
        keep = episode.success or config.keep_failed
        if keep:
            write_staged_frames(episode, tmp, config.control_hz)
        else:
            for path in videos.values():
                path.unlink(missing_ok=True)
        record = {**episode.metadata, "has_frames": keep, "error": "",
                  "length": episode.length, "image_stats": episode.image_stats,
                  "depth_stats": episode.depth_stats}
    stage_atomically(final, record, tmp)
    return record, episode if keep_frames else None


def _worker_job(job: tuple[Path, CollectConfig, int]) -> dict[str, Any]:
    os.environ.setdefault("MUJOCO_GL", "egl")
    return collect_episode(*job)[0]


def camera_metadata(config: CollectConfig) -> dict[str, dict[str, Any]]:
    """Intrinsics, optics and mounting of both cameras (``meta/cameras.json``)."""
    from agentic_env.geometry.camera import azure_kinect_color, realsense_d405

    cameras = {}
    for cam, device, mount in (
        (azure_kinect_color(config.width, config.height), "Azure Kinect colour camera",
         "fixed on a stand; pose per frame in observation.extrinsics.shoulder"),
        (realsense_d405(config.width, config.height), "Intel RealSense D405",
         "on the gripper; pose per frame in observation.extrinsics.wrist"),
    ):
        cameras[cam.name] = {
            "device": device, "width": cam.width, "height": cam.height,
            "fovy_deg": cam.fovy_deg, "fovx_deg": cam.fovx_deg,
            "depth_range_m": [cam.depth_min, cam.depth_max],
            "intrinsics": cam.intrinsics.tolist(),
            "intrinsics_convention": "OpenCV pinhole K (x right, y down, z forward), pixels",
            "extrinsics_convention": "4x4 pose of the OpenCV camera frame in the robot base "
                                     "frame (camera -> base), metres",
            "mount": mount,
        }
    return cameras


def _config_dict(config: CollectConfig) -> dict[str, Any]:
    stored = asdict(config)
    stored["disturbances"] = list(stored["disturbances"])
    return stored


def _finished(root: Path) -> dict[str, Any] | None:
    """The summary (``meta/collection.json``) of the finished dataset in ``root``, if any."""
    if not (root / "meta/info.json").is_file():
        return None
    return dict(json.loads((root / "meta/collection.json").read_text()))


def _check_resume(root: Path, config: CollectConfig) -> None:
    """Refuse to resume a collection (staged or finished) of other settings."""
    path = root / STAGING / CONFIG_FILE
    finished = _finished(root)
    if path.is_file():
        previous = json.loads(path.read_text())
    elif finished is not None:
        previous = finished.get("config", {})
    else:
        return
    stored = _config_dict(config)
    if previous != stored:
        differing = sorted(k for k in stored if previous.get(k) != stored[k])
        raise InvalidConfigError(
            f"{root} holds a collection with other settings ({', '.join(differing)}); "
            "resume with the same options or choose another --out"
        )


def _check_seeds(root: Path, seed_start: int, limit: int) -> None:
    """Refuse demonstration seeds outside the reserved range: those this run may try, and
    those ``root`` holds already (a collection made before the range was reserved)."""
    from agentic_env.datasets.reader import DatasetReader

    check_demonstration_seeds(range(seed_start, seed_start + limit))
    held = {int(record["seed"]) for _, record in staged_records(root)}
    if (root / "meta/info.json").is_file():
        held |= {int(row["agentic_env/seed"]) for row in DatasetReader(root).episodes}
    outside = sorted(s for s in held if s not in DEMONSTRATION_SEEDS)
    if outside:
        raise InvalidConfigError(
            f"{root} holds {len(outside)} episode(s) of seeds {outside[0]}-{outside[-1]}, "
            f"outside the demonstration range {describe(DEMONSTRATION_SEEDS)} (evaluations "
            f"use {describe(EVALUATION_SEEDS)}): it was collected before the ranges were "
            "reserved; collect into another --out")


def collect(root: Path, config: CollectConfig, episodes: int, workers: int = 1,
            seed_start: int = DEMONSTRATION_SEED_START, max_attempts: int | None = None,
            progress: bool = True,
            recordings: dict[int, RecordedEpisode] | None = None) -> dict[str, Any]:
    """Collect until ``episodes`` episodes are in the dataset (resuming what ``root`` holds).

    Staged episodes are deleted once the dataset is built (see the module docstring).

    Args:
        root: dataset folder (created; resumed when it holds a collection of ``config``).
        config: what to record.
        episodes: episodes wanted in the dataset (successful ones unless ``keep_failed``).
        workers: spawned worker processes (1 = in this process).
        seed_start: first trial seed (in
            :data:`~agentic_env.contract.seeds.DEMONSTRATION_SEEDS`).
        max_attempts: give up after this many seeds in all (default ``2 * episodes + 10``).
        progress: show a progress bar.
        recordings: when given (with ``workers=1``), filled with seed -> the episode as
            recorded, raw frames included (for :func:`~agentic_env.datasets.reader.verify_dataset`).

    Returns:
        The collection summary (also in ``meta/collection.json``).

    Raises:
        InvalidConfigError: on a bad option, seeds outside the demonstration range (these or
            the folder's), or a folder holding another collection.
    """
    if episodes < 1 or workers < 1:
        raise InvalidConfigError("--episodes and --workers must be >= 1")
    if recordings is not None and workers != 1:
        raise InvalidConfigError("keeping the recordings needs workers=1 (in-process)")
    root.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(root / STAGING_TRASH, ignore_errors=True)
    _check_resume(root, config)
    limit = max_attempts if max_attempts is not None else 2 * episodes + 10
    _check_seeds(root, seed_start, limit)
    finished = _finished(root)
    if finished is not None and not (root / STAGING).exists() and (
            finished["episodes_in_dataset"] >= episodes
            or finished["episodes_attempted"] >= limit):
        return finished
    config_path = root / STAGING / CONFIG_FILE
    if not config_path.is_file():
        config_path.parent.mkdir(parents=True, exist_ok=True)
        config_path.write_text(json.dumps(_config_dict(config), indent=2))
    for leftover in (root / STAGING).glob("*.tmp-*"):
        shutil.rmtree(leftover)
    unstage_dataset(root)
    done = {record["seed"]: record for _, record in staged_records(root)}

    def kept(record: dict[str, Any]) -> bool:
        return bool(record["has_frames"])

    bar = tqdm(total=episodes, desc="demonstrations", unit="episode", disable=not progress,
               initial=min(episodes, sum(map(kept, done.values()))))
    pool = (multiprocessing.get_context("spawn").Pool(workers) if workers > 1 else None)
    next_seed = seed_start
    try:
        while True:
            missing = episodes - sum(map(kept, done.values()))
            budget = limit - len(done)
            if missing <= 0 or budget <= 0:
                break
            seeds: list[int] = []
            while len(seeds) < min(missing, budget):
                if next_seed not in done:
                    seeds.append(next_seed)
                next_seed += 1
            jobs = [(root, config, seed) for seed in seeds]
            if pool is not None:
                results = pool.imap_unordered(_worker_job, jobs)
            elif recordings is not None:
                results = map(lambda job: _keep(collect_episode(*job, keep_frames=True),
                                                recordings), jobs)
            else:
                results = map(_worker_job, jobs)
            for record in results:
                done[record["seed"]] = record
                bar.update(int(kept(record) and bar.n < episodes))
                bar.set_postfix(failed=sum(not r["success"] for r in done.values()))
    finally:
        bar.close()
        if pool is not None:
            pool.terminate()
    collection = {"task": config.task, "setting": config.setting, "fps": config.control_hz,
                  "codec": config.codec, "crf": config.crf, "depth": config.depth,
                  "randomize": config.randomize, "disturbances": list(config.disturbances),
                  "realism": config.realism,
                  "resolution": [config.width, config.height],
                  "cameras": camera_metadata(config),
                  "action": "joint_position targets: 6 joints (rad) + gripper width (m); "
                            "action.ee_delta holds the same motion as ee_delta actions",
                  "seed_start": seed_start, "config": _config_dict(config)}
    summary = assemble_dataset(root, collection, keep_failed=config.keep_failed)
    remove_staging(root)
    return summary


def _keep(result: tuple[dict[str, Any], RecordedEpisode | None],
          recordings: dict[int, RecordedEpisode]) -> dict[str, Any]:
    record, episode = result
    if episode is not None:
        recordings[record["seed"]] = episode
    return record


def parse_disturbance(text: str) -> dict[str, Any]:
    """``kind[:primitive[:occurrence[:magnitude]]]`` -> a disturbance dict.

    Raises:
        InvalidConfigError: on an unknown kind or malformed numbers (names the valid kinds).
    """
    from agentic_env.sim.disturbances import DisturbanceSpec

    parts = text.split(":")
    try:
        spec = DisturbanceSpec(
            kind=parts[0],
            primitive=parts[1] if len(parts) > 1 else "pick",
            occurrence=int(parts[2]) if len(parts) > 2 else 1,
            magnitude=float(parts[3]) if len(parts) > 3 else 0.0,
        )
    except ValueError as error:
        if isinstance(error, InvalidConfigError):
            raise
        raise InvalidConfigError(
            f"disturbance {text!r}: expected kind[:primitive[:occurrence[:magnitude]]], e.g. "
            "move_target:pick:1:0.06"
        ) from None
    return spec.to_dict()


def parse_resolution(text: str) -> tuple[int, int]:
    """``WxH`` -> (width, height); both even."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise InvalidConfigError(f"--resolution {text!r}: expected WxH, e.g. 640x360") from None
    if width % 2 or height % 2:
        raise InvalidConfigError(f"--resolution {text}: width and height must be even (video)")
    return width, height
