"""Observation assembly shared by the sim and the real env.

Both envs gather the same pieces — per camera an RGB image, a metric depth image, the
pinhole intrinsics and the camera pose in the base frame, plus the arm's joints, TCP pose
and gripper width — and hand them to :func:`assemble_observation`, which fixes the keys,
dtypes and layout of :mod:`agentic_env.contract.spaces`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import mujoco
import numpy as np

from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE


@dataclass(frozen=True)
class CameraView:
    """One camera's share of an observation.

    Attributes:
        rgb: (H, W, 3) uint8 colour image.
        depth: (H, W) float32 depth along the optical axis, metres; 0 = no return.
        intrinsics: (3, 3) pinhole matrix of the OpenCV camera frame, pixels.
        extrinsics: (4, 4) pose of the OpenCV camera frame in the robot base frame.
    """

    rgb: np.ndarray
    depth: np.ndarray
    intrinsics: np.ndarray
    extrinsics: np.ndarray


def tcp_pose_vector(pose: np.ndarray) -> np.ndarray:
    """The (7,) ``tcp_pose`` entry (x, y, z m; quaternion w, x, y, z) of a 4x4 pose."""
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(pose[:3, :3]).flatten())
    return np.concatenate([pose[:3, 3], quat])


def assemble_observation(
    views: Mapping[str, CameraView], joint_positions: np.ndarray, tcp_pose: np.ndarray,
    gripper_width: float,
) -> dict[str, np.ndarray]:
    """The observation dict of :mod:`agentic_env.contract.spaces`.

    Args:
        views: per camera name, in the order of the env's cameras.
        joint_positions: (6,) measured arm joints, rad.
        tcp_pose: (4, 4) TCP pose in the base frame.
        gripper_width: measured opening, metres (clipped to the contract's range).
    """
    obs: dict[str, np.ndarray] = {}
    for name, view in views.items():
        obs[f"{name}_rgb"] = view.rgb
        obs[f"{name}_depth"] = view.depth
        obs[f"{name}_intrinsics"] = np.asarray(view.intrinsics, dtype=np.float32)
        obs[f"{name}_extrinsics"] = np.asarray(view.extrinsics, dtype=np.float32)
    obs["joint_positions"] = np.asarray(joint_positions, dtype=np.float32)
    obs["tcp_pose"] = tcp_pose_vector(tcp_pose).astype(np.float32)
    width = np.clip(gripper_width, *GRIPPER_WIDTH_RANGE)
    obs["gripper_width"] = np.array([width], dtype=np.float32)
    return obs


