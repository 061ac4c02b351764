"""The LeRobot dataset format (codebase version ``v3.0``), written with pyarrow and ffmpeg.

Layout of a dataset folder (what ``lerobot.datasets.LeRobotDataset`` reads)::

    meta/info.json                          features (names, dtypes, shapes), fps, paths
    meta/stats.json                         per-feature min/max/mean/std/count and quantiles
                                            q01/q10/q50/q90/q99 (see agentic_env.datasets.stats)
    meta/tasks.parquet                      task strings (the index) -> task_index
    meta/episodes/chunk-000/file-000.parquet  one row per episode: length, task strings,
                                            data/video file and frame ranges, stats, and the
                                            agentic_env/* columns (trial spec JSON, success,
                                            progress score, seed, paraphrase category)
    meta/cameras.json                       intrinsics and mounting of each camera
    meta/collection.json                    how the data was collected, failures counted
    meta/demonstration_seeds.json           the trial seeds of the episodes, so that an
                                            evaluation on one of them is refused
                                            (agentic_env.contract.seeds)
    data/chunk-CCC/file-FFF.parquet         frames of one episode (episode e: chunk e // 1000,
                                            file e % 1000)
    videos/observation.images.<cam>/chunk-CCC/file-FFF.mp4   one MP4 per episode and camera

LeRobot packs many episodes per file; one episode per file is the same format (every episode
row names its files and its time range in them) and lets episodes be written independently.
The Parquet files carry the schema metadata LeRobot's writers leave: the Hugging Face
``datasets`` features (``huggingface`` key) on the data and episode files, pandas' (``pandas``
key, task strings as the index named ``task``) on the tasks file.

Depth follows LeRobot's convention for depth maps stored as images (not as quantised 12-bit
video): the feature's ``info`` has ``is_depth_map: true`` and ``depth_unit: "mm"``, so LeRobot
(>= 0.6) decodes it to float32 millimetres, leaves it out of RGB transforms, and keeps its
statistics in millimetres; ``depth.metres_per_unit`` (0.001) states the scale.

Frame features (``<cam>`` in shoulder, wrist):

==================================  =========  ===============================================
feature                             shape      meaning
==================================  =========  ===============================================
``observation.images.<cam>``        H, W, 3    RGB video (yuv420p MP4)
``observation.depth.<cam>``         H, W, 1    optional: 16-bit PNG, depth in millimetres along
                                               the optical axis, 0 = no return (LeRobot's raw
                                               depth-image form: ``is_depth_map``, ``depth_unit``)
``observation.state``               7          six joint positions (rad), gripper width (m)
``observation.tcp_pose``            7          TCP in the robot base frame: x, y, z (m),
                                               quaternion w, x, y, z
``observation.extrinsics.<cam>``    16         row-major 4x4 pose of the OpenCV camera frame in
                                               the base frame (the wrist camera moves)
``action``                          7          joint targets (rad) and gripper width target
                                               (m) sent during the next control period: the
                                               ``joint_position`` action, replays exactly
``action.ee_delta``                 7          the same motion as a normalised ``ee_delta``
                                               action (base-frame translation and rotation
                                               rates, absolute gripper in [-1, 1])
``timestamp``                       1          frame_index / fps, seconds
``frame_index``, ``episode_index``,  1         LeRobot's indices
``index``, ``task_index``
==================================  =========  ===============================================
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentic_env.contract.features import (
    CAMERAS,
    DEPTH_UNITS_PER_METRE,
    depth_key,
    extrinsics_key,
    video_key,
)
from agentic_env.contract.seeds import write_seeds
from agentic_env.datasets.recording import RecordedEpisode
from agentic_env.datasets.stats import STAT_KEYS, aggregate_stats, feature_stats, to_json
from agentic_env.errors import AgenticEnvError

CODEBASE_VERSION = "v3.0"
CHUNKS_SIZE = 1000
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-000/file-000.parquet"
TASKS_PATH = "meta/tasks.parquet"
#: Folder (inside the dataset) of finished episodes waiting to be assembled; never read by
#: LeRobot, and removed once the dataset is complete.
STAGING = ".staging"
#: What a finished collection's staging folder is renamed to before it is deleted, so that
#: an interrupted deletion never leaves a partly deleted episode that looks finished.
STAGING_TRASH = ".staging-removed"
STAGED_FRAMES = "frames.parquet"
STAGED_RECORD = "episode.json"
ROBOT_TYPE = "ur5e_finray"
JOINT_NAMES = ("shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3")
INDEX_COLUMNS = ("episode_index", "index", "task_index")


class DatasetFormatError(AgenticEnvError, ValueError):
    """A dataset folder is incomplete or does not match its ``meta/info.json``."""


def require_pyarrow() -> Any:
    """``(pyarrow, pyarrow.parquet)``, or an error naming the ``data`` extra to install."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as missing:
        raise AgenticEnvError(
            "writing and reading LeRobot datasets needs pyarrow: install the 'data' extra "
            "(pip install -e '.[data]')"
        ) from missing
    return pa, pq


