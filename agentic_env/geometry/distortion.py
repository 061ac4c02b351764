"""Brown-Conrady lens distortion of images: distort a pinhole image, undistort a device image.

Coefficients follow OpenCV's order ``(k1, k2, p1, p2[, k3[, k4, k5, k6]])`` (radial, tangential,
then rational terms), acting on normalised image coordinates of the OpenCV camera frame;
``K`` is the pinhole matrix of :mod:`agentic_env.geometry.camera` (pixel centres at + 0.5).
Both directions resample with :func:`cv2.remap` through maps cached per image size, ``K`` and
coefficients. ``nearest=True`` (depth) copies whole pixels, so no depths are mixed and 0 stays
0; pixels that fall outside the source image are 0 (black, or no depth return).
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np


def distort(image: np.ndarray, intrinsics: np.ndarray, coefficients: np.ndarray,
            nearest: bool) -> np.ndarray:
    """The image a lens with ``coefficients`` forms of the pinhole image ``image``.

    Args:
        image: (H, W) or (H, W, C) pinhole image, any dtype cv2 remaps (uint8, float32).
        intrinsics: (3, 3) pinhole matrix of both images, pixels.
        coefficients: OpenCV distortion coefficients (4, 5 or 8 values); all 0 = identity.
        nearest: nearest-neighbour sampling (depth) instead of bilinear (colour).

    Returns:
        A new array of the same shape and dtype.
    """
    return _remap(image, intrinsics, coefficients, nearest, to_distorted=True)


def undistort(image: np.ndarray, intrinsics: np.ndarray, coefficients: np.ndarray,
              nearest: bool) -> np.ndarray:
    """The pinhole image (intrinsics ``intrinsics``) of a device image taken through a lens
    with ``coefficients``; the inverse of :func:`distort` up to resampling. Same arguments."""
    return _remap(image, intrinsics, coefficients, nearest, to_distorted=False)


def outside_field(width: int, height: int, intrinsics: np.ndarray,
                  coefficients: np.ndarray) -> np.ndarray:
    """Pixels of the pinhole image (``width`` x ``height``, intrinsics ``intrinsics``) that
    undistorting a device image taken through a lens with ``coefficients`` leaves empty: their
    ray lands outside the device's sensor. (H, W) bool, read-only, cached; all ``False`` for
    a lens without distortion."""
    coeffs = np.asarray(coefficients, dtype=np.float64).ravel()
    k = np.asarray(intrinsics, dtype=np.float64)
    return _outside(int(width), int(height), k.tobytes(), coeffs.tobytes())


@lru_cache(maxsize=32)
def _outside(width: int, height: int, intrinsics: bytes, coefficients: bytes) -> np.ndarray:
    if not np.any(np.frombuffer(coefficients, dtype=np.float64)):
        mask = np.zeros((height, width), bool)
    else:
        map_x, map_y = _float_maps(width, height, intrinsics, coefficients, False)
        # cv2 pixel centres at integers: the sensor spans -0.5 .. size - 0.5
        mask = ((map_x < -0.5) | (map_x > width - 0.5) | (map_y < -0.5)
                | (map_y > height - 0.5))
    mask.setflags(write=False)
    return mask


def _remap(image: np.ndarray, intrinsics: np.ndarray, coefficients: np.ndarray, nearest: bool,
           to_distorted: bool) -> np.ndarray:
    coeffs = np.asarray(coefficients, dtype=np.float64).ravel()
    if not np.any(coeffs):
        return image.copy()
    height, width = image.shape[:2]
    k = np.asarray(intrinsics, dtype=np.float64)
    map_xy, map_fraction = _maps(width, height, k.tobytes(), coeffs.tobytes(), to_distorted,
                                 nearest)
    return cv2.remap(image, map_xy, map_fraction,
                     cv2.INTER_NEAREST if nearest else cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=0)


@lru_cache(maxsize=32)
def _maps(width: int, height: int, intrinsics: bytes, coefficients: bytes, to_distorted: bool,
          nearest: bool) -> tuple[np.ndarray, np.ndarray]:
    """Source pixel coordinates of every output pixel in cv2's fixed-point form (integer
    positions and interpolation-table indices; about twice as fast to remap as floats)."""
    map_x, map_y = _float_maps(width, height, intrinsics, coefficients, to_distorted)
    return cv2.convertMaps(map_x, map_y, cv2.CV_16SC2, nninterpolation=nearest)


def _float_maps(width: int, height: int, intrinsics: bytes, coefficients: bytes,
                to_distorted: bool) -> tuple[np.ndarray, np.ndarray]:
    """Source pixel coordinates (cv2 convention: pixel centres at integers) of every output
    pixel, float32 (H, W) each."""
    k = np.frombuffer(intrinsics, dtype=np.float64).reshape(3, 3).copy()
    k[:2, 2] -= 0.5  # ours: pixel centres at + 0.5; cv2: at integers
    coeffs = np.frombuffer(coefficients, dtype=np.float64)
    if not to_distorted:  # pinhole output pixel -> where the lens put it in the device image
        return cv2.initUndistortRectifyMap(k, coeffs, None, k, (width, height), cv2.CV_32FC1)
    # device output pixel -> where it lies in the pinhole image (iterative inverse of the lens)
    u, v = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
    pixels = np.stack([u.ravel(), v.ravel()], axis=-1).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 1e-6)
    source = cv2.undistortPointsIter(pixels, k, coeffs, None, k, criteria).reshape(height, width, 2)
    return source[..., 0].astype(np.float32), source[..., 1].astype(np.float32)
