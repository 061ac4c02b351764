"""Reorientation poses: the PDDL pose names and the pose predicates over the sim state.

Angles of the tolerances are degrees; the resting gap is metres. Directions are in the robot
base frame (see :func:`agentic_env.robot.reorienting.handle_direction`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentic_env.robot.reorienting import handle_direction
from agentic_env.sim.state import SceneState, body_box, holding
from agentic_env.tasks.vocabulary import task_vocabulary

#: Handle directions a mug can be asked for, and how instructions say them (keys:
#: :data:`agentic_env.robot.reorienting.HANDLE_DIRECTION_NAMES`).
HANDLE_DIRECTIONS: dict[str, str] = task_vocabulary("reorientation")["handle_directions"]
#: Every pose of the PDDL problems (a resting item is in exactly one of them).
POSES: tuple[str, ...] = (
    "upright", "on-side", "upside-down", "tilted",
    *(f"handle-{direction}" for direction in HANDLE_DIRECTIONS),
)



@dataclass(frozen=True)
class PoseTolerances:
    """Angular tolerances of the pose predicates (degrees) and the resting gap (metres).

    Attributes:
        upright_angle: an upright (or upside-down) item's body axis is this close to vertical.
        side_angle: an item on its side has its body axis this close to horizontal.
        handle_angle: a mug's handle direction is this close to the asked direction.
        contact_gap: a resting item's lowest point is at most this far above the table.
    """

    upright_angle: float = 15.0
    side_angle: float = 20.0
    handle_angle: float = 25.0
    contact_gap: float = 0.012



def axis_tilt(scene: SceneState, body: str) -> float:
    """Angle between ``body``'s axis (body z, bottom to top) and straight up, degrees."""
    axis = scene.body_rotation(body)[:, 2]
    return float(np.degrees(np.arccos(np.clip(axis[2], -1.0, 1.0))))


def handle_error(scene: SceneState, body: str, direction: str) -> float:
    """Angle between ``body``'s handle (body x, projected on the table) and ``direction``,
    degrees."""
    handle = scene.body_rotation(body)[:2, 0]
    wanted = handle_direction(direction, scene.body_position(body))
    angle = np.arctan2(handle[1], handle[0]) - np.arctan2(wanted[1], wanted[0])
    return float(np.degrees(abs((angle + np.pi) % (2 * np.pi) - np.pi)))


def resting_pose(scene: SceneState, body: str, handled: bool,
                 tol: PoseTolerances | None = None) -> str | None:
    """The pose (one of :data:`POSES`) ``body`` rests on the table in, or ``None`` when it is
    held or not resting on the table (see
    :class:`~agentic_env.tasks.reorientation.ReorientationTask`)."""
    tol = tol or PoseTolerances()
    if holding(scene, body) or body_box(scene, body).low[2] > tol.contact_gap:
        return None
    tilt = axis_tilt(scene, body)
    if tilt <= tol.upright_angle:
        if handled:
            for direction in HANDLE_DIRECTIONS:
                if handle_error(scene, body, direction) <= tol.handle_angle:
                    return f"handle-{direction}"
        return "upright"
    if tilt >= 180.0 - tol.upright_angle:
        return "upside-down"
    if abs(tilt - 90.0) <= tol.side_angle:
        return "on-side"
    return "tilted"


def in_pose(scene: SceneState, body: str, pose: str, handled: bool,
            tol: PoseTolerances | None = None) -> bool:
    """``(in-pose body pose)``: ``body`` rests on the table in ``pose``."""
    return resting_pose(scene, body, handled, tol) == pose