def vector_features() -> dict[str, dict[str, Any]]:
    """The per-frame vector features (name -> LeRobot feature dict)."""
    features = {
        "observation.state": {"dtype": "float32", "shape": [7],
                              "names": [*JOINT_NAMES, "gripper_width"]},
        "observation.tcp_pose": {"dtype": "float32", "shape": [7],
                                 "names": ["x", "y", "z", "qw", "qx", "qy", "qz"]},
    }
    for cam in CAMERAS:
        features[extrinsics_key(cam)] = {
            "dtype": "float32", "shape": [16],
            "names": [f"T{r}{c}" for r in range(4) for c in range(4)]}
    features["action"] = {"dtype": "float32", "shape": [7],
                          "names": [*(f"{j}.target" for j in JOINT_NAMES), "gripper_width.target"]}
    features["action.ee_delta"] = {"dtype": "float32", "shape": [7],
                                   "names": ["dx", "dy", "dz", "drx", "dry", "drz", "gripper"]}
    return features


def _vector_columns(episode: RecordedEpisode) -> dict[str, np.ndarray]:
    columns = {"observation.state": episode.state, "observation.tcp_pose": episode.tcp_pose}
    for cam in CAMERAS:
        columns[extrinsics_key(cam)] = episode.extrinsics[cam]
    columns["action"] = episode.action
    columns["action.ee_delta"] = episode.ee_delta
    return columns


def dataset_features(cameras: dict[str, dict[str, Any]], fps: float, codec: str,
                     depth: bool) -> dict[str, dict[str, Any]]:
    """All features of ``meta/info.json``.

    Args:
        cameras: camera name -> ``{"width", "height", "intrinsics", ...}`` (see
            :func:`camera_metadata`).
        fps: frames per second (the control rate).
        codec: video codec name (``h264`` or ``av1``).
        depth: whether depth images are stored.
    """
    features: dict[str, dict[str, Any]] = {}
    for cam in CAMERAS:
        info = cameras[cam]
        features[video_key(cam)] = {
            "dtype": "video", "shape": [info["height"], info["width"], 3],
            "names": ["height", "width", "channels"],
            "info": {"video.height": info["height"], "video.width": info["width"],
                     "video.codec": codec, "video.pix_fmt": "yuv420p",
                     "is_depth_map": False, "video.fps": float(fps),
                     "video.channels": 3, "has_audio": False,
                     "camera.intrinsics": info["intrinsics"]},
        }
    if depth:
        for cam in CAMERAS:
            info = cameras[cam]
            features[depth_key(cam)] = {
                "dtype": "image", "shape": [info["height"], info["width"], 1],
                "names": ["height", "width", "channels"],
                "info": {"is_depth_map": True, "depth_unit": "mm",
                         "depth.metres_per_unit": 1.0 / DEPTH_UNITS_PER_METRE,
                         "depth.no_return_value": 0,
                         "depth.range_m": info["depth_range_m"],
                         "depth.axis": "distance along the optical axis (z), not along the ray",
                         "image.encoding": "png, 16-bit greyscale (uint16)",
                         "camera.intrinsics": info["intrinsics"]},
            }
    features.update(vector_features())
    features["timestamp"] = {"dtype": "float32", "shape": [1], "names": None}
    for name in ("frame_index", *INDEX_COLUMNS):
        features[name] = {"dtype": "int64", "shape": [1], "names": None}
    return features


