"""Brown-Conrady distortion of images: identity, the lens's direction, roundtrip, depth safety."""

import cv2
import numpy as np
import pytest

from agentic_env.geometry.camera import pinhole_intrinsics
from agentic_env.geometry.distortion import distort, undistort

K = pinhole_intrinsics(160, 120, 58.0)
PINCUSHION = np.array([0.0744, -0.0563, 0.0, 0.0, 0.0197])
BARREL = np.array([-0.0565, 0.0682, 0.00037, 0.00069, -0.0218])


def _blob(u: float, v: float) -> np.ndarray:
    """A 160x120 float32 image with a Gaussian spot centred on pixel coordinates (u, v)."""
    cols, rows = np.meshgrid(np.arange(160) + 0.5, np.arange(120) + 0.5)
    return np.exp(-((cols - u) ** 2 + (rows - v) ** 2) / (2 * 1.5**2)).astype(np.float32)


def _centroid(image: np.ndarray) -> np.ndarray:
    cols, rows = np.meshgrid(np.arange(160) + 0.5, np.arange(120) + 0.5)
    return np.array([(image * cols).sum(), (image * rows).sum()]) / image.sum()


def test_zero_coefficients_copy_the_image() -> None:
    image = np.random.default_rng(0).integers(0, 256, (120, 160, 3), dtype=np.uint8)
    for remap in (distort, undistort):
        out = remap(image, K, np.zeros(5), nearest=False)
        assert out is not image
        np.testing.assert_array_equal(out, image)


def test_distort_moves_a_point_where_the_lens_projects_it() -> None:
    point = np.array([[130.0, 100.0]])  # off-centre pixel of the pinhole image
    normalised = (point - K[:2, 2]) / K[0, 0]
    k_cv = K.copy()
    k_cv[:2, 2] -= 0.5
    expected, _ = cv2.projectPoints(np.array([[*normalised[0], 1.0]]), np.zeros(3), np.zeros(3),
                                    k_cv, PINCUSHION)
    expected = expected.reshape(2) + 0.5
    moved = _centroid(distort(_blob(*point[0]), K, PINCUSHION, nearest=False))
    assert np.linalg.norm(moved - expected) < 0.3
    assert np.linalg.norm(expected - point[0]) > 1.0  # the lens does move it


@pytest.mark.parametrize("coefficients", [PINCUSHION, BARREL])
def test_roundtrip_keeps_the_centre_within_a_pixel(coefficients: np.ndarray) -> None:
    for u, v in [(80, 60), (50, 40), (115, 85), (45, 80)]:
        image = _blob(u, v)
        back = undistort(distort(image, K, coefficients, nearest=False), K, coefficients,
                         nearest=False)
        assert np.linalg.norm(_centroid(back) - (u, v)) < 1.0


def test_nearest_never_mixes_depths_and_keeps_zero() -> None:
    rng = np.random.default_rng(1)
    depth = rng.choice(np.array([0.0, 0.4, 1.3], np.float32), size=(120, 160))
    for remap in (distort, undistort):
        out = remap(depth, K, PINCUSHION, nearest=True)
        assert out.dtype == np.float32
        assert set(np.unique(out)) <= {0.0, np.float32(0.4), np.float32(1.3)}
    back = undistort(distort(depth, K, PINCUSHION, nearest=True), K, PINCUSHION, nearest=True)
    centre = (slice(30, 90), slice(40, 120))
    assert np.mean(back[centre] == depth[centre]) > 0.6  # nearest resampling, no blending
