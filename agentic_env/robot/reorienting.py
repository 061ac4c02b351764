"""Tool rotations that turn a held object into a named resting pose.

Pure geometry, shared by the reorientation task's expert (from true object poses) and the
agents (from estimated ones). Frames: the robot base frame, z up. An object's *axis* is its
body z axis, from its base to its top; a mug's handle points along its body x axis. A tool
rotation is the TCP's (3, 3) rotation: z is the approach axis, y the closing axis.

Poses: ``upright`` and ``handle-<direction>`` (axis up), ``upside-down`` (axis down),
``on-side`` (axis horizontal).
"""

from __future__ import annotations

import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.rotations import (
    axis_rotation,
    rotation_between,
    rotation_z,
    unit,
)

#: Directions a mug's handle can be asked to point (pose ``handle-<direction>``).
HANDLE_DIRECTION_NAMES: tuple[str, ...] = ("left", "right", "toward-robot", "away-from-robot")
#: The poses an object can be turned into.
TURN_GOALS: tuple[str, ...] = ("upright", "upside-down", "on-side",
                               *(f"handle-{d}" for d in HANDLE_DIRECTION_NAMES))

#: Tool yaws (about the vertical) tried for a turning place, radians.
_PLACE_YAWS = np.radians(np.arange(0.0, 360.0, 15.0))


def leaning_pose(position: np.ndarray, lean: np.ndarray, tilt: float) -> np.ndarray:
    """TCP pose (4x4) at ``position`` whose approach axis leans ``tilt`` radians from straight
    down towards horizontal unit vector ``lean``; the closing axis is horizontal, across
    ``lean``, and the tool x axis points up and towards ``lean`` (``tilt`` = 0: a top-down
    pose with the tool x along ``lean``)."""
    up = np.array([0.0, 0.0, 1.0])
    z = -np.cos(tilt) * up + np.sin(tilt) * lean
    x = np.sin(tilt) * up + np.cos(tilt) * lean
    pose = np.eye(4)
    pose[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    pose[:3, 3] = position
    return pose


def handle_direction(direction: str, position: np.ndarray) -> np.ndarray:
    """Unit vector (2,) in the base frame of handle ``direction`` for a mug at ``position``.

    ``left`` is base +y, ``right`` base -y; ``toward-robot`` points from the mug to the robot
    base, ``away-from-robot`` the opposite way.
    """
    if direction == "left":
        return np.array([0.0, 1.0])
    if direction == "right":
        return np.array([0.0, -1.0])
    radial = unit(np.asarray(position[:2], dtype=float))
    if direction == "toward-robot":
        return -radial
    if direction == "away-from-robot":
        return radial
    raise InvalidConfigError(f"unknown handle direction {direction!r}; valid: "
                             f"{', '.join(HANDLE_DIRECTION_NAMES)}")


def needs_turn(axis: np.ndarray, pose: str) -> bool:
    """Whether ``pose`` needs an object whose axis is now ``axis`` turned by about 90 deg or
    more (a turn about the tool's closing axis, not just about the vertical)."""
    half = np.cos(np.radians(45.0))
    if pose == "on-side":
        return abs(axis[2]) > half
    if pose == "upright" or pose.startswith("handle-"):
        return axis[2] < half
    if pose == "upside-down":
        return axis[2] > -half
    return False


def goal_axis(axis: np.ndarray, pose: str) -> np.ndarray | None:
    """Where ``pose`` wants the object's axis (the one closest to ``axis``), or ``None`` for
    a pose that fixes no axis."""
    if pose == "upright" or pose.startswith("handle-"):
        return np.array([0.0, 0.0, 1.0])
    if pose == "upside-down":
        return np.array([0.0, 0.0, -1.0])
    if pose == "on-side":
        return unit(np.array([axis[0], axis[1], 0.0]))
    return None


def turned_rotations(tcp_rot: np.ndarray, axis_in_tool: np.ndarray, pose: str,
                     spot: np.ndarray) -> list[np.ndarray]:
    """Tool rotations that put a held object's axis where ``pose`` wants it, best first.

    The tool turns about its closing axis, then about the vertical (every 15 deg); the
    object's axis is then snapped exactly onto the goal axis. Rotations whose approach axis
    does not point down (z below -0.3) are dropped; the rest are ranked by how far the tool
    leans away from the robot (seen from ``spot``, the place's (x, y) in the base frame) and
    how steeply it points down.

    Args:
        tcp_rot: the tool's rotation now (3, 3), base frame.
        axis_in_tool: the held object's axis in the tool frame (unit).
        pose: the goal pose name.
        spot: (x, y) of the place, metres.
    """
    closing = tcp_rot[:, 1]
    axis = tcp_rot @ axis_in_tool
    perpendicular = axis - (axis @ closing) * closing
    a, b = perpendicular[2], np.cross(closing, perpendicular)[2]
    best = float(np.arctan2(b, a))  # the turn that points the axis most upwards
    if pose == "upside-down":
        turns = [best + np.pi]
    elif pose == "on-side":
        turns = [best + np.pi / 2, best - np.pi / 2]
    else:
        turns = [best]
    outward = np.arctan2(spot[1], spot[0])
    ranked = []
    for turn in turns:
        turned = axis_rotation(closing, turn) @ tcp_rot
        for yaw in _PLACE_YAWS:
            rotation = rotation_z(float(yaw)) @ turned
            moved = rotation @ axis_in_tool
            wanted = goal_axis(moved, pose)
            if wanted is None:
                continue
            rotation = rotation_between(moved, wanted) @ rotation
            approach = rotation[:, 2]
            if approach[2] > -0.3:  # the tool must point down to set an object down
                continue
            lean = np.arctan2(approach[1], approach[0]) - outward
            cost = abs((lean + np.pi) % (2 * np.pi) - np.pi) - 2.0 * approach[2] ** 2
            ranked.append((cost, rotation))
    ranked.sort(key=lambda entry: entry[0])
    return [rotation for _, rotation in ranked]
