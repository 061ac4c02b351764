"""Feature statistics (LeRobot's min/max/mean/std/count and quantiles) against a direct computation.

Tolerances, from how the statistics are made (see :mod:`agentic_env.datasets.stats`):

* min, max and count are exact; mean and std of one episode are float64 sums of the same
  values, and across episodes the pooled mean and variance are exact up to rounding
  (relative 1e-9 here);
* a per-episode quantile comes from a 5000-bin histogram, so it lies within one bin width,
  ``(max - min) / 5000``, of the exact order statistic (numpy's ``inverted_cdf`` quantile);
* a dataset quantile is the count-weighted mean of the per-episode quantiles (LeRobot's
  aggregation), not the quantile of all frames; both lie between the smallest and the largest
  per-episode quantile, so they differ by at most that spread plus a bin width.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from support.dataset_helpers import collected_dataset

from agentic_env.datasets.lerobot_format import EPISODES_PATH, depth_key, video_key
from agentic_env.datasets.reader import DatasetReader
from agentic_env.datasets.recording import CAMERAS, depth_millimetres
from agentic_env.datasets.stats import (
    HISTOGRAM_BINS,
    QUANTILE_KEYS,
    QUANTILES,
    STAT_KEYS,
    aggregate_stats,
    feature_stats,
    sample_indices,
    thumbnail,
)

RTOL = 1e-9


def _exact_quantiles(values: np.ndarray) -> np.ndarray:
    """(len(QUANTILES), D): the smallest sample with at least q * N samples at or below it."""
    return np.quantile(np.asarray(values, np.float64), QUANTILES, axis=0, method="inverted_cdf")


def _bin_width(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, np.float64)
    return (values.max(0) - values.min(0)) / HISTOGRAM_BINS + 1e-12


def _check_episode(stats: dict[str, Any], values: np.ndarray, scale: float = 1.0) -> None:
    """Per-episode ``stats`` of the (N, D) ``values`` (stats divided by ``scale``)."""
    values = np.asarray(values, np.float64) / scale
    got = {key: np.asarray(stats[key], np.float64).reshape(-1) for key in STAT_KEYS
           if key != "count"}
    np.testing.assert_array_equal(got["min"], values.min(0))
    np.testing.assert_array_equal(got["max"], values.max(0))
    np.testing.assert_allclose(got["mean"], values.mean(0), rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(got["std"], values.std(0), rtol=RTOL, atol=1e-12)
    exact = _exact_quantiles(values)
    for i, key in enumerate(QUANTILE_KEYS):
        assert np.all(np.abs(got[key] - exact[i]) <= _bin_width(values)), key


def _check_dataset(stats: dict[str, Any], parts: list[np.ndarray], scale: float = 1.0) -> None:
    """Dataset ``stats`` of the per-episode (N_e, D) ``parts``, against all frames at once."""
    parts = [np.asarray(p, np.float64) / scale for p in parts]
    every = np.concatenate(parts)
    got = {key: np.asarray(stats[key], np.float64).reshape(-1) for key in STAT_KEYS}
    np.testing.assert_array_equal(got["min"], every.min(0))
    np.testing.assert_array_equal(got["max"], every.max(0))
    np.testing.assert_allclose(got["mean"], every.mean(0), rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(got["std"], every.std(0), rtol=RTOL, atol=1e-12)
    per_episode = np.stack([_exact_quantiles(p) for p in parts])  # (E, Q, D)
    width = np.max([_bin_width(p) for p in parts], axis=0)
    exact = _exact_quantiles(every)
    for i, key in enumerate(QUANTILE_KEYS):
        low, high = per_episode[:, i].min(0) - width, per_episode[:, i].max(0) + width
        assert np.all((low <= got[key]) & (got[key] <= high)), key
        assert np.all((low <= exact[i]) & (exact[i] <= high)), key  # the bound holds


def test_quantiles_are_within_a_bin_of_the_exact_ones() -> None:
    rng = np.random.default_rng(3)
    values = np.column_stack([
        rng.normal(size=2000),
        rng.exponential(size=2000),
        np.repeat([0.0, 0.04], 1000),  # two point masses (a gripper: closed, open)
        np.where(rng.random(2000) < 0.3, 0.0, rng.uniform(200, 900, 2000)),  # depth, no return
        np.full(2000, 0.77),  # constant (a fixed camera's pose)
    ])
    stats = feature_stats(values)
    _check_episode({k: v.tolist() for k, v in stats.items()}, values)
    assert stats["count"].tolist() == [2000]
    assert stats["q01"][3] == 0.0  # a quantile in the first bin is the minimum, as in LeRobot
    np.testing.assert_array_equal(stats["q50"][4], 0.77)


def test_aggregation_pools_moments_and_averages_quantiles() -> None:
    rng = np.random.default_rng(4)
    parts = [rng.normal(loc, 1.0, size=(n, 3)) for loc, n in ((0.0, 50), (2.0, 170), (-1.0, 90))]
    per_episode = [feature_stats(p) for p in parts]
    pooled = aggregate_stats(per_episode)
    _check_dataset(pooled, parts)
    counts = np.array([len(p) for p in parts])
    for key in QUANTILE_KEYS:  # LeRobot's aggregation: the count-weighted mean
        expected = (counts[:, None] * np.stack([s[key] for s in per_episode])).sum(0)
        np.testing.assert_allclose(pooled[key], expected / counts.sum(), rtol=1e-12)
    assert pooled["count"].tolist() == [counts.sum()]


def test_sampling_and_thumbnails_follow_lerobot() -> None:
    assert sample_indices(40) == list(range(40))
    picked = sample_indices(1100)
    assert len(picked) == int(1100**0.75) and picked[0] == 0 and picked[-1] == 1099
    assert thumbnail(np.zeros((360, 640, 3))).shape == (90, 160, 3)
    assert thumbnail(np.zeros((96, 128, 1))).shape == (96, 128, 1)


def _episode_stats(root: Any) -> list[dict[str, dict[str, Any]]]:
    """Per-episode stats from the episodes Parquet: episode -> feature -> stat -> value."""
    rows = pq.read_table(root / EPISODES_PATH).to_pylist()
    out = []
    for row in rows:
        stats: dict[str, dict[str, Any]] = {}
        for column, value in row.items():
            if column.startswith("stats/"):
                feature, stat = column[len("stats/"):].rsplit("/", 1)
                stats.setdefault(feature, {})[stat] = value
        out.append(stats)
    return out


def test_every_feature_has_every_stat_in_its_shape_and_dtype() -> None:
    root, _, _ = collected_dataset()
    reader = DatasetReader(root)
    stats = json.loads((root / "meta/stats.json").read_text())
    assert set(stats) == set(reader.features)
    for per_episode in [stats, *_episode_stats(root)]:
        assert set(per_episode) == set(reader.features)
        for name, feature in reader.features.items():
            assert list(per_episode[name]) == list(STAT_KEYS), name
            if feature["dtype"] in ("video", "image"):
                shape = (feature["shape"][2], 1, 1)  # per channel, LeRobot's nesting
            else:
                shape = tuple(feature["shape"])
            for key in STAT_KEYS:
                value = np.asarray(per_episode[name][key])
                assert value.shape == ((1,) if key == "count" else shape), (name, key)
            if feature["dtype"] == "int64":  # min and max keep the integer dtype
                assert all(isinstance(v, int) for v in per_episode[name]["min"])
                assert all(isinstance(v, int) for v in per_episode[name]["max"])


def test_numeric_stats_match_a_direct_computation() -> None:
    root, _, _ = collected_dataset()
    reader = DatasetReader(root)
    stats = json.loads((root / "meta/stats.json").read_text())
    episodes = _episode_stats(root)
    frames = [reader.frames(e) for e in range(len(reader))]
    numeric = [n for n, f in reader.features.items() if f["dtype"] not in ("video", "image")]
    for name in numeric:
        parts = [f[name].reshape(len(f[name]), -1) for f in frames]
        for part, per_episode in zip(parts, episodes, strict=True):
            _check_episode(per_episode[name], part)
            assert per_episode[name]["count"] == [len(part)]
        _check_dataset(stats[name], parts)
        assert stats[name]["count"] == [sum(len(p) for p in parts)]


@pytest.mark.parametrize("kind", ["rgb", "depth"])
def test_image_stats_match_a_direct_computation(kind: str) -> None:
    """Images: LeRobot's frame sample and thumbnails of the recorded frames, every pixel."""
    root, recordings, _ = collected_dataset()
    reader = DatasetReader(root)
    stats = json.loads((root / "meta/stats.json").read_text())
    episodes = _episode_stats(root)
    for cam in CAMERAS:
        name, scale = (video_key(cam), 255.0) if kind == "rgb" else (depth_key(cam), 1.0)
        parts = []
        for e, per_episode in enumerate(episodes):
            recording = recordings[int(reader.episodes[e]["agentic_env/seed"])]
            raw = (recording.rgb[cam] if kind == "rgb"
                   else [depth_millimetres(d)[..., None] for d in recording.depth[cam]])
            picked = sample_indices(len(raw))
            pixels = np.concatenate([thumbnail(raw[i]).reshape(-1, raw[i].shape[-1])
                                     for i in picked])
            _check_episode(per_episode[name], pixels, scale)
            assert per_episode[name]["count"] == [len(picked)]
            parts.append(pixels)
        # LeRobot weights episodes by sampled frames, not pixels; equal-size frames make
        # that the same pooling as over all sampled pixels
        _check_dataset(stats[name], parts, scale)
    if kind == "depth":
        depth_stats = stats[depth_key("shoulder")]
        assert depth_stats["min"] == [[[0.0]]]  # no-return pixels (0 mm) count, as in LeRobot
        assert 300.0 < depth_stats["q50"][0][0][0] < 5000.0  # millimetres, not metres