def _fixed_list(values: np.ndarray) -> Any:
    pa, _ = require_pyarrow()
    values = np.asarray(values, np.float32)
    return pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), values.shape[1])


def _image_column(pngs: Sequence[bytes]) -> Any:
    pa, _ = require_pyarrow()
    return pa.StructArray.from_arrays(
        [pa.array(list(pngs), pa.binary()), pa.array([None] * len(pngs), pa.string())],
        names=["bytes", "path"])


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_staged_frames(episode: RecordedEpisode, folder: Path, fps: float) -> None:
    """Write an episode's per-frame columns (no dataset indices yet) to ``folder``."""
    pa, pq = require_pyarrow()
    n = episode.length
    columns: dict[str, Any] = {}
    for cam, pngs in episode.depth_png.items():
        columns[depth_key(cam)] = _image_column(pngs)
    for name, values in _vector_columns(episode).items():
        columns[name] = _fixed_list(values)
    columns["timestamp"] = pa.array((np.arange(n) / fps).astype(np.float32))
    columns["frame_index"] = pa.array(np.arange(n, dtype=np.int64))
    pq.write_table(pa.table(columns), folder / STAGED_FRAMES)


def _hf_value(dtype: str) -> dict[str, Any]:
    return {"dtype": dtype, "_type": "Value"}


def _hf_from_arrow(arrow_type: Any) -> dict[str, Any]:
    """A ``datasets`` feature (as serialised) of a Parquet column of type ``arrow_type``."""
    pa, _ = require_pyarrow()
    if pa.types.is_fixed_size_list(arrow_type):
        return {"feature": _hf_from_arrow(arrow_type.value_type),
                "length": arrow_type.list_size, "_type": "List"}
    if pa.types.is_list(arrow_type):
        return {"feature": _hf_from_arrow(arrow_type.value_type), "_type": "List"}
    if pa.types.is_string(arrow_type):
        return _hf_value("string")
    if pa.types.is_boolean(arrow_type):
        return _hf_value("bool")
    return _hf_value(arrow_type.to_pandas_dtype().__name__)


def with_hf_features(table: Any, features: dict[str, dict[str, Any]] | None = None) -> Any:
    """``table`` with the ``huggingface`` schema metadata that ``datasets`` writes.

    Args:
        table: a pyarrow table.
        features: the dataset's features (``meta/info.json``): image features become
            ``Image``, the rest follows the column types; ``None`` derives all from the types.
    """
    hf: dict[str, Any] = {}
    for field in table.schema:
        if features is not None and features[field.name]["dtype"] == "image":
            hf[field.name] = {"_type": "Image"}
        else:
            hf[field.name] = _hf_from_arrow(field.type)
    metadata = {b"huggingface": json.dumps({"info": {"features": hf}}).encode()}
    return table.replace_schema_metadata(metadata)


def _stats_dtype(feature: dict[str, Any]) -> str:
    """The dtype that stats' min and max keep (images and videos: float32)."""
    return "float32" if feature["dtype"] in ("image", "video") else str(feature["dtype"])


