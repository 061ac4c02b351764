"""Feature statistics of a LeRobot dataset: min, max, mean, std, count and quantiles.

LeRobot normalises policy inputs and outputs with these (``MEAN_STD``, ``MIN_MAX``,
``QUANTILES`` uses q01/q99, ``QUANTILE10`` q10/q90), stored per episode in the episodes
Parquet (``stats/<feature>/<stat>`` columns) and for the whole dataset in
``meta/stats.json``. They are computed the way LeRobot computes them:

* per episode, per vector component (or image channel): min, max, mean, standard deviation
  (population, ``ddof=0``) and the quantiles :data:`QUANTILES`, estimated from a histogram of
  :data:`HISTOGRAM_BINS` equal bins between the episode's min and max by linear interpolation
  inside the bin that holds the quantile (the minimum when that is the first bin); such an
  estimate is within one bin width, ``(max - min) / HISTOGRAM_BINS``, of the exact order
  statistic (the smallest sample with at least ``q * N`` samples at or below it);
* images (RGB and depth): a subset of the episode's frames (:func:`sample_indices`), each
  subsampled to about 150 pixels on its longer side when that side is 300 pixels or more
  (:func:`thumbnail`); every pixel of those frames counts, and ``count`` is the number of
  frames. RGB statistics are of values divided by 255 (LeRobot's [0, 1] image scale); depth
  statistics stay in the stored unit (millimetres here);
* across episodes: min of the minima, max of the maxima, the count-weighted mean, the pooled
  variance (exact), and the count-weighted mean of the per-episode quantiles. That last one is
  an approximation: the quantile of all frames lies between the smallest and the largest
  per-episode quantile, and so does the weighted mean, so the two differ by at most that
  spread (plus a histogram bin width).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: Quantile levels LeRobot stores, and their stat names.
QUANTILES: tuple[float, ...] = (0.01, 0.10, 0.50, 0.90, 0.99)
QUANTILE_KEYS: tuple[str, ...] = tuple(f"q{round(q * 100):02d}" for q in QUANTILES)
#: Every stat of a feature, in the order written.
STAT_KEYS: tuple[str, ...] = ("min", "max", "mean", "std", "count", *QUANTILE_KEYS)
#: Histogram bins per component for the quantile estimate (LeRobot's number).
HISTOGRAM_BINS = 5000
#: Images whose longer side has at least this many pixels are subsampled for statistics ...
THUMBNAIL_THRESHOLD = 300
#: ... to about this many pixels on the longer side (an integer stride).
THUMBNAIL_TARGET = 150


def sample_indices(length: int) -> list[int]:
    """Frames of an episode of ``length`` frames that enter its image statistics.

    All frames up to 100; beyond, ``length ** 0.75`` frames (at least 100, at most 10,000)
    evenly spread from the first to the last (LeRobot's heuristic).
    """
    count = length if length < 100 else max(100, min(int(length**0.75), 10_000))
    return np.round(np.linspace(0, length - 1, count)).astype(int).tolist()


def thumbnail(image: np.ndarray) -> np.ndarray:
    """An (H, W, C) image subsampled with one integer stride for its statistics.

    Unchanged below :data:`THUMBNAIL_THRESHOLD` pixels on the longer side; else every
    ``longer_side // THUMBNAIL_TARGET``-th pixel of each row and column (640 x 360 -> 160 x 90).
    """
    height, width = image.shape[:2]
    if max(height, width) < THUMBNAIL_THRESHOLD:
        return image
    stride = max(height, width) // THUMBNAIL_TARGET
    return image[::stride, ::stride]


def _histogram_quantiles(column: np.ndarray, low: float, high: float) -> list[float]:
    """Quantiles :data:`QUANTILES` of ``column`` (1-D) from a histogram over [low, high]."""
    if high <= low:  # constant: every quantile is that value
        return [low] * len(QUANTILES)
    counts, edges = np.histogram(column, bins=HISTOGRAM_BINS, range=(low, high))
    cumulative = np.cumsum(counts)
    values = []
    for q in QUANTILES:
        target = q * column.size
        index = min(int(np.searchsorted(cumulative, target)), HISTOGRAM_BINS - 1)
        if index == 0:  # in the first bin: the minimum (often repeated: no depth, closed)
            values.append(float(edges[0]))
            continue
        inside = counts[index]
        fraction = (target - cumulative[index - 1]) / inside if inside else 0.0
        values.append(float(edges[index] + fraction * (edges[index + 1] - edges[index])))
    return values


def feature_stats(values: np.ndarray, count: int | None = None) -> dict[str, np.ndarray]:
    """Statistics of each component over the first axis.

    Args:
        values: (N, D) samples (N >= 1), any numeric dtype; computed in float64.
        count: the ``count`` to report (default N; the number of frames for images, whose
            samples are pixels).

    Returns:
        Stat name (:data:`STAT_KEYS`) -> array: ``count`` of shape (1,), the others (D,).
    """
    samples = np.asarray(values, np.float64)
    low, high = samples.min(0), samples.max(0)
    stats = {"min": low, "max": high, "mean": samples.mean(0), "std": samples.std(0),
             "count": np.array([samples.shape[0] if count is None else count])}
    quantiles = np.array([_histogram_quantiles(samples[:, d], low[d], high[d])
                          for d in range(samples.shape[1])])
    for i, key in enumerate(QUANTILE_KEYS):
        stats[key] = quantiles[:, i]
    return stats


def visual_stats(frames: Sequence[np.ndarray], scale: float) -> dict[str, np.ndarray]:
    """Per-channel statistics of an episode's images.

    Args:
        frames: the thumbnails (:func:`thumbnail`) of the frames :func:`sample_indices`
            picked, each (h, w, C).
        scale: stored values per statistics unit (255 for RGB, so that statistics lie in
            [0, 1]; 1 for depth).

    Returns:
        Stat name -> array of shape (C, 1, 1) (``count``, the number of frames: (1,)).
    """
    channels = frames[0].shape[-1]
    pixels = np.concatenate([frame.reshape(-1, channels) for frame in frames])
    stats = feature_stats(pixels, count=len(frames))
    return {key: value if key == "count" else (value / scale).reshape(channels, 1, 1)
            for key, value in stats.items()}


def aggregate_stats(parts: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """Dataset statistics of one feature from its per-episode statistics.

    Pooled mean and variance weighted by ``count`` (exact), min and max of the parts, and
    quantiles as the count-weighted mean of the parts' quantiles (LeRobot's approximation;
    see the module docstring for its error bound).
    """
    counts = np.array([np.asarray(p["count"]).reshape(-1)[0] for p in parts], np.float64)
    total = counts.sum()

    def stacked(key: str) -> np.ndarray:
        return np.stack([np.asarray(p[key], np.float64) for p in parts])

    weights = counts.reshape(-1, *[1] * (stacked("mean").ndim - 1))
    means = stacked("mean")
    mean = (weights * means).sum(0) / total
    variance = (weights * (stacked("std") ** 2 + (means - mean) ** 2)).sum(0) / total
    result = {"min": stacked("min").min(0), "max": stacked("max").max(0), "mean": mean,
              "std": np.sqrt(variance), "count": np.array([int(total)])}
    for key in QUANTILE_KEYS:
        result[key] = (weights * stacked(key)).sum(0) / total
    return result


def to_json(stats: Mapping[str, np.ndarray], dtype: str) -> dict[str, Any]:
    """Stats as JSON-ready nested lists; min and max keep an integer feature's dtype."""
    integer = np.issubdtype(np.dtype(dtype), np.integer)
    out: dict[str, Any] = {}
    for key in STAT_KEYS:
        value = np.asarray(stats[key])
        if key == "count" or (integer and key in ("min", "max")):
            value = np.rint(value).astype(np.int64)
        out[key] = value.tolist()
    return out
