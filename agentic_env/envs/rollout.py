"""What a primitive did at the control rate, for demonstrations: the rollout record and the
``ee_delta`` action equivalent to a move between two TCP targets."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agentic_env.contract.spaces import EEDeltaScale
from agentic_env.geometry.rotations import log_rotation
from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE


@dataclass
class PrimitiveRollout:
    """Low-level record of one primitive at the control rate (for demonstrations).

    Attributes:
        joint_targets: (T, 6) joint targets sent, radians.
        gripper_targets: (T,) gripper width targets sent, metres.
        ee_delta_actions: (T, 7) the same motion as normalised ``ee_delta`` actions.
        observations: the observation after each control period (only when the env was
            created with ``record_observations=True``), else empty.
    """

    joint_targets: list[np.ndarray] = field(default_factory=list)
    gripper_targets: list[float] = field(default_factory=list)
    ee_delta_actions: list[np.ndarray] = field(default_factory=list)
    observations: list[dict[str, np.ndarray]] = field(default_factory=list)


def ee_delta_between(
    previous: np.ndarray, current: np.ndarray, width: float, dt: float, scale: EEDeltaScale
) -> np.ndarray:
    """The normalised ``ee_delta`` action moving the TCP target from ``previous`` to ``current``.

    Values may exceed [-1, 1] when a primitive moves faster than the ``ee_delta`` scale.
    """
    translation = (current[:3, 3] - previous[:3, 3]) / (scale.linear_speed * dt)
    rotation = log_rotation(current[:3, :3] @ previous[:3, :3].T) / (scale.angular_speed * dt)
    gripper = width / GRIPPER_WIDTH_RANGE[1] * 2.0 - 1.0
    return np.concatenate([translation, rotation, [gripper]]).astype(np.float32)
