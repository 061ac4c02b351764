"""The turning planner: grasps and place rotations that turn a held object into a named
pose, checked against the arm's reach as the primitives will plan them.

One planner for the reorientation task's scripted expert (true object poses) and the agents'
reorientation skill (poses estimated from points): the geometry of the turn is
:mod:`agentic_env.robot.reorienting`; this module adds the grasp poses (tilted about the
closing axis, the fingertips kept off the table) and the reach check (straight TCP segments
via the transit height and an approach along the tool's z, as :mod:`.executor` moves).
Base frame (z up, table top z = 0), metres and radians.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agentic_env.contract.spaces import Workspace
from agentic_env.errors import MotionPlanningError
from agentic_env.geometry.rotations import rotation_between, rotation_z
from agentic_env.primitives.paths import approach_via
from agentic_env.primitives.types import PrimitiveConfig
from agentic_env.robot.constants import TCP_TO_FINGERTIP
from agentic_env.robot.kinematics import ArmKinematics
from agentic_env.robot.motion import MotionLimits, plan_through
from agentic_env.robot.reorienting import (
    goal_axis,
    handle_direction,
    leaning_pose,
    needs_turn,
    turned_rotations,
)

#: Tool tilts (degrees from straight down) tried for a pick that turns the object, best first.
GRASP_TILTS: tuple[float, ...] = (45.0, 35.0, 55.0, 25.0, 65.0, 15.0)
#: Half width (m) of the finger pads across the closing axis (keeps a tilted pad off the
#: table).
PAD_HALF_WIDTH = 0.01
#: Height (m) the tilted fingertips and pads keep above the object's lowest point.
FINGERTIP_MARGIN = 0.008


def grasp_poses(position: np.ndarray, leans: Sequence[np.ndarray],
                tilts: Sequence[float] = GRASP_TILTS, low: float = 0.0) -> list[np.ndarray]:
    """TCP poses (4x4) grasping at ``position`` (3,), leaning along each of ``leans`` (unit
    (3,), best first) at each of ``tilts`` (degrees from straight down; ``(0,)`` for a grasp
    that turns nothing), each raised where needed so its fingertips and pads stay
    :data:`FINGERTIP_MARGIN` above ``low``, the object's lowest point (m)."""
    poses = []
    for tilt in np.radians(tilts):
        for lean in leans:
            pose = leaning_pose(position, lean, float(tilt))
            pose[2, 3] = max(pose[2, 3], low + TCP_TO_FINGERTIP * np.cos(tilt)
                             + PAD_HALF_WIDTH * np.sin(tilt) + FINGERTIP_MARGIN)
            poses.append(pose)
    return poses


def place_rotations(tcp_rot: np.ndarray, in_hand_rot: np.ndarray, goal: str,
                    spot: np.ndarray) -> list[np.ndarray]:
    """Tool rotations (3, 3) that set an object held with ``in_hand_rot`` (its rotation in
    the tool frame) down in the ``goal`` pose at ``spot`` (x, y), best first: the turn of
    :func:`turned_rotations` when the pose needs one, else the tool's rotation now tipped
    onto the goal axis and, for ``handle-<direction>``, turned about the vertical."""
    axis = tcp_rot @ in_hand_rot[:, 2]
    if needs_turn(axis, goal):
        return turned_rotations(tcp_rot, in_hand_rot[:, 2], goal, spot)
    rotation = tcp_rot
    wanted = goal_axis(axis, goal)
    if wanted is not None:
        rotation = rotation_between(axis, wanted) @ rotation
    if goal.startswith("handle-"):
        handle = (rotation @ in_hand_rot)[:2, 0]
        target = handle_direction(goal.removeprefix("handle-"), spot)
        turn = np.arctan2(target[1], target[0]) - np.arctan2(handle[1], handle[0])
        rotation = rotation_z(float(turn)) @ rotation
    return [rotation]


class ReachCheck:
    """Whether the pick and place primitives can plan their paths from given joints.

    Args:
        workspace: the box target poses must lie in.
        config: the primitives' settings (approach, lift and transit heights).
        kinematics: the arm's model (one is built if not given).
    """

    def __init__(self, workspace: Workspace | None = None,
                 config: PrimitiveConfig | None = None,
                 kinematics: ArmKinematics | None = None) -> None:
        self.workspace = workspace or Workspace()
        self.config = config or PrimitiveConfig()
        self.kinematics = kinematics or ArmKinematics()

    def via(self, q: np.ndarray, target: np.ndarray) -> list[np.ndarray]:
        """The via poses (4x4) of a pick or place at ``target`` from joints ``q``."""
        return approach_via(self.kinematics.forward(q), target, self.config.approach_distance,
                            self.config.transit_height)

    def plan(self, q: np.ndarray, via: list[np.ndarray]) -> np.ndarray | None:
        """Joint waypoints of straight TCP segments through ``via`` from joints ``q``, or
        ``None`` when a segment cannot be planned or the last two poses leave the
        workspace."""
        if not all(self.workspace.contains(pose[:3, 3]) for pose in via[-2:]):
            return None
        try:
            return plan_through(self.kinematics, q, via, MotionLimits())
        except MotionPlanningError:
            return None

    def pick(self, q: np.ndarray, grasp: np.ndarray) -> bool:
        """Whether a pick at ``grasp`` (4x4) and its lift plan from joints ``q``."""
        lifted = grasp.copy()
        lifted[2, 3] += self.config.lift_height
        return self.plan(q, [*self.via(q, grasp), lifted]) is not None

    def place(self, q: np.ndarray, target: np.ndarray) -> np.ndarray | None:
        """Joint waypoints of a place at ``target`` (4x4) from joints ``q``, or ``None``."""
        return self.plan(q, self.via(q, target))
