"""LeRobot itself reads what ``agentic-env collect`` writes: ``LeRobotDataset`` opens the shared
collected dataset (two reorientation episodes with depth), every episode's first and last
frame carry the right indices, timestamps, task string, image shapes and depth in millimetres,
and LeRobot's normaliser maps a batch in every mode it offers and back."""

from __future__ import annotations

from typing import Any

import pytest
from support.dataset_helpers import collected_dataset

pytest.importorskip("lerobot.datasets.lerobot_dataset")
torch = pytest.importorskip("torch")

#: The statistics LeRobot's normalisation modes read (QUANTILES / QUANTILE10: pi0.5's).
STATS = ("min", "max", "mean", "std", "q01", "q10", "q50", "q90", "q99")


@pytest.fixture(scope="module")
def dataset() -> Any:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    root = collected_dataset()[0]
    return LeRobotDataset(repo_id=f"local/{root.name}", root=root, video_backend="pyav")


def _edges(dataset: Any) -> list[int]:
    """Dataset indices of every episode's first and last frame."""
    return [i for e in range(dataset.meta.total_episodes)
            for i in (dataset.meta.episodes[e]["dataset_from_index"],
                      dataset.meta.episodes[e]["dataset_to_index"] - 1)]


def test_every_episodes_first_and_last_frame_load_as_recorded(dataset: Any) -> None:
    meta = dataset.meta
    assert meta.total_episodes == 2 and meta.video_keys
    for e in range(meta.total_episodes):
        episode = meta.episodes[e]
        first, last = episode["dataset_from_index"], episode["dataset_to_index"] - 1
        for index, frame_index in ((first, 0), (last, episode["length"] - 1)):
            item = dataset[index]
            assert int(item["episode_index"]) == e
            assert int(item["frame_index"]) == frame_index
            assert float(item["timestamp"]) == pytest.approx(frame_index / meta.fps, abs=1e-4)
            assert item["task"] == episode["tasks"][0]
            for key in meta.video_keys:
                height, width = meta.features[key]["shape"][:2]
                assert tuple(item[key].shape) == (3, height, width)
                assert 0.0 <= float(item[key].min()) <= float(item[key].max()) <= 1.0


def test_depth_is_a_lerobot_depth_map_in_millimetres(dataset: Any) -> None:
    meta = dataset.meta
    flagged = sorted(k for k, f in meta.features.items()
                     if (f.get("info") or {}).get("is_depth_map"))
    assert flagged and sorted(meta.depth_keys) == flagged
    item = dataset[0]
    for key in flagged:
        depth = item[key]
        assert depth.ndim == 3 and depth.shape[0] == 1
        assert meta.features[key]["info"]["depth_unit"] == "mm"
        valid = depth[depth > 0].to(torch.float32)
        assert 100.0 < float(valid.max()) < 5000.0  # the table is 0.3-2 m away, in mm


def test_lerobots_normaliser_maps_a_batch_in_every_mode_and_back(dataset: Any) -> None:
    from lerobot.configs.types import FeatureType, NormalizationMode
    from lerobot.processor import (
        NormalizerProcessorStep,
        TransitionKey,
        UnnormalizerProcessorStep,
        create_transition,
    )
    from lerobot.utils.feature_utils import dataset_to_policy_features

    edges = _edges(dataset)
    batch = next(iter(torch.utils.data.DataLoader(torch.utils.data.Subset(dataset, edges),
                                                  batch_size=len(edges))))
    features = dataset_to_policy_features(dataset.meta.features)
    observation = {k: batch[k].to(torch.float32) for k in features
                   if k.startswith("observation.")}
    original = {**observation, "action": batch["action"].to(torch.float32)}
    stats = dataset.meta.stats
    for key in original:
        assert set(STATS) <= set(stats[key]), key
    modes = [m for m in NormalizationMode if m != NormalizationMode.IDENTITY]
    assert NormalizationMode.QUANTILES in modes
    for mode in modes:
        norm_map = dict.fromkeys((FeatureType.STATE, FeatureType.ACTION, FeatureType.VISUAL),
                                 mode)
        forward = NormalizerProcessorStep(features=features, norm_map=norm_map, stats=stats)
        inverse = UnnormalizerProcessorStep(features=features, norm_map=norm_map, stats=stats)
        normalised = forward(create_transition(observation=dict(observation),
                                               action=original["action"].clone()))
        restored = inverse(normalised)
        values = {**normalised[TransitionKey.OBSERVATION],
                  "action": normalised[TransitionKey.ACTION]}
        back = {**restored[TransitionKey.OBSERVATION], "action": restored[TransitionKey.ACTION]}
        for key, value in values.items():
            assert bool(torch.isfinite(value).all()), (mode, key)
            scale = 1.0 + float(original[key].abs().max())
            assert float((back[key] - original[key]).abs().max()) <= 1e-3 * scale, (mode, key)
        state = values["observation.state"]
        assert not torch.equal(state, original["observation.state"]), mode
