"""The low-level robot interface every motion goes through, in sim and on hardware.

Every motion — a low-level RL action, a step of a primitive, a recorded demonstration —
goes through :meth:`LowLevelRobot.send`, which commands joint position targets and a gripper
width for one control period. :class:`agentic_env.sim.control.SimRobot` implements it over
MuJoCo, :class:`agentic_env.real.robot.RealRobot` over ur-rtde.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from agentic_env.robot.kinematics import ArmKinematics


@dataclass(frozen=True)
class StepStatus:
    """What one control period reported.

    Attributes:
        diverged: the physics reported bad accelerations/positions/velocities (sim only).
    """

    diverged: bool = False


class LowLevelRobot(Protocol):
    """Joint-level control at a fixed rate, with the measurements a real UR5e reports."""

    kinematics: ArmKinematics

    @property
    def control_dt(self) -> float:
        """Control period, seconds."""
        ...

    @property
    def time(self) -> float:
        """Robot clock, seconds (sim time in simulation)."""
        ...

    def joint_positions(self) -> np.ndarray:
        """Measured arm joint positions (6,), radians."""
        ...

    def joint_velocities(self) -> np.ndarray:
        """Measured arm joint velocities (6,), rad/s."""
        ...

    def joint_reference(self) -> np.ndarray:
        """Last commanded arm joint reference (6,), radians."""
        ...

    def gripper_width(self) -> float:
        """Servo width reading, metres between the pads."""
        ...

    def send(self, joint_target: np.ndarray, width_target: float) -> StepStatus:
        """Track ``joint_target`` (6,) rad and ``width_target`` (m) for one control period.

        Targets are clamped to joint limits and rate-limited to the joints' and the servo's
        speed limits, so any finite target is safe to send.
        """
        ...

    def unexpected_contact(self) -> str | None:
        """Description of a contact the robot must not make (arm link with anything, any
        robot part with the static scene), or ``None``. Checked by primitives after each
        period; on hardware this is the controller's protective stop."""
        ...
