"""Low-level action decoding shared by the sim and the real env.

:func:`low_level_targets` turns an ``ee_delta`` or ``joint_position`` action into the joint and
gripper targets that :meth:`agentic_env.robot.interface.LowLevelRobot.send` takes, for either
robot.
"""

from __future__ import annotations

import numpy as np

from agentic_env.contract.spaces import EEDeltaScale
from agentic_env.errors import InvalidActionError
from agentic_env.geometry.rotations import exp_rotation
from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE
from agentic_env.robot.kinematics import ArmKinematics


def low_level_targets(
    control_mode: str, action: object, tcp_target: np.ndarray, kinematics: ArmKinematics,
    joint_reference: np.ndarray, control_dt: float, scale: EEDeltaScale,
) -> tuple[np.ndarray, float, np.ndarray]:
    """Joint target (6,) rad, gripper width target (m) and the new TCP target (4x4) of one
    ``ee_delta`` or ``joint_position`` action (see :mod:`agentic_env.contract.spaces`).

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
