"""Reorienting an object from its point cloud: estimate its pose, grasp it so the wrist can
turn it, and set it down in the asked pose.

Observation only: the object's shape and pose come from its points (robot base frame, table
top z = 0), the robot's reach from its own kinematic model. The estimate is coarse on
purpose: a box around the object (its *axis* is the box's z, from base to top), which end of
a lying object is its base (the wider end: a bottle's neck is narrower), and for an upright
object with a handle, where the handle points (the box's x).

The strategy is the turning planner of :mod:`agentic_env.primitives.turning`, which the
scripted expert uses too: a pose that needs a
turn of about 90 deg is split between a pick with the tool leaning 45 deg (35, 55, 25, 65,
15 deg if that cannot be planned) and a place leaning the other way; a turn about the
vertical (a mug's handle) is done by the wrist between a top-down pick and place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentic_env.contract.spaces import Workspace
from agentic_env.geometry.rotations import unit
from agentic_env.primitives.turning import (
    GRASP_TILTS,
    ReachCheck,
    grasp_poses,
    place_rotations,
)
from agentic_env.primitives.types import PrimitiveConfig
from agentic_env.robot.kinematics import ArmKinematics
from agentic_env.robot.reorienting import needs_turn

#: Where a lying object is grasped: this fraction of its length from its base (a bottle's
#: upper body, below the shoulder).
LYING_GRASP_FRACTION = 0.56
#: Depth (m) of a top grasp below an upright object's top.
TOP_GRASP_DEPTH = 0.025
#: Height (m) of the object's lowest point above the table when the place releases it.
TURNED_RELEASE_GAP = 0.005
#: A cloud whose longest horizontal extent exceeds its height by this factor lies on its side.
LYING_RATIO = 1.2
#: Points this far (m) beyond an upright object's top rim count as a handle.
HANDLE_MARGIN = 0.008
#: Fewest handle points for a handle to count.
HANDLE_POINTS = 8


@dataclass(frozen=True)
class ObjectEstimate:
    """An object's box, from its points.

    Attributes:
        pose: (4, 4) body frame in the base frame: origin at the box centre, z the object's
            axis (base to top), x its handle (if ``handled``) or its longer side.
        half_extents: the box's half sizes along body x, y, z, metres.
        lying: whether the axis is (nearly) horizontal.
        handled: whether a handle was found (x points along it).
    """

    pose: np.ndarray
    half_extents: np.ndarray
    lying: bool
    handled: bool

    @property
    def axis(self) -> np.ndarray:
        """The object's axis (unit, base frame)."""
        return self.pose[:3, 2]

    def corners(self) -> np.ndarray:
        """The box's 8 corners in the body frame, (8, 3) metres."""
        signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
        return signs * self.half_extents


def estimate_object(points: np.ndarray) -> ObjectEstimate:
    """The box of an object resting on the table from its points (N, 3), base frame."""
    top = float(np.percentile(points[:, 2], 98))
    flat = points[:, :2] - points[:, :2].mean(axis=0)
    main = np.linalg.svd(flat, full_matrices=False)[2][0]
    lengths = flat @ main
    length = float(np.percentile(lengths, 99) - np.percentile(lengths, 1))
    if length > LYING_RATIO * top:
        return _lying(points, main, top)
    return _standing(points, top)


def _lying(points: np.ndarray, main: np.ndarray, top: float) -> ObjectEstimate:
    along = np.array([main[0], main[1], 0.0])
    lengths = points @ along
    low, high = np.percentile(lengths, 1), np.percentile(lengths, 99)
    end = 0.15 * (high - low)

    def height_near(value: float) -> float:
        near = np.abs(lengths - value) < end
        return float(np.percentile(points[near, 2], 95)) if near.any() else 0.0

    if height_near(high) > height_near(low):  # the axis runs from the wider (taller) base
        along = -along
        low, high = -high, -low
    radius = top / 2.0
    centre_along = 0.5 * (low + high)
    across = np.cross([0.0, 0.0, 1.0], along)
    centre_across = float(np.median(points @ across))
    pose = np.eye(4)
    pose[:3, 2] = along
    pose[:3, 0] = np.array([0.0, 0.0, 1.0])
    pose[:3, 1] = np.cross(pose[:3, 2], pose[:3, 0])
    pose[:3, 3] = centre_along * along + centre_across * across + np.array([0, 0, radius])
    half = np.array([radius, radius, 0.5 * (high - low)])
    return ObjectEstimate(pose, half, lying=True, handled=False)