def _column_stats(table: Any, name: str, feature: dict[str, Any]) -> dict[str, Any]:
    """Per-episode stats of a numeric column (JSON-ready)."""
    column = table.column(name).combine_chunks()
    if feature["shape"] == [1]:
        values = column.to_numpy().reshape(-1, 1)
    else:
        values = column.flatten().to_numpy().reshape(len(column), -1)
    return to_json(feature_stats(values), _stats_dtype(feature))


def _tasks_table(tasks: Sequence[str]) -> Any:
    """``meta/tasks.parquet`` as pandas writes it: task strings as the index."""
    pa, _ = require_pyarrow()
    pandas_meta = {
        "index_columns": ["task"],
        "column_indexes": [{"name": None, "field_name": None, "pandas_type": "unicode",
                            "numpy_type": "object", "metadata": {"encoding": "UTF-8"}}],
        "columns": [
            {"name": "task_index", "field_name": "task_index", "pandas_type": "int64",
             "numpy_type": "int64", "metadata": None},
            {"name": "task", "field_name": "task", "pandas_type": "unicode",
             "numpy_type": "object", "metadata": None},
        ],
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": "2.2.3",
    }
    table = pa.table({"task_index": pa.array(range(len(tasks)), pa.int64()),
                      "task": pa.array(list(tasks), pa.string())})
    return table.replace_schema_metadata({b"pandas": json.dumps(pandas_meta).encode()})


def staged_folder(root: Path, seed: int) -> Path:
    """Where a finished episode of trial ``seed`` is staged."""
    return root / STAGING / f"seed-{seed:06d}"


def stage_atomically(final: Path, record: dict[str, Any], tmp: Path) -> None:
    """Write ``record`` into ``tmp`` (holding the episode's files) and rename it to ``final``.

    If ``final`` exists already (another run finished this seed meanwhile), the first one is
    kept and ``tmp`` deleted.
    """
    (tmp / STAGED_RECORD).write_text(json.dumps(record))
    if final.exists():
        shutil.rmtree(tmp)
    else:
        os.rename(tmp, final)


