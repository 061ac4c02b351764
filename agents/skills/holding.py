"""What the hand holds and how it is turned: the top slab a grasp closes on, a grasp folded
towards the wrist's yaw, and the held object measured before and after a pick.

Observations only (point clouds in the robot base frame, the TCP pose from proprioception);
nothing reads the simulator. Base frame z up, table top z = 0, top-down TCP poses from
:func:`agentic_env.contract.actions.top_down_pose` (yaw turns the closing axis about the
vertical); metres and radians.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from agentic_env.agents.perception import GraspCandidate, PointCloud
from agentic_env.contract.actions import top_down_pose
from agentic_env.geometry.rotations import wrap_angle, yaw_of
from agentic_env.robot.constants import TCP_TO_FINGERTIP

#: Vertical gap (m) that separates a held object from what lies under it.
HANGING_GAP = 0.015
#: Depth (m) of the top part of a target that grasps may close on: what lies deeper (the
#: cube under a stacked cube, a bin's floor) counts as an obstacle.
GRASP_SLAB = 0.03


def top_slab(cloud: PointCloud, depth: float = GRASP_SLAB) -> PointCloud:
    """The points of ``cloud`` within ``depth`` m of its top (95th percentile of z)."""
    if len(cloud) == 0:
        return cloud
    top = float(np.percentile(cloud.points[:, 2], 95))
    return cloud.select(cloud.points[:, 2] > top - depth)


def with_yaw(pose: np.ndarray, yaw: float) -> np.ndarray:
    """The top-down pose at ``pose``'s position turned to ``yaw`` (rad)."""
    return top_down_pose(pose[:3, 3], yaw)


def fold_grasp(candidate: GraspCandidate, reference_yaw: float) -> GraspCandidate:
    """The same parallel-jaw grasp turned by pi about its approach axis when that brings its
    yaw closer to ``reference_yaw`` (rad): the jaws are symmetric, the wrist's range is not."""
    pose = candidate.pose
    if abs(yaw_offset(pose, reference_yaw)) <= np.pi / 2:
        return candidate
    turned = pose.copy()
    turned[:3, 0:2] = -pose[:3, 0:2]
    return replace(candidate, pose=turned)


def yaw_offset(pose: np.ndarray, reference_yaw: float) -> float:
    """Signed angle (rad, in [-pi, pi)) from ``reference_yaw`` to the yaw of ``pose``."""
    return wrap_angle(float(np.arctan2(pose[1, 0], pose[0, 0])) - reference_yaw)


@dataclass(frozen=True)
class HeldObject:
    """What the agent measured of the object it picked (from the pre-grasp point cloud).

    Attributes:
        name: PDDL name.
        below_tcp: height of the TCP above the object's lowest point at the grasp, m.
        radius: largest horizontal distance of the object's points from the TCP axis, m.
        extents: half lengths (m) of its footprint about the TCP axis along the hand's yaw
            direction and across it (the object turns with the hand); ``None`` unmeasured.
    """

    name: str
    below_tcp: float
    radius: float
    extents: tuple[float, float] | None = None


def tcp_yaw(tcp_pose: np.ndarray) -> float:
    """Yaw (rad) of a top-down TCP pose, given as the observation's (7,) xyz + quat wxyz."""
    w, x, y, z = (float(v) for v in tcp_pose[3:7])
    return float(np.arctan2(2 * (x * y + w * z), 1 - 2 * (y * y + z * z)))


def held_object(name: str, cloud: PointCloud, grasp: np.ndarray) -> HeldObject:
    """Estimate the object about to be grasped at ``grasp`` (4x4 TCP pose) from its cloud."""
    points = cloud.points
    below = max(float(grasp[2, 3] - points[:, 2].min()), TCP_TO_FINGERTIP)
    offsets = points[:, :2] - grasp[:2, 3]
    radius = float(np.max(np.linalg.norm(offsets, axis=1)))
    return HeldObject(name, below, radius, footprint(offsets, yaw_of(grasp), 100))


def footprint(offsets: np.ndarray, yaw: float, percentile: float) -> tuple[float, float]:
    """Half lengths (m) of the horizontal ``offsets`` (N, 2) from the TCP axis along the
    direction ``yaw`` (rad) and across it (the ``percentile`` of their sizes)."""
    local = np.abs(offsets @ yaw_frame(yaw).T)
    return (float(np.percentile(local[:, 0], percentile)),
            float(np.percentile(local[:, 1], percentile)))


def yaw_frame(yaw: float) -> np.ndarray:
    """Rows (2, 2): the horizontal unit vector along ``yaw`` (rad) and the one across it (90°
    counter-clockwise); ``points @ yaw_frame(yaw).T`` gives their (along, across)
    coordinates."""
    along = np.array([np.cos(yaw), np.sin(yaw)])
    return np.array([along, [-along[1], along[0]]])


def measure_held(name: str, scene: PointCloud, tcp_pose: np.ndarray,
                 fallback: tuple[PointCloud, np.ndarray], column: float = 0.07) -> HeldObject:
    """Measure the object in the lifted gripper from an observation taken after the pick.

    The object hangs below the TCP, clear of what is under it: its points are those in a
    vertical column of radius ``column`` m around the TCP, from the fingertips down to the
    first vertical gap wider than :data:`HANGING_GAP` (what lies further down is not held);
    the fingertips themselves are the lowest point when nothing hangs below them.
    Without such points (occluded), the pre-grasp estimate ``fallback`` (cloud, grasp pose)
    is used.
    """
    tcp = np.asarray(tcp_pose[:3], float)
    fingertips = tcp[2] - TCP_TO_FINGERTIP
    offsets = np.linalg.norm(scene.points[:, :2] - tcp[:2], axis=1)
    hanging = (offsets < column) & (scene.points[:, 2] < tcp[2]) & (scene.points[:, 2] > 0.02)
    if np.count_nonzero(hanging) < 10:
        return held_object(name, *fallback)
    # walk down from the fingertips to the first vertical gap: what lies below is not held
    heights = np.sort(np.append(scene.points[hanging, 2], fingertips))[::-1]
    heights = heights[heights <= fingertips]
    gaps = np.flatnonzero(-np.diff(heights) > HANGING_GAP)
    bottom = heights[gaps[0]] if len(gaps) else heights[-1]
    held = hanging & (scene.points[:, 2] >= bottom)
    if not held.any():  # nothing seen between the fingertips and the first gap below them
        return replace(held_object(name, *fallback), below_tcp=float(tcp[2] - bottom))
    radius = float(np.percentile(offsets[held], 98))
    extents = footprint(scene.points[held, :2] - tcp[:2], tcp_yaw(tcp_pose), 98)
    return HeldObject(name, float(tcp[2] - bottom), radius, extents)
