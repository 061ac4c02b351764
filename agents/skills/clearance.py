"""Clearance on the way to a pose: how high an approach must start over what stands around
it, whether a straight way crosses tall fixtures, whether a column was seen empty.

Observations only (point clouds in the robot base frame); base frame z up, table top z = 0,
metres.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agentic_env.agents.perception import PointCloud
from agentic_env.geometry.planar import segment_distances

#: Margin (m) kept above obstacles around a target when coming down onto it.
OBSTACLE_MARGIN = 0.04
#: Longest approach (m) the pick and place primitives accept.
MAX_APPROACH = 0.3
#: Radius (m) around the target in which obstacles raise the approach.
OBSTACLE_RADIUS = 0.12
#: Fixtures taller than this (m) are not crossed on the way to a table spot.
TALL_FIXTURE = 0.2
#: Height (m) up to which a table spot's column must be seen empty (a drawer, a shelf).
COLUMN_HEIGHT = 0.32
#: Share of a table spot's column samples that must be seen empty (depth noise, thin edges).
COLUMN_SEEN_SHARE = 0.9


def approach_over(scene: PointCloud, xy: np.ndarray, z: float,
                  radius: float = OBSTACLE_RADIUS, hanging: float = 0.0,
                  start: np.ndarray | None = None) -> float:
    """Approach distance (m, along a downward approach to a TCP at height ``z``) that starts
    with the TCP, and ``hanging`` m of held object below it, above every scene point within
    ``radius`` of ``xy`` (and, given the hand's ``start`` (x, y), within ``radius`` of the
    straight way from there): the hand comes straight down over walls, rims and cabinets,
    and, since the primitives cross at the pre-pose's height, carries nothing into an open
    drawer or a cabinet on the way. At most :data:`MAX_APPROACH`."""
    if len(scene) == 0:
        return 0.0
    if start is None:
        start = xy
    gaps, _along = segment_distances(scene.points[:, :2], np.asarray(start, float)[:2],
                                     np.asarray(xy, float)[:2])
    near = gaps < radius
    if not near.any():
        return 0.0
    top = float(np.percentile(scene.points[near, 2], 99))
    return float(np.clip(top + OBSTACLE_MARGIN + hanging - z, 0.0, MAX_APPROACH))


def lifted(pose: np.ndarray, rise: float) -> np.ndarray:
    """``pose`` (4x4) moved ``rise`` m straight up."""
    raised = np.array(pose, float)
    raised[2, 3] += rise
    return raised


def column_seen_free(seen_free: Callable[[np.ndarray], np.ndarray], xy: np.ndarray,
                     radius: float, height: float = COLUMN_HEIGHT) -> bool:
    """Whether the vertical column of ``radius`` m around ``xy`` from just above the table
    up to ``height`` m was seen empty (at least :data:`COLUMN_SEEN_SHARE` of its samples:
    its axis and 8 points on its rim, every 3 cm of height)."""
    angles = np.linspace(0.0, 2 * np.pi, 8, endpoint=False)
    ring = np.vstack([[0.0, 0.0], radius * np.column_stack([np.cos(angles), np.sin(angles)])])
    heights = np.arange(0.02, height, 0.03)
    samples = np.array([[*(xy + offset), z] for z in heights for offset in ring])
    return float(np.mean(seen_free(samples))) >= COLUMN_SEEN_SHARE


def path_blocked(scene: PointCloud, start: np.ndarray, end: np.ndarray,
                 height: float = TALL_FIXTURE, corridor: float = 0.07) -> bool:
    """Whether the straight way (x, y) from ``start`` to ``end`` passes over scene points
    taller than ``height`` m (a cabinet, a drawer front) within ``corridor`` m of it, away
    from the start (where the hand itself is)."""
    tall = scene.points[scene.points[:, 2] > height, :2]
    if len(tall) == 0 or float(np.linalg.norm(end - start)) < 1e-6:
        return False
    gaps, along = segment_distances(tall, start, end)
    return bool(np.any((gaps < corridor) & (along > 0.1)))
