"""Observation assembly and low-level action decoding shared by the sim and the real env.

Both envs gather the same pieces — per camera an RGB image, a metric depth image, the
pinhole intrinsics and the camera pose in the base frame, plus the arm's joints, TCP pose
and gripper width — and hand them to :func:`assemble_observation`, which fixes the keys,
dtypes and layout of :mod:`agentic_env.contract`. :func:`low_level_targets` turns an
``ee_delta`` or ``joint_position`` action into the joint and gripper targets that
:meth:`agentic_env.control.LowLevelRobot.send` takes, for either robot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import mujoco
import numpy as np

from agentic_env.contract import EEDeltaScale
from agentic_env.errors import InvalidActionError
from agentic_env.kinematics import ArmKinematics
from agentic_env.motion import exp_rotation
from agentic_env.robot import GRIPPER_WIDTH_RANGE


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
    """The observation dict of :mod:`agentic_env.contract`.

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


def low_level_targets(
    control_mode: str, action: object, tcp_target: np.ndarray, kinematics: ArmKinematics,
    joint_reference: np.ndarray, control_dt: float, scale: EEDeltaScale,
) -> tuple[np.ndarray, float, np.ndarray]:
    """Joint target (6,) rad, gripper width target (m) and the new TCP target (4x4) of one
    ``ee_delta`` or ``joint_position`` action (see :mod:`agentic_env.contract`).

    ``tcp_target`` is the TCP pose the ``ee_delta`` integration starts from; it is returned
    unchanged for ``joint_position``, and moved to where IK got when IK did not converge.

    Raises:
        InvalidActionError: on a wrong shape or non-finite values.
    """
    array = np.asarray(action, dtype=float)
    if array.shape != (7,):
        raise InvalidActionError(f"{control_mode} actions have shape (7,); got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise InvalidActionError(f"{control_mode} action has non-finite values: {array}")
    if control_mode == "joint_position":
        return array[:6], float(array[6]), tcp_target
    delta = np.clip(array, -1.0, 1.0)
    target = tcp_target.copy()
    target[:3, 3] += delta[:3] * scale.linear_speed * control_dt
    target[:3, :3] = exp_rotation(delta[3:6] * scale.angular_speed * control_dt) @ target[:3, :3]
    solution = kinematics.solve(target, joint_reference, max_iterations=8)
    new_target = target if solution.converged else kinematics.forward(solution.q)
    width = (delta[6] + 1.0) / 2.0 * GRIPPER_WIDTH_RANGE[1]
    return solution.q, width, new_target
