"""The real robot behind the :class:`~agentic_env.robot.interface.LowLevelRobot` protocol.

:class:`RealRobot` is what the shared :class:`~agentic_env.primitives.executor.PrimitiveExecutor`
drives on hardware (or the twin). Every :meth:`RealRobot.send`:

1. refuses to move while a fault is latched;
2. clamps the target to the joint limits and rate-limits it to the configured joint speed
   cap (``SafetyConfig.max_joint_speed``, the UR5e's pi rad/s by default: the same semantics
   as :class:`~agentic_env.sim.control.SimRobot`; a lower cap is honoured here rather than
   refused by the gate), and ramps the gripper
   reference at the servo's speed;
3. passes the target through the :class:`~agentic_env.real.safety.TargetGate`;
4. streams it for one control period, then reads the arm state (connection, safety bits,
   program state) and the gripper width.

Any failure — a rejected target, a refused command, a lost link, a safety bit, a gripper
that stops answering — latches a :class:`~agentic_env.real.safety.SafetyFault`, stops the
arm and the gripper, and raises :class:`~agentic_env.real.safety.SafetyFaultError`, which the
env turns into ``terminated=True`` with ``info["safety_fault"]``.
"""

from __future__ import annotations

import logging

import numpy as np

from agentic_env.contract.spaces import JOINT_LOWER, JOINT_UPPER
from agentic_env.real.drivers.base import (
    ArmDriver,
    ArmState,
    CommandRejectedError,
    DriverError,
    GripperDriver,
)
from agentic_env.real.safety import (
    FaultKind,
    FaultLatch,
    SafetyConfig,
    SafetyFault,
    SafetyFaultError,
    TargetGate,
    state_fault,
)
from agentic_env.robot.constants import GRIPPER_SPEED_LIMIT, GRIPPER_WIDTH_RANGE
from agentic_env.robot.interface import StepStatus
from agentic_env.robot.kinematics import ArmKinematics

logger = logging.getLogger(__name__)
#: Gripper reference changes smaller than this are not sent, metres.
_WIDTH_RESOLUTION = 1e-6


class RealRobot:
    """:class:`~agentic_env.robot.interface.LowLevelRobot` over an arm and a gripper driver.

    Args:
        arm: connected arm driver.
        gripper: connected gripper driver.
        kinematics: TCP kinematics.
        control_dt: control period, seconds.
        safety: the safety limits.
        latch: the fault latch (shared with the watchdog).
    """

    def __init__(self, arm: ArmDriver, gripper: GripperDriver, kinematics: ArmKinematics,
                 control_dt: float, safety: SafetyConfig, latch: FaultLatch) -> None:
        self.arm = arm
        self.gripper = gripper
        self.kinematics = kinematics
        self.safety = safety
        self.latch = latch
        self._control_dt = control_dt
        self.gate = TargetGate(safety, kinematics, control_dt)
        self._state: ArmState | None = None
        self._q_ref = np.zeros(6)
        self._width = 0.0
        self._width_ref = 0.0
        self._width_sent = -1.0

    @property
    def control_dt(self) -> float:
        """Control period, seconds."""
        return self._control_dt

    @property
    def time(self) -> float:
        """Controller clock of the latest state sample, seconds."""
        return 0.0 if self._state is None else self._state.timestamp

    @property
    def state(self) -> ArmState | None:
        """The latest arm state sample."""
        return self._state

    def sync(self) -> None:
        """Read the arm and gripper and make the references equal the measured state.

        Raises:
            SafetyFaultError: if a fault is latched or the state shows one.
        """
        self._raise_if_latched()
        self.refresh()
        self._q_ref = self._state.joint_positions.copy()
        self._width_ref = self._width
        self._width_sent = -1.0
        self.gate.reset(self._q_ref)

    def refresh(self) -> None:
        """Read the arm state and gripper width without moving; fault on anomalies."""
        try:
            self._state = self.arm.read_state()
        except DriverError as error:
            self.fault(FaultKind.CONNECTION_LOST, str(error))
        fault = state_fault(self._state)
        if fault is not None:
            self.trip(fault)
        try:
            self._width = self.gripper.read_position()
        except DriverError as error:
            self.fault(FaultKind.GRIPPER, f"{error}: check the gripper cable and power")

    def joint_positions(self) -> np.ndarray:
        """Measured arm joints (6,), rad."""
        return self._state.joint_positions.copy()

    def joint_velocities(self) -> np.ndarray:
        """Measured arm joint speeds (6,), rad/s."""
        return self._state.joint_velocities.copy()

    def joint_reference(self) -> np.ndarray:
        """Last commanded joint target (6,), rad."""
        return self._q_ref.copy()

    def gripper_width(self) -> float:
        """Latest servo width reading, metres."""
        return self._width

    def gripper_reference(self) -> float:
        """Gripper width reference (ramped at the servo speed), metres."""
        return self._width_ref

    def send(self, joint_target: np.ndarray, width_target: float) -> StepStatus:
        """One control period; see the module docstring.

        Raises:
            SafetyFaultError: on any fault (latched, motion stopped).
        """
        self._raise_if_latched()
        period = self._control_dt
        target = np.clip(np.asarray(joint_target, dtype=float), JOINT_LOWER, JOINT_UPPER)
        max_delta = self.safety.max_joint_speed * period  # the configured cap (<= pi)
        target = self._q_ref + np.clip(target - self._q_ref, -max_delta, max_delta)
        width = min(max(float(width_target), GRIPPER_WIDTH_RANGE[0]), GRIPPER_WIDTH_RANGE[1])
        max_width_delta = GRIPPER_SPEED_LIMIT * period
        width_ref = self._width_ref + min(max(width - self._width_ref, -max_width_delta),
                                          max_width_delta)
        try:
            self.gate.check(target, self.time)
        except SafetyFaultError as error:
            self.trip(error.fault)
        if abs(width_ref - self._width_sent) > _WIDTH_RESOLUTION:
            try:
                self.gripper.set_position(width_ref)
            except DriverError as error:
                self.fault(FaultKind.GRIPPER, f"{error}: check the gripper cable and power")
            self._width_sent = width_ref
        self._width_ref = width_ref
        try:
            self.arm.servo_joint(target, period, self.safety.max_joint_speed,
                                 self.safety.max_joint_acceleration)
        except CommandRejectedError as error:
            self.fault(FaultKind.COMMAND_REJECTED, str(error))
        except DriverError as error:
            self.fault(FaultKind.CONNECTION_LOST, str(error))
        self._q_ref = target
        self.refresh()
        return StepStatus()

    def unexpected_contact(self) -> str | None:
        """Always ``None``: on hardware a collision is the controller's protective stop,
        which :meth:`send` turns into a latched fault before the executor could ask."""
        return None

    def fault(self, kind: FaultKind, message: str) -> None:
        """Latch a fault of ``kind``, stop everything and raise it."""
        self.trip(SafetyFault(kind, message, self.time))

    def stop(self) -> None:
        """Stop the arm and hold the gripper (best effort: errors are logged)."""
        try:
            self.arm.stop(self.safety.stop_deceleration)
        except DriverError as error:
            logger.error("arm stop failed: %s", error)
        try:
            self.gripper.stop()
        except DriverError as error:
            logger.error("gripper stop failed: %s", error)

    def trip(self, fault: SafetyFault) -> None:
        """Latch ``fault`` (or keep the one latched), stop everything and raise it."""
        latched = self.latch.trip(fault)
        self.stop()
        raise SafetyFaultError(latched)

    def _raise_if_latched(self) -> None:
        fault = self.latch.fault
        if fault is not None:
            raise SafetyFaultError(fault)
