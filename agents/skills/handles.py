"""A drawer handle's grasp from point clouds (base frame, m; observations only): the front
panel it stands on and the bar's axis."""

from __future__ import annotations

import numpy as np

from agentic_env.agents.perception import PointCloud

#: Depth (m) of a handle bar's axis behind the centroid of its visible points.
HANDLE_AXIS_DEPTH = 0.004
#: Half height (m) of the band around a handle in which its drawer's front panel is fitted.
HANDLE_BAND = 0.05


def handle_grasp(handle: PointCloud, surround: PointCloud) -> np.ndarray | None:
    """TCP grasp pose (4x4) of a drawer handle: approach (z) horizontal into the front panel,
    closing (y) vertical, on the handle bar's axis at the middle of its visible length.

    The front panel is the vertical plane most points around the handle lie on (a RANSAC line
    through their xy, within ``HANDLE_BAND`` of the handle's height, so the carcass top, the
    floor and the background do not tilt it). The bar is every point standing 0.8-8 cm
    proud of that plane at the handle's height: where the gripper or an arm link hides the
    bar's middle, both visible ends still count, so its middle is found.

    Args:
        handle: the detected handle's points (base frame, m): where the bar is.
        surround: points around it (the drawer front, the robot already removed).
    """
    if len(handle) < 5 or len(surround) < 20:
        return None
    centre = np.median(handle.points, axis=0)
    offset = surround.points - centre
    band = surround.points[(np.abs(offset[:, 2]) < HANDLE_BAND)
                           & (np.linalg.norm(offset[:, :2], axis=1) < 0.2)]
    front = band[np.linalg.norm(band - centre, axis=1) > 0.03]
    line = _ransac_line(front[:, :2]) if len(front) >= 10 else None
    if line is None:
        return None
    origin, along = line
    normal = np.array([-along[1], along[0], 0.0])
    if normal[:2] @ (origin - centre[:2]) > 0:  # point out of the cabinet, past the handle
        normal = -normal
    proud = (band[:, :2] - origin) @ normal[:2]
    bar = band[(proud > 0.008) & (proud < 0.08) & (np.abs(band[:, 2] - centre[2]) < 0.03)]
    if len(bar) < 5:
        bar = handle.points
    proud_bar = (bar[:, :2] - origin) @ normal[:2]
    lengthwise = (bar[:, :2] - origin) @ along
    middle = 0.5 * (np.percentile(lengthwise, 2) + np.percentile(lengthwise, 98))
    approach = -normal
    closing = np.array([0.0, 0.0, 1.0])
    pose = np.eye(4)
    pose[:3, 0] = np.cross(closing, approach)
    pose[:3, 1] = closing
    pose[:3, 2] = approach
    # the visible points are the bar's front half: its axis lies a few mm further in
    position = np.array([*(origin + middle * along), np.median(bar[:, 2])])
    position[:2] += normal[:2] * float(np.median(proud_bar))
    pose[:3, 3] = position + approach * HANDLE_AXIS_DEPTH
    return pose


def _ransac_line(points: np.ndarray, tolerance: float = 0.004, trials: int = 200
                 ) -> tuple[np.ndarray, np.ndarray] | None:
    """The 2D line (a point on it, unit direction) through most ``points`` (N, 2), refined
    by a least-squares fit of its inliers within ``tolerance`` m; seeded, deterministic."""
    rng = np.random.default_rng(0)
    best: np.ndarray | None = None
    for _ in range(trials):
        first, second = points[rng.choice(len(points), 2, replace=False)]
        direction = second - first
        length = float(np.linalg.norm(direction))
        if length < 0.02:
            continue
        direction /= length
        distance = np.abs((points - first) @ np.array([-direction[1], direction[0]]))
        inliers = distance < tolerance
        if best is None or inliers.sum() > best.sum():
            best = inliers
    if best is None or best.sum() < 10:
        return None
    fitted = points[best]
    origin = fitted.mean(axis=0)
    direction = np.linalg.svd(fitted - origin, full_matrices=False)[2][0]
    return origin, direction