def staged_records(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Finished staged episodes of a dataset folder, by seed: (folder, record)."""
    staging = root / STAGING
    if not staging.is_dir():
        return []
    found = []
    for folder in sorted(staging.iterdir()):
        record_path = folder / STAGED_RECORD
        if folder.is_dir() and ".tmp" not in folder.name and record_path.is_file():
            found.append((folder, json.loads(record_path.read_text())))
    return sorted(found, key=lambda item: item[1]["seed"])


def _link_or_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def assemble_dataset(root: Path, collection: dict[str, Any],
                     keep_failed: bool = False) -> dict[str, Any]:
    """(Re)build the LeRobot dataset in ``root`` from its finished staged episodes.

    Idempotent: ``data/``, ``videos/`` and ``meta/`` are rebuilt from ``.staging/`` every
    time (videos are hard-linked, not copied), so an interrupted run is repaired by running
    it again. ``meta/info.json`` is written last.

    Args:
        root: dataset folder.
        collection: what was collected and how (``fps``, ``codec``, ``depth``, ``cameras``,
            task, setting...); stored in ``meta/collection.json``.
        keep_failed: include episodes whose expert failed (excluded by default).

    Returns:
        The collection summary written to ``meta/collection.json``.
    """
    pa, pq = require_pyarrow()
    staged = staged_records(root)
    included = [(folder, record) for folder, record in staged
                if record["has_frames"] and (record["success"] or keep_failed)]
    (root / "meta/info.json").unlink(missing_ok=True)  # first: the folder is no dataset now
    for name in ("data", "videos", "meta"):
        shutil.rmtree(root / name, ignore_errors=True)
    fps, depth = float(collection["fps"]), bool(collection["depth"])
    features = dataset_features(collection["cameras"], fps, collection["codec"], depth)
    order = [name for name in features if features[name]["dtype"] != "video"]
    tasks: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    episode_stats: list[dict[str, dict[str, Any]]] = []
    offset = 0
    for episode_index, (folder, record) in enumerate(included):
        table = pq.read_table(folder / STAGED_FRAMES)
        n = table.num_rows
        task_index = tasks.setdefault(record["instruction"], len(tasks))
        extra = {"episode_index": np.full(n, episode_index, np.int64),
                 "index": np.arange(offset, offset + n, dtype=np.int64),
                 "task_index": np.full(n, task_index, np.int64)}
        for name, values in extra.items():
            table = table.append_column(name, pa.array(values))
        table = with_hf_features(table.select(order), features)
        chunk, file = divmod(episode_index, CHUNKS_SIZE)
        data_path = root / DATA_PATH.format(chunk_index=chunk, file_index=file)
        data_path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, data_path)
        stats = {name: _column_stats(table, name, features[name]) for name in order
                 if features[name]["dtype"] != "image"}
        if depth:
            stats |= {depth_key(cam): record["depth_stats"][cam] for cam in CAMERAS}
        row: dict[str, Any] = {
            "episode_index": episode_index, "tasks": [record["instruction"]], "length": n,
            "data/chunk_index": chunk, "data/file_index": file,
            "dataset_from_index": offset, "dataset_to_index": offset + n,
        }
        for cam in CAMERAS:
            key = video_key(cam)
            _link_or_copy(folder / f"{key}.mp4",
                          root / VIDEO_PATH.format(video_key=key, chunk_index=chunk,
                                                   file_index=file))
            row |= {f"videos/{key}/chunk_index": chunk, f"videos/{key}/file_index": file,
                    f"videos/{key}/from_timestamp": 0.0, f"videos/{key}/to_timestamp": n / fps}
            stats[key] = record["image_stats"][cam]
        row |= {"meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0}
        for name in features:
            if name in stats:
                row |= {f"stats/{name}/{stat}": stats[name][stat] for stat in STAT_KEYS}
        row |= {
            "agentic_env/seed": record["seed"],
            "agentic_env/success": record["success"],
            "agentic_env/progress": record["progress"],
            "agentic_env/instruction_category": record["instruction_category"],
            "agentic_env/trial": json.dumps(record["trial"]),
            "agentic_env/progress_score": json.dumps(record["progress_score"]),
            "agentic_env/disturbances_applied": json.dumps(record["disturbances_applied"]),
        }
        rows.append(row)
        episode_stats.append(stats)
        offset += n
    meta = root / "meta"
    (meta / "episodes/chunk-000").mkdir(parents=True, exist_ok=True)
    if rows:
        pq.write_table(with_hf_features(pa.Table.from_pylist(rows)), root / EPISODES_PATH)
    pq.write_table(_tasks_table(list(tasks)), root / TASKS_PATH)
    stats_all = {name: to_json(aggregate_stats([s[name] for s in episode_stats]),
                               _stats_dtype(features[name]))
                 for name in features if episode_stats and name in episode_stats[0]}
    (meta / "stats.json").write_text(json.dumps(stats_all, indent=2))
    (meta / "cameras.json").write_text(json.dumps(collection["cameras"], indent=2))
    failed = [r for _, r in staged if not r["success"]]
    summary = {
        **collection,
        "episodes_attempted": len(staged),
        "episodes_succeeded": sum(r["success"] for _, r in staged),
        "episodes_failed": len(failed),
        "failed_seeds": [r["seed"] for r in failed],
        "episodes_in_dataset": len(rows),
        "frames_in_dataset": offset,
        "failed_episodes_included": keep_failed,
        "instruction_categories": _count(r["instruction_category"] for _, r in included),
    }
    (meta / "collection.json").write_text(json.dumps(summary, indent=2))
    write_seeds(meta, (r["seed"] for _, r in included), source=root.name)
    info = {
        "codebase_version": CODEBASE_VERSION,
        "robot_type": ROBOT_TYPE,
        "total_episodes": len(rows),
        "total_frames": offset,
        "total_tasks": len(tasks),
        "chunks_size": CHUNKS_SIZE,
        "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 500,
        "fps": int(round(fps)),
        "splits": {"train": f"0:{len(rows)}"},
        "data_path": DATA_PATH,
        "video_path": VIDEO_PATH,
        "features": features,
    }
    (meta / "info.json").write_text(json.dumps(info, indent=4))
    return summary


def remove_staging(root: Path) -> None:
    """Delete ``root/.staging`` (and the remains of an interrupted deletion)."""
    trash = root / STAGING_TRASH
    shutil.rmtree(trash, ignore_errors=True)
    if (root / STAGING).is_dir():
        os.rename(root / STAGING, trash)
        shutil.rmtree(trash)


def unstage_dataset(root: Path) -> None:
    """Put a finished dataset's episodes back into ``root/.staging`` (assembly's inverse).

    A finished collection keeps no staging folder; a further run into the same folder (more
    episodes asked for) stages the dataset's episodes again (frames without the dataset
    indices, hard-linked videos, the record with its statistics) and its failed seeds (records
    without frames), then rebuilds the dataset from the staging folder as usual. Seeds
    already staged are left alone, and each episode is staged atomically, so a kill during
    this is repaired by running again. Nothing happens without ``meta/info.json``.
    """
    if not (root / "meta/info.json").is_file():
        return
    _, pq = require_pyarrow()
    info = json.loads((root / "meta/info.json").read_text())
    collection = json.loads((root / "meta/collection.json").read_text())
    staged = {record["seed"] for _, record in staged_records(root)}
    rows = pq.read_table(root / EPISODES_PATH).to_pylist() if info["total_episodes"] else []
    in_dataset = {int(row["agentic_env/seed"]) for row in rows}
    visual = {"image_stats": video_key, "depth_stats": depth_key}
    for row in rows:
        seed = int(row["agentic_env/seed"])
        if seed in staged:
            continue
        final = staged_folder(root, seed)
        tmp = final.with_name(f"{final.name}.tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        chunk, file = row["data/chunk_index"], row["data/file_index"]
        frames = pq.read_table(root / DATA_PATH.format(chunk_index=chunk, file_index=file))
        pq.write_table(frames.drop_columns(list(INDEX_COLUMNS)).replace_schema_metadata(None),
                       tmp / STAGED_FRAMES)
        for cam in CAMERAS:
            key = video_key(cam)
            _link_or_copy(root / VIDEO_PATH.format(
                video_key=key, chunk_index=row[f"videos/{key}/chunk_index"],
                file_index=row[f"videos/{key}/file_index"]), tmp / f"{key}.mp4")
        record: dict[str, Any] = {
            "seed": seed, "success": row["agentic_env/success"],
            "progress": row["agentic_env/progress"], "instruction": row["tasks"][0],
            "instruction_category": row["agentic_env/instruction_category"],
            "trial": json.loads(row["agentic_env/trial"]),
            "progress_score": json.loads(row["agentic_env/progress_score"]),
            "disturbances_applied": json.loads(row["agentic_env/disturbances_applied"]),
            "has_frames": True, "error": "", "length": row["length"],
        }
        for name, key_of in visual.items():
            record[name] = {cam: {stat: row[f"stats/{key_of(cam)}/{stat}"] for stat in STAT_KEYS}
                            for cam in CAMERAS if f"stats/{key_of(cam)}/min" in row}
        stage_atomically(final, record, tmp)
    for seed in collection["failed_seeds"]:
        if seed not in staged and seed not in in_dataset:
            final = staged_folder(root, seed)
            tmp = final.with_name(f"{final.name}.tmp-{os.getpid()}")
            tmp.mkdir(parents=True, exist_ok=True)
            stage_atomically(final, {"seed": seed, "success": False, "has_frames": False,
                                     "error": "", "length": 0}, tmp)


def _count(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items()))
