"""Pictures for people: colour-mapped depth and image tiling."""

from __future__ import annotations

import numpy as np

# Anchor colours of a perceptually ordered map (dark blue -> cyan -> yellow -> red), 0..1.
_ANCHORS = np.array(
    [
        [0.19, 0.07, 0.23],
        [0.16, 0.47, 0.91],
        [0.10, 0.82, 0.67],
        [0.64, 0.99, 0.23],
        [0.98, 0.73, 0.22],
        [0.85, 0.23, 0.05],
        [0.48, 0.02, 0.01],
    ]
)


def colorize_depth(depth: np.ndarray, near: float, far: float) -> np.ndarray:
    """Map depth (H, W) metres to RGB (H, W, 3) uint8; near is blue, far is red, 0 is black."""
    valid = depth > 0
    scaled = np.clip((depth - near) / max(far - near, 1e-9), 0.0, 1.0)
    positions = np.linspace(0.0, 1.0, len(_ANCHORS))
    rgb = np.stack([np.interp(scaled, positions, _ANCHORS[:, c]) for c in range(3)], axis=-1)
    rgb[~valid] = 0.0
    return (rgb * 255).astype(np.uint8)


def depth_display_range(depth: np.ndarray) -> tuple[float, float]:
    """Robust (2nd, 98th percentile) range of the valid depths, metres, for display."""
    valid = depth[depth > 0]
    if valid.size == 0:
        return 0.0, 1.0
    near, far = np.percentile(valid, [2, 98])
    return float(near), float(max(far, near + 1e-3))


def resize_nearest(image: np.ndarray | None, width: int, height: int) -> np.ndarray:
    """Nearest-neighbour resize of ``image`` to (height, width, 3); black when missing."""
    if image is None:
        return np.zeros((height, width, 3), np.uint8)
    rows = (np.arange(height) * image.shape[0] / height).astype(int)
    cols = (np.arange(width) * image.shape[1] / width).astype(int)
    return image[rows][:, cols]
