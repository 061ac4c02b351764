"""Plane geometry on the table (x, y in any one frame, metres; yaws in radians).

Footprints and ways across the table as rectangles and segments: overlap, crossing and
distance tests used by the tasks' layout samplers and the scripted experts.
"""

from __future__ import annotations

import numpy as np

from agentic_env.geometry.rotations import rotation_z


def rects_overlap(a: tuple[np.ndarray, np.ndarray, float], b: tuple[np.ndarray, np.ndarray, float],
                  gap: float) -> bool:
    """Whether two yawed rectangles (centre (2,), half extents (2,), yaw) come within ``gap``
    (separating-axis test)."""
    axes_a, axes_b = rotation_z(a[2])[:2, :2], rotation_z(b[2])[:2, :2]
    delta = b[0] - a[0]
    for axis in (*axes_a.T, *axes_b.T):
        reach_a = np.sum(np.abs(axes_a.T @ axis) * a[1])
        reach_b = np.sum(np.abs(axes_b.T @ axis) * b[1])
        if abs(delta @ axis) > reach_a + reach_b + gap:
            return False
    return True


def segments_hit_box(start: np.ndarray, end: np.ndarray, low: np.ndarray,
                       high: np.ndarray) -> np.ndarray:
    """Whether each 2-D segment from ``start[i]`` to ``end[i]`` (N, 2) meets the box
    [low, high] (slab test); (N,) bool."""
    t0 = np.zeros(len(start))
    t1 = np.ones(len(start))
    delta = end - start
    for axis in range(2):
        flat = np.abs(delta[:, axis]) < 1e-12
        safe = np.where(flat, 1.0, delta[:, axis])
        a = (low[axis] - start[:, axis]) / safe
        b = (high[axis] - start[:, axis]) / safe
        inside = (low[axis] <= start[:, axis]) & (start[:, axis] <= high[axis])
        t0 = np.where(flat, np.where(inside, t0, np.inf), np.maximum(t0, np.minimum(a, b)))
        t1 = np.where(flat, t1, np.minimum(t1, np.maximum(a, b)))
    return t0 <= t1


def origin_segment_distance(start: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Distance from the origin to each 2-D segment from ``start`` (2,) to ``ends[i]``."""
    delta = ends - start
    t = np.clip(-(delta @ start) / np.maximum(np.sum(delta**2, axis=1), 1e-12), 0.0, 1.0)
    return np.linalg.norm(start + t[:, None] * delta, axis=1)


def segment_distances(points: np.ndarray, start: np.ndarray,
                      end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distance (m) of each 2-D point (N, 2) to the segment from ``start`` to ``end`` (2,),
    and how far along the segment (m from ``start``, clipped to its length) its nearest
    point lies; a zero-length segment is its start point."""
    direction = np.asarray(end, float) - np.asarray(start, float)
    length = float(np.linalg.norm(direction))
    if length < 1e-9:
        return np.linalg.norm(points - start, axis=1), np.zeros(len(points))
    along = np.clip((points - start) @ direction / length, 0.0, length)
    nearest = start + along[:, None] * (direction / length)
    return np.linalg.norm(points - nearest, axis=1), along


def slice_boxes(centre: np.ndarray, half: np.ndarray, rotation: np.ndarray,
                slices: int = 4) -> list[list[float]]:
    """Axis-aligned bounding boxes [x0, x1, y0, y1] of ``slices`` equal slices along the
    local x of a turned rectangle (centre (2,), half extents (2,), rotation (2, 2)): a
    tighter cover of it than one box. Metres, in the rectangle's parent frame."""
    boxes = []
    step = 2 * half[0] / slices
    for k in range(slices):
        low_x = -half[0] + k * step
        corners = np.array([centre + rotation @ np.array([x, y])
                            for x in (low_x, low_x + step) for y in (-half[1], half[1])])
        low, high = corners.min(axis=0), corners.max(axis=0)
        boxes.append([float(low[0]), float(high[0]), float(low[1]), float(high[1])])
    return boxes