def _standing(points: np.ndarray, top: float) -> ObjectEstimate:
    cap = points[points[:, 2] > top - 0.012]
    # the middle of the top face's extent along its own axes (its mean leans towards the
    # side faces seen with it)
    mean = cap[:, :2].mean(axis=0)
    axes = np.linalg.svd(cap[:, :2] - mean, full_matrices=False)[2]
    local = (cap[:, :2] - mean) @ axes.T
    middle = 0.5 * (np.percentile(local, 2, axis=0) + np.percentile(local, 98, axis=0))
    centre = mean + middle @ axes
    rim = float(np.percentile(np.linalg.norm(cap[:, :2] - centre, axis=1), 95))
    outward = points[:, :2] - centre
    reach = np.linalg.norm(outward, axis=1)
    handle = (reach > rim + HANDLE_MARGIN) & (points[:, 2] < top - 0.01)
    handled = int(np.count_nonzero(handle)) >= HANDLE_POINTS
    if handled:
        x_axis = unit(np.array([*outward[handle].mean(axis=0), 0.0]))
    else:  # the top face's longer side
        flat = cap[:, :2] - centre
        x_axis = np.array([*np.linalg.svd(flat, full_matrices=False)[2][0], 0.0])
    pose = np.eye(4)
    pose[:3, 0] = x_axis
    pose[:3, 2] = np.array([0.0, 0.0, 1.0])
    pose[:3, 1] = np.cross(pose[:3, 2], x_axis)
    pose[:3, 3] = np.array([*centre, top / 2.0])
    flat = cap[:, :2] - centre
    half_x = float(np.percentile(np.abs(flat @ x_axis[:2]), 97))
    half_y = float(np.percentile(np.abs(flat @ pose[:2, 1]), 97))
    half = np.array([half_x, half_y, top / 2.0])
    return ObjectEstimate(pose, half, lying=False, handled=handled)


@dataclass(frozen=True)
class TurningGrasp:
    """A grasp for reorienting: the TCP pose (4x4, base frame) and the width, metres."""

    pose: np.ndarray
    width: float


class Reorienter:
    """Grasps and places that turn an estimated object into a goal pose, checked against
    the arm's reach with its kinematic model (the turning planner the scripted expert uses,
    :mod:`agentic_env.primitives.turning`)."""

    def __init__(self, workspace: Workspace, config: PrimitiveConfig | None = None,
                 kinematics: ArmKinematics | None = None) -> None:
        self.workspace = workspace
        self.config = config or PrimitiveConfig()
        self._reach = ReachCheck(workspace, self.config, kinematics)

    def grasps(self, estimate: ObjectEstimate, goal: str, q: np.ndarray) -> list[TurningGrasp]:
        """Grasps of the object for the ``goal`` pose, reachable from joints ``q`` first
        (the unreachable ones follow, in case the estimate of reach is too strict)."""
        turning = needs_turn(estimate.axis, goal)
        centre = estimate.pose[:3, 3]
        half = estimate.half_extents
        if estimate.lying:  # across the body, leaning towards the base
            along = unit(np.array([*estimate.axis[:2], 0.0]))
            position = centre + (LYING_GRASP_FRACTION - 0.5) * 2.0 * half[2] * along
            width = 2.0 * half[0]
            leans = [-along]
        else:  # from above near the top, across the narrow side (or the mug's body)
            along = estimate.pose[:3, 0]
            position = centre.copy()
            position[2] = centre[2] + half[2] - TOP_GRASP_DEPTH
            width = 2.0 * half[1]
            outward = unit(np.array([centre[0], centre[1], 0.0]))
            leans = sorted([along, -along], key=lambda lean: -float(lean @ outward))
        reachable, rest = [], []
        for pose in grasp_poses(position, leans, GRASP_TILTS if turning else (0.0,)):
            (reachable if self._reach.pick(q, pose) else rest).append(
                TurningGrasp(pose, float(width)))
        return reachable + rest

    def places(self, estimate: ObjectEstimate, grasp: np.ndarray, tcp_now: np.ndarray,
               goal: str, q: np.ndarray, limit: int = 3) -> list[np.ndarray]:
        """TCP poses (4x4) that set the held object down at its old spot in ``goal``, best
        first; the first ``limit`` that the arm reaches from joints ``q`` lead.

        Args:
            estimate: the object's box before the pick.
            grasp: the TCP pose it was picked with (fixes the object in the hand).
            tcp_now: the TCP pose now (after the lift).
            goal: the goal pose name.
            q: joints now, rad.
        """
        in_hand = np.linalg.inv(grasp) @ estimate.pose  # the object in the tool frame
        spot = estimate.pose[:2, 3]
        reachable, rest = [], []
        for rotation in place_rotations(tcp_now[:3, :3], in_hand[:3, :3], goal, spot):
            pose = self._resting(estimate, in_hand, rotation, spot)
            if len(reachable) < limit and self._reach.place(q, pose) is not None:
                reachable.append(pose)
            else:
                rest.append(pose)
        return reachable + rest

    @staticmethod
    def _resting(estimate: ObjectEstimate, in_hand: np.ndarray, tcp_rotation: np.ndarray,
                 spot: np.ndarray) -> np.ndarray:
        """The TCP pose with ``tcp_rotation`` that holds the object's box ``TURNED_RELEASE_GAP``
        above the table, centred over ``spot``."""
        object_rotation = tcp_rotation @ in_hand[:3, :3]
        lowest = float(np.min((estimate.corners() @ object_rotation.T)[:, 2]))
        centre = np.array([spot[0], spot[1], TURNED_RELEASE_GAP - lowest])
        pose = np.eye(4)
        pose[:3, :3] = tcp_rotation
        pose[:3, 3] = centre - tcp_rotation @ in_hand[:3, 3]
        return pose
