"""Constructors for primitive actions and pose conversions.

Poses may be given as a 4x4 homogeneous matrix or as a 7-vector ``[x, y, z, qw, qx, qy, qz]``
(metres, unit quaternion), always for the TCP in the robot base frame.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.spaces import PRIMITIVES
from agentic_env.errors import InvalidActionError

PoseLike = np.ndarray | list[float] | tuple[float, ...]
_IDENTITY = np.array([0, 0, 0, 1, 0, 0, 0], dtype=np.float32)


def pose_to_vector(pose: PoseLike) -> np.ndarray:
    """Return ``[x, y, z, qw, qx, qy, qz]`` (float32) for a 4x4 matrix or a 7-vector."""
    array = np.asarray(pose, dtype=float)
    if array.shape == (7,):
        return array.astype(np.float32)
    if array.shape != (4, 4):
        raise InvalidActionError(f"a pose must be a 4x4 matrix or a 7-vector, got {array.shape}")
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(array[:3, :3]).flatten())
    return np.concatenate([array[:3, 3], quat]).astype(np.float32)


def vector_to_pose(vector: np.ndarray) -> np.ndarray:
    """Return the 4x4 matrix of ``[x, y, z, qw, qx, qy, qz]`` (the quaternion is normalised).

    Raises:
        InvalidActionError: if the quaternion has (near) zero norm.
    """
    vector = np.asarray(vector, dtype=float)
    quat = vector[3:7]
    norm = float(np.linalg.norm(quat))
    if not norm > 1e-6:
        raise InvalidActionError(f"pose quaternion {quat.tolist()} has zero norm")
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, quat / norm)
    pose = np.eye(4)
    pose[:3, :3] = rotation.reshape(3, 3)
    pose[:3, 3] = vector[:3]
    return pose


def pose_or_none(vector: np.ndarray) -> np.ndarray | None:
    """:func:`vector_to_pose`, or ``None`` when ``vector`` is not a valid pose (a primitive's
    target the executor refuses)."""
    try:
        return vector_to_pose(vector)
    except InvalidActionError:
        return None


def primitive(
    name: str, pose: PoseLike | None = None, width: float = 0.0, distance: float = 0.0
) -> dict[str, Any]:
    """Build a primitive action dict; ``name`` must be one of :data:`PRIMITIVES`."""
    if name not in PRIMITIVES:
        raise InvalidActionError(f"unknown primitive {name!r}; valid: {', '.join(PRIMITIVES)}")
    return {
        "primitive": PRIMITIVES.index(name),
        "pose": _IDENTITY.copy() if pose is None else pose_to_vector(pose),
        "width": np.array([width], dtype=np.float32),
        "distance": np.array([distance], dtype=np.float32),
    }


def pick(grasp_pose: PoseLike, width: float, approach_distance: float = 0.0) -> dict[str, Any]:
    """Pick at ``grasp_pose`` (TCP, base frame) with the gripper pre-opened to ``width`` m."""
    return primitive("pick", grasp_pose, width, approach_distance)


def place(pose: PoseLike, approach_distance: float = 0.0) -> dict[str, Any]:
    """Carry the held object so the TCP reaches ``pose`` (base frame), release, retreat."""
    return primitive("place", pose, 0.0, approach_distance)


def move_to(pose: PoseLike) -> dict[str, Any]:
    """Move the TCP in a straight line to ``pose`` (base frame), e.g. for a wrist view."""
    return primitive("move_to", pose)


def home() -> dict[str, Any]:
    """Return the arm to its home configuration (joint-space motion)."""
    return primitive("home")


def open_gripper() -> dict[str, Any]:
    """Open the gripper fully (85 mm)."""
    return primitive("open_gripper")


def close_gripper() -> dict[str, Any]:
    """Close the gripper until it is shut or blocked at the force limit."""
    return primitive("close_gripper")


def open_drawer(handle_pose: PoseLike, distance: float = 0.0) -> dict[str, Any]:
    """Grasp the drawer handle at ``handle_pose`` (TCP grasp pose, base frame; z points into
    the cabinet) and pull it out by ``distance`` m along -z (0 = the default, 0.2 m)."""
    return primitive("open_drawer", handle_pose, 0.0, distance)


def close_drawer(handle_pose: PoseLike, distance: float = 0.0) -> dict[str, Any]:
    """Grasp the drawer handle at ``handle_pose`` (TCP grasp pose, base frame) and push it in
    by ``distance`` m along +z, or until the drawer stops (0 = the default, 0.2 m)."""
    return primitive("close_drawer", handle_pose, 0.0, distance)


def top_down_pose(position: np.ndarray, yaw: float = 0.0) -> np.ndarray:
    """TCP pose (4x4) at ``position`` (base frame, m) pointing straight down.

    ``yaw`` (rad) turns the closing axis about the vertical: at 0 the fingers close along the
    base y axis.
    """
    c, s = np.cos(yaw), np.sin(yaw)
    pose = np.eye(4)
    # columns: tool x, tool y (closing), tool z (approach, down)
    pose[:3, :3] = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ np.diag([1, -1, -1])
    pose[:3, 3] = position
    return pose


def box_top_grasp_yaw(rotation: np.ndarray) -> float:
    """Yaw (rad) of a top grasp across a box's faces, folded into [-pi/4, pi/4].

    ``rotation`` is the box's (3, 3) rotation in the base frame; folding keeps the wrist near
    its middle range, which a box's 90-degree symmetry allows.
    """
    yaw = float(np.arctan2(rotation[1, 0], rotation[0, 0]))
    return (yaw + np.pi / 4) % (np.pi / 2) - np.pi / 4
