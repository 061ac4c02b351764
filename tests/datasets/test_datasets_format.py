"""LeRobot v3.0 export: a 2-episode collection reloads and matches frame by frame."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.dataset_helpers import CONFIG, EPISODES, collected_dataset

from agentic_env.contract.trial import TrialSpec
from agentic_env.datasets.lerobot_format import (
    DATA_PATH,
    EPISODES_PATH,
    STAGING,
    STAGING_TRASH,
    TASKS_PATH,
    DatasetFormatError,
    depth_key,
)
from agentic_env.datasets.reader import MIN_PSNR_DB, DatasetReader, verify_dataset
from agentic_env.datasets.recording import decode_depth_png, encode_depth_png
from agentic_env.datasets.video import VideoConfig, VideoWriter, read_video
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE


def test_export_reloads_and_matches_frame_by_frame() -> None:
    root, recordings, summary = collected_dataset()
    assert summary["episodes_in_dataset"] == EPISODES == len(recordings)
    report = verify_dataset(root, recordings)
    assert report.ok, report.problems
    assert report.episodes == EPISODES
    assert report.frames == sum(r.length for r in recordings.values())
    assert MIN_PSNR_DB <= report.min_psnr_db < float("inf")  # lossy video, but close
    assert report.max_depth_error_m <= 0.0005 + 1e-6  # millimetre PNGs
    assert not (root / STAGING).exists()  # staged episodes are deleted once assembled
    assert not (root / STAGING_TRASH).exists()


def test_info_json_describes_the_features() -> None:
    root, recordings, _ = collected_dataset()
    info = json.loads((root / "meta/info.json").read_text())
    assert info["codebase_version"] == "v3.0"
    assert info["fps"] == 20
    assert info["total_episodes"] == EPISODES
    assert info["total_frames"] == sum(r.length for r in recordings.values())
    features = info["features"]
    for cam in ("shoulder", "wrist"):
        video = features[f"observation.images.{cam}"]
        assert video["dtype"] == "video"
        assert video["shape"] == [CONFIG.height, CONFIG.width, 3]
        assert video["info"]["video.codec"] == "h264"
        assert video["info"]["is_depth_map"] is False
        depth = features[f"observation.depth.{cam}"]
        assert depth["dtype"] == "image"
        assert depth["shape"] == [CONFIG.height, CONFIG.width, 1]
        # LeRobot's depth-map markers, and the scale stated
        assert depth["info"]["is_depth_map"] is True
        assert depth["info"]["depth_unit"] == "mm"
        assert depth["info"]["depth.metres_per_unit"] == 0.001
        assert depth["info"]["depth.no_return_value"] == 0
    assert features["action"]["shape"] == [7]
    assert features["action"]["names"][-1] == "gripper_width.target"
    assert features["observation.state"]["names"][-1] == "gripper_width"
    for path in (DATA_PATH.format(chunk_index=0, file_index=1),
                 "videos/observation.images.wrist/chunk-000/file-001.mp4"):
        assert (root / path).is_file()


def test_metadata_holds_trials_tasks_cameras_and_stats() -> None:
    root, recordings, summary = collected_dataset()
    reader = DatasetReader(root)
    tasks = pq.read_table(root / TASKS_PATH)
    pandas_meta = json.loads(tasks.schema.metadata[b"pandas"])
    assert pandas_meta["index_columns"] == ["task"]  # pandas reads the strings as the index
    assert sorted(reader.tasks) == sorted(r.metadata["instruction"] for r in recordings.values())
    episodes = pq.read_table(root / EPISODES_PATH).column_names
    for column in ("episode_index", "tasks", "length", "data/chunk_index", "data/file_index",
                   "dataset_from_index", "dataset_to_index",
                   "videos/observation.images.shoulder/from_timestamp",
                   "stats/observation.state/mean", "agentic_env/trial"):
        assert column in episodes
    for e in range(len(reader)):
        trial = TrialSpec.from_dict(reader.trial(e))
        recording = recordings[int(reader.episodes[e]["agentic_env/seed"])]
        assert trial.to_dict() == recording.metadata["trial"]
        assert reader.episodes[e]["agentic_env/success"] is True
    # instruction variety: consecutive seeds ask for different paraphrase categories
    assert len(summary["instruction_categories"]) == EPISODES
    cameras = json.loads((root / "meta/cameras.json").read_text())
    np.testing.assert_allclose(cameras["shoulder"]["intrinsics"],
                               azure_kinect_color(CONFIG.width, CONFIG.height).intrinsics)
    np.testing.assert_allclose(cameras["wrist"]["intrinsics"],
                               realsense_d405(CONFIG.width, CONFIG.height).intrinsics)
    stats = json.loads((root / "meta/stats.json").read_text())
    state = np.concatenate([r.state for r in recordings.values()])
    np.testing.assert_allclose(stats["observation.state"]["mean"], state.mean(0), rtol=1e-5,
                               atol=1e-6)
    assert stats["observation.state"]["count"] == [len(state)]
    assert np.asarray(stats["observation.images.shoulder"]["mean"]).shape == (3, 1, 1)


def test_actions_are_the_applied_targets() -> None:
    _, recordings, _ = collected_dataset()
    for recording in recordings.values():
        # the joints track the targets of the period before within the servo lag
        lag = np.abs(recording.state[1:, :6] - recording.action[:-1, :6]).max()
        assert lag < 0.05
        # ee_delta's absolute gripper channel encodes the same width target
        width = (recording.ee_delta[:, 6] + 1.0) / 2.0 * GRIPPER_WIDTH_RANGE[1]
        np.testing.assert_allclose(width, recording.action[:, 6], atol=1e-6)


def test_wrist_extrinsics_follow_the_tcp() -> None:
    _, recordings, _ = collected_dataset()
    recording = next(iter(recordings.values()))
    wrist = recording.extrinsics["wrist"].reshape(-1, 4, 4)
    offset = np.linalg.norm(wrist[:, :3, 3] - recording.tcp_pose[:, :3], axis=1)
    assert offset.max() - offset.min() < 1e-3  # rigidly mounted on the gripper
    shoulder = recording.extrinsics["shoulder"]
    assert np.ptp(shoulder, axis=0).max() < 1e-6  # fixed camera, no disturbance


def test_verify_detects_a_tampered_frame(tmp_path: Path) -> None:
    root, recordings, _ = collected_dataset()
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".staging"))
    path = copy / DATA_PATH.format(chunk_index=0, file_index=0)
    table = pq.read_table(path)
    state = table.column("observation.state").combine_chunks()
    values = state.flatten().to_numpy().copy()
    values[7 * 10] += 0.01  # frame 10, first joint
    column = pa.FixedSizeListArray.from_arrays(pa.array(values), 7)
    index = table.column_names.index("observation.state")
    pq.write_table(table.set_column(index, "observation.state", column), path)
    report = verify_dataset(copy, recordings)
    assert not report.ok
    assert any("observation.state differs" in line for line in report.problems)


def test_reader_refuses_an_unfinished_dataset(tmp_path: Path) -> None:
    with pytest.raises(DatasetFormatError, match="collect command again"):
        DatasetReader(tmp_path)


def test_depth_png_round_trip() -> None:
    depth = np.array([[0.0, 0.0705, 0.4999], [1.2344, 3.86, 0.0]], np.float32)
    decoded = decode_depth_png(encode_depth_png(depth))
    assert decoded.dtype == np.float32
    assert np.abs(decoded - depth).max() <= 0.0005 + 1e-6
    assert decoded[0, 0] == 0.0


def test_video_round_trip_and_size_check(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (48, 64, 3), np.uint8)
    frames = [np.roll(base, i, axis=1) for i in range(6)]
    with VideoWriter(tmp_path / "a.mp4", 64, 48, 20.0, VideoConfig(crf=0)) as writer:
        for frame in frames:
            writer.append(frame)
        with pytest.raises(InvalidConfigError, match="expected"):
            writer.append(frames[0][:40])
    decoded = list(read_video(tmp_path / "a.mp4", 64, 48))
    assert len(decoded) == len(frames)
    with pytest.raises(InvalidConfigError, match="even"):
        VideoWriter(tmp_path / "b.mp4", 63, 48, 20.0)
    with pytest.raises(InvalidConfigError, match="h264"):
        VideoConfig(codec="mpeg2")


def test_depth_round_trip_as_lerobot_reads_it() -> None:
    """Depth cells decode (as LeRobot's loader does, with PIL) to uint16 millimetres."""
    from PIL import Image

    root, recordings, _ = collected_dataset()
    reader = DatasetReader(root)
    stats = json.loads((root / "meta/stats.json").read_text())
    for e in range(len(reader)):
        recording = recordings[int(reader.episodes[e]["agentic_env/seed"])]
        table = pq.read_table(root / DATA_PATH.format(chunk_index=0, file_index=e))
        for cam in ("shoulder", "wrist"):
            cell = table.column(depth_key(cam))[7].as_py()
            with Image.open(io.BytesIO(cell["bytes"])) as image:
                assert image.mode == "I;16"
                millimetres = np.asarray(image)
            expected = np.rint(recording.depth[cam][7] * 1000.0)
            np.testing.assert_array_equal(millimetres, expected)
            np.testing.assert_allclose(reader.depth(e, cam), np.stack(recording.depth[cam]),
                                       atol=0.0005 + 1e-6)
    for cam in ("shoulder", "wrist"):  # statistics in millimetres, beside the other features
        depth_max = max(float(np.rint(d.max() * 1000.0)) for r in recordings.values()
                        for d in r.depth[cam])
        assert 100.0 < stats[depth_key(cam)]["max"][0][0][0] <= depth_max  # of sampled frames


def test_parquet_files_carry_lerobots_schema_metadata() -> None:
    root, _, _ = collected_dataset()
    info = json.loads((root / "meta/info.json").read_text())
    data = pq.read_schema(root / DATA_PATH.format(chunk_index=0, file_index=0))
    hf = json.loads(data.metadata[b"huggingface"])["info"]["features"]
    assert list(hf) == [name for name, f in info["features"].items() if f["dtype"] != "video"]
    assert hf["observation.depth.wrist"] == {"_type": "Image"}
    assert hf["observation.state"] == {"feature": {"dtype": "float32", "_type": "Value"},
                                       "length": 7, "_type": "List"}
    assert hf["index"] == {"dtype": "int64", "_type": "Value"}
    assert hf["timestamp"] == {"dtype": "float32", "_type": "Value"}
    episodes = pq.read_schema(root / EPISODES_PATH)
    hf = json.loads(episodes.metadata[b"huggingface"])["info"]["features"]
    assert list(hf) == episodes.names
    assert hf["tasks"] == {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"}
    assert hf["stats/index/min"] == {"feature": {"dtype": "int64", "_type": "Value"},
                                     "_type": "List"}
    assert hf["agentic_env/success"] == {"dtype": "bool", "_type": "Value"}
    tasks = pq.read_schema(root / TASKS_PATH)
    assert json.loads(tasks.metadata[b"pandas"])["index_columns"] == ["task"]
