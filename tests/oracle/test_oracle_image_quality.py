"""The image-quality term: a frame's noise, contrast and brightness measured on its pixels,
each mapped to a published detector's loss under the matching COCO-C corruption."""

from __future__ import annotations

import math
import tomllib
from dataclasses import replace
from importlib import resources

import numpy as np
import pytest

from agentic_env.oracle.image_quality import (
    CORRUPTIONS,
    CORRUPTIONS_FILE,
    CorruptionCurve,
    ImageQuality,
    measure,
    quality_model,
)


def _scene(rng: np.random.Generator) -> np.ndarray:
    """A smooth 8-bit test frame (480 x 640): ramps and a few flat patches."""
    rows, cols = np.mgrid[0:480, 0:640].astype(np.float64)
    base = 60 + 0.2 * cols + 0.1 * rows
    for _ in range(6):
        r, c = rng.integers(0, 400), rng.integers(0, 560)
        base[r:r + 80, c:c + 80] = rng.uniform(30, 220)
    return np.repeat(base[..., None], 3, axis=2)


@pytest.mark.parametrize("sigma", [0.01, 0.04, 0.1])
def test_the_noise_estimate_recovers_the_noise_added_to_a_frame(sigma: float) -> None:
    rng = np.random.default_rng(3)
    scene = _scene(rng)
    noisy = np.clip(scene + rng.normal(0.0, sigma * 255.0, scene.shape[:2])[..., None], 0, 255)
    estimate = measure(noisy.astype(np.uint8)).noise
    # rounding to 8 bits adds 1/255/sqrt(12) in quadrature; the patch edges add structure
    expected = math.hypot(sigma, 1 / 255 / math.sqrt(12))
    assert estimate == pytest.approx(expected, rel=0.15)


def test_contrast_and_brightness_are_the_grey_std_and_the_mean_hsv_value() -> None:
    frame = np.zeros((10, 10, 3), np.uint8)
    frame[:, :5] = (255, 0, 0)  # half pure red, half black
    quality = measure(frame)
    assert quality.brightness == pytest.approx(0.5)
    assert quality.contrast == pytest.approx(0.299 / 2, rel=1e-5)  # luma of red, halved
    assert measure(np.full((8, 8, 3), 128, np.uint8)).noise == pytest.approx(0.0, abs=1e-9)


def test_the_curves_are_the_published_ap50_over_the_clean_ap50() -> None:
    raw = tomllib.loads((resources.files("agentic_env.oracle") / "profiles"
                         / CORRUPTIONS_FILE).read_text())["corruption"]
    model = quality_model()
    for name in CORRUPTIONS:
        curve = model.curves[name]
        ap50 = raw[name]["ap50"]
        assert len(curve.parameters) == len(ap50) == 6 and curve.relative[0] == 1.0
        for parameter, value in zip(raw[name]["parameters"], ap50, strict=True):
            assert curve.at(parameter) == pytest.approx(value / ap50[0])
        assert list(curve.relative) == sorted(curve.relative, reverse=True)  # worse, lower


def test_a_curve_interpolates_between_severities_and_holds_beyond_the_last() -> None:
    rising = CorruptionCurve((0.0, 0.1, 0.2), (1.0, 0.8, 0.5))
    assert rising.at(0.05) == pytest.approx(0.9)
    assert rising.at(0.5) == pytest.approx(0.5) and rising.at(-1.0) == pytest.approx(1.0)
    kept = CorruptionCurve((1.0, 0.4, 0.2), (1.0, 0.9, 0.6))  # contrast: a factor kept
    assert kept.at(0.7) == pytest.approx(0.95) and kept.at(0.1) == pytest.approx(0.6)


def test_the_reference_frame_loses_nothing_and_each_degradation_costs() -> None:
    model = quality_model()
    ref = model.reference
    assert model.performance(ref) == pytest.approx(1.0)
    # a cleaner, more contrasted or darker frame than the benchmark's is not better
    better = ImageQuality(ref.noise / 2, ref.contrast * 1.5, ref.brightness - 0.2)
    assert model.performance(better) == pytest.approx(1.0)
    for worse in (replace(ref, noise=0.08), replace(ref, contrast=ref.contrast * 0.4),
                  replace(ref, brightness=ref.brightness + 0.3)):
        assert model.performance(worse) < 1.0
    # severity 1 of COCO-C's Gaussian noise added in quadrature: its published share
    noisy = replace(ref, noise=math.hypot(ref.noise, 0.08))
    assert model.performance(noisy) == pytest.approx(0.4802 / 0.5838, rel=1e-3)
    both = replace(noisy, contrast=ref.contrast * 0.4)
    assert model.performance(both) == pytest.approx(
        model.performance(noisy) * model.performance(replace(ref, contrast=ref.contrast * 0.4)))


def test_the_packaged_reference_is_the_benchmark_frames_quality() -> None:
    """One calibration seed per task measured again lands near the packaged medians (the
    file is the median of 40 such frames)."""
    from agentic_env.bench.image_quality import reference_frames

    frames = reference_frames(seeds=[2_000_000])
    ref = quality_model().reference
    assert np.median([f.noise for f in frames]) == pytest.approx(ref.noise, rel=0.3)
    assert np.median([f.contrast for f in frames]) == pytest.approx(ref.contrast, rel=0.15)
    assert np.median([f.brightness for f in frames]) == pytest.approx(ref.brightness, rel=0.1)
