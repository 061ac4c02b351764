"""Rotations and angles: one copy of each helper, numpy only.

Conventions: rotation matrices are (3, 3) and act on column vectors; quaternions are
(w, x, y, z); angles are radians; "yaw" is a rotation about the base frame's vertical z axis.
"""

from __future__ import annotations

import numpy as np


def wrap_angle(angle: float) -> float:
    """``angle`` (rad) wrapped into [-pi, pi)."""
    return float((angle + np.pi) % (2 * np.pi) - np.pi)


def fold_angle(angle: float) -> float:
    """``angle`` (rad) folded into [-pi/2, pi/2) (a parallel gripper's symmetry)."""
    return float((angle + np.pi / 2) % np.pi - np.pi / 2)


def yaw_of(rotation: np.ndarray, axis: int = 0) -> float:
    """Heading (rad) of the rotation's ``axis`` column (0 = x, 1 = y, 2 = z) in the xy plane."""
    return float(np.arctan2(rotation[1, axis], rotation[0, axis]))


def face_up_axis(rotation: np.ndarray) -> int:
    """Index of the body axis (0 = x, 1 = y, 2 = z) closest to vertical, up or down."""
    return int(np.argmax(np.abs(rotation[2])))


def face_yaw(rotation: np.ndarray) -> float:
    """Yaw (rad) of a cube's side faces, folded into [-pi/4, pi/4), whichever face is up."""
    up = face_up_axis(rotation)
    yaw = yaw_of(rotation, (up + 1) % 3)
    return (yaw + np.pi / 4) % (np.pi / 2) - np.pi / 4


def rotation_z(angle: float) -> np.ndarray:
    """Rotation (3, 3) about the vertical by ``angle`` radians."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def yaw_quat(yaw: float) -> np.ndarray:
    """Quaternion (w, x, y, z) of a rotation by ``yaw`` radians about z."""
    return np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])


def quat_to_matrix(quat: tuple[float, ...] | np.ndarray) -> np.ndarray:
    """(3, 3) rotation of a quaternion (w, x, y, z); normalised first."""
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def unit(vector: np.ndarray) -> np.ndarray:
    """``vector`` scaled to length 1 (a zero vector stays zero)."""
    return vector / max(float(np.linalg.norm(vector)), 1e-12)


def _skew(k: np.ndarray) -> np.ndarray:
    return np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])


def log_rotation(rotation: np.ndarray) -> np.ndarray:
    """Axis-angle vector (3,), radians, of a rotation matrix."""
    cos_angle = np.clip((np.trace(rotation) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cos_angle)
    if angle < 1e-9:
        return np.zeros(3)
    axis = np.array(
        [rotation[2, 1] - rotation[1, 2], rotation[0, 2] - rotation[2, 0],
         rotation[1, 0] - rotation[0, 1]]
    )
    if np.pi - angle < 1e-6:  # 180 degrees: axis from the symmetric part
        values, vectors = np.linalg.eigh((rotation + np.eye(3)) / 2.0)
        return vectors[:, int(np.argmax(values))] * angle
    return axis / (2.0 * np.sin(angle)) * angle


def exp_rotation(axis_angle: np.ndarray) -> np.ndarray:
    """Rotation matrix of an axis-angle vector (3,), radians (Rodrigues' formula)."""
    angle = np.linalg.norm(axis_angle)
    if angle < 1e-12:
        return np.eye(3)
    skew = _skew(axis_angle / angle)
    return np.eye(3) + np.sin(angle) * skew + (1 - np.cos(angle)) * skew @ skew


def axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation (3, 3) by ``angle`` radians about ``axis``."""
    return exp_rotation(unit(axis) * angle)


def rotation_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Smallest rotation (3, 3) taking unit vector ``a`` onto unit vector ``b``."""
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    axis = np.cross(a, b)
    sin, cos = float(np.linalg.norm(axis)), float(np.dot(a, b))
    if sin < 1e-9:
        if cos > 0:
            return np.eye(3)
        other = np.eye(3)[int(np.argmin(np.abs(a)))]
        axis = np.cross(a, other)
        axis /= np.linalg.norm(axis)
        return 2.0 * np.outer(axis, axis) - np.eye(3)
    skew = _skew(axis / sin)
    return np.eye(3) + sin * skew + (1 - cos) * skew @ skew
