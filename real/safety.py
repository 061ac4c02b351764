"""The safety layer: advisory checks in front of the robot's own safety system.

It never replaces the UR controller's safety configuration, e-stop or protective stops; it
refuses to send targets that are plainly wrong and stops the arm on anything unexpected.

* :class:`SafetyConfig` — the limits (workspace box, speed / acceleration caps, largest
  step, watchdog period, frame age, serial timeouts).
* :class:`TargetGate` — checks every joint target before it is sent: finite, inside the
  joint limits, TCP inside the box, step, joint speed, joint acceleration and TCP speed
  within the caps.
* :func:`state_fault` — reads connection, safety status bits and program state.
* :class:`FaultLatch` — keeps the first fault until an operator clears it; protective stops
  and e-stops are never cleared automatically.
* :class:`Watchdog` — a thread that polls the arm between commands and trips the latch (and
  stops the arm) on an anomaly.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import asdict, dataclass, field
from enum import StrEnum

import numpy as np

from agentic_env.contract.spaces import JOINT_LOWER, JOINT_UPPER, Workspace
from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.real.drivers.base import (
    ANOMALY_BITS,
    ArmDriver,
    ArmState,
    DriverError,
    SafetyBits,
)
from agentic_env.robot.constants import JOINT_SPEED_LIMIT
from agentic_env.robot.kinematics import ArmKinematics

logger = logging.getLogger(__name__)


def _default_safety_box() -> Workspace:
    # Wider than the primitive workspace: approach / retreat offsets and transit moves reach
    # up to 0.3 m beyond target poses.
    return Workspace(low=(0.05, -0.80, -0.03), high=(1.00, 0.80, 1.00))


@dataclass(frozen=True)
class SafetyConfig:
    """Limits of the safety layer (base frame, SI units).

    Attributes:
        workspace: box the TCP of every joint target must lie in, metres.
        max_joint_speed: joint speed cap, rad/s (0 < cap <= pi, the UR5e's limit).
        max_joint_acceleration: cap on the change of commanded joint speed, rad/s^2; also
            the acceleration given to the controller's moves.
        max_tcp_speed: TCP speed cap between consecutive targets, m/s.
        max_step: largest joint change between consecutive targets, rad.
        stop_deceleration: joint deceleration of a safety stop, rad/s^2.
        watchdog_period: how often the watchdog polls the arm, seconds.
        max_frame_age: oldest camera frame accepted, seconds.
        frame_timeout: longest wait for a camera frame, seconds.
        serial_timeout: longest wait for one gripper reply, seconds.
        serial_retries: extra attempts after a garbled or missing gripper reply.
    """

    workspace: Workspace = field(default_factory=_default_safety_box)
    max_joint_speed: float = float(JOINT_SPEED_LIMIT)
    max_joint_acceleration: float = 60.0
    max_tcp_speed: float = 1.5
    max_step: float = 0.2
    stop_deceleration: float = 4.0
    watchdog_period: float = 0.05
    max_frame_age: float = 0.25
    frame_timeout: float = 1.0
    serial_timeout: float = 0.1
    serial_retries: int = 2

    def __post_init__(self) -> None:
        positive = ("max_joint_acceleration", "max_tcp_speed", "max_step", "stop_deceleration",
                    "watchdog_period", "max_frame_age", "frame_timeout", "serial_timeout")
        for name in positive:
            if not getattr(self, name) > 0.0:
                raise InvalidConfigError(f"SafetyConfig.{name} must be > 0; got "
                                         f"{getattr(self, name)}")
        if not 0.0 < self.max_joint_speed <= JOINT_SPEED_LIMIT + 1e-9:
            raise InvalidConfigError(
                f"SafetyConfig.max_joint_speed={self.max_joint_speed} rad/s must be in "
                f"(0, {JOINT_SPEED_LIMIT:.4f}] (the UR5e's joint speed limit)"
            )
        if self.serial_retries < 0:
            raise InvalidConfigError("SafetyConfig.serial_retries must be >= 0")


class FaultKind(StrEnum):
    """What tripped the safety layer."""

    PROTECTIVE_STOP = "protective_stop"
    EMERGENCY_STOP = "emergency_stop"
    SAFETY_VIOLATION = "safety_violation"
    CONTROLLER_FAULT = "controller_fault"
    CONNECTION_LOST = "connection_lost"
    PROGRAM_STOPPED = "program_stopped"
    TARGET_REJECTED = "target_rejected"
    COMMAND_REJECTED = "command_rejected"
    STALE_FRAME = "stale_frame"
    GRIPPER = "gripper"
    OPERATOR_STOP = "operator_stop"


@dataclass(frozen=True)
class SafetyFault:
    """A latched fault, reported in ``info["safety_fault"]``.

    Attributes:
        kind: a :class:`FaultKind` value.
        message: what happened and what the operator should do.
        robot_time: controller clock when it was detected, seconds.
    """

    kind: str
    message: str
    robot_time: float = 0.0

    def as_info(self) -> dict[str, object]:
        """Plain-dict form for ``info``."""
        return asdict(self)


class SafetyFaultError(AgenticEnvError, RuntimeError):
    """Raised inside the control path when the safety layer trips; carries the fault."""

    def __init__(self, fault: SafetyFault) -> None:
        super().__init__(f"{fault.kind}: {fault.message}")
        self.fault = fault


_STOP_BITS: tuple[tuple[SafetyBits, FaultKind, str], ...] = (
    (SafetyBits.EMERGENCY_STOPPED | SafetyBits.ROBOT_EMERGENCY_STOPPED
     | SafetyBits.SYSTEM_EMERGENCY_STOPPED, FaultKind.EMERGENCY_STOP,
     "emergency stop: release it, restart the arm on the pendant, then clear the fault"),
    (SafetyBits.PROTECTIVE_STOPPED, FaultKind.PROTECTIVE_STOP,
     "protective stop (collision or limit): inspect the cell, unlock it on the pendant, "
     "then clear the fault"),
    (SafetyBits.VIOLATION | SafetyBits.FAULT, FaultKind.CONTROLLER_FAULT,
     "controller safety violation or fault: read the pendant log before restarting"),
    (SafetyBits.SAFEGUARD_STOPPED | SafetyBits.RECOVERY_MODE
     | SafetyBits.STOPPED_DUE_TO_SAFETY, FaultKind.SAFETY_VIOLATION,
     "safeguard stop or recovery mode: resolve it on the pendant"),
)


def state_fault(state: ArmState) -> SafetyFault | None:
    """The fault a state sample shows (connection, safety bits, program), or ``None``."""
    if not state.connected:
        return SafetyFault(FaultKind.CONNECTION_LOST,
                           "the controller link dropped: check the network, then reconnect",
                           state.timestamp)
    bits = SafetyBits(state.safety_bits)
    if bits & ANOMALY_BITS:
        for mask, kind, advice in _STOP_BITS:
            if bits & mask:
                return SafetyFault(kind, f"{advice} (safety bits {bits!r})", state.timestamp)
    if not state.program_running:
        return SafetyFault(FaultKind.PROGRAM_STOPPED,
                           "the control script stopped on the controller (remote control "
                           "lost?): check the pendant", state.timestamp)
    return None


class TargetGate:
    """Checks each joint target against :class:`SafetyConfig` before it is sent.

    Args:
        config: the limits.
        kinematics: TCP forward kinematics.
        period: control period, seconds.
    """

    def __init__(self, config: SafetyConfig, kinematics: ArmKinematics, period: float) -> None:
        self.config = config
        self.kinematics = kinematics
        self.period = period
        self._previous: np.ndarray | None = None
        self._velocity = np.zeros(6)
        self._previous_tcp = np.zeros(3)

    def reset(self, q: np.ndarray) -> None:
        """Start from rest at ``q`` (6,) rad (after connecting, a stop or a blocking move)."""
        self._previous = np.asarray(q, dtype=float).copy()
        self._velocity = np.zeros(6)
        self._previous_tcp = self.kinematics.forward(self._previous)[:3, 3]

    def check(self, q: np.ndarray, robot_time: float) -> None:
        """Accept ``q`` (6,) rad as the next target or raise.

        Raises:
            SafetyFaultError: of kind ``target_rejected`` naming the violated limit.
        """
        cfg = self.config

        def reject(why: str) -> SafetyFaultError:
            return SafetyFaultError(SafetyFault(FaultKind.TARGET_REJECTED, why, robot_time))

        q = np.asarray(q, dtype=float)
        if q.shape != (6,) or not np.all(np.isfinite(q)):
            raise reject(f"joint target must be 6 finite numbers; got {q}")
        if np.any(q < JOINT_LOWER) or np.any(q > JOINT_UPPER):
            raise reject(f"joint target {np.round(q, 3).tolist()} rad is outside the joint "
                         "limits")
        tcp = self.kinematics.forward(q)[:3, 3]
        if not cfg.workspace.contains(tcp):
            raise reject(f"TCP target {np.round(tcp, 3).tolist()} m is outside the safety box "
                         f"({cfg.workspace.describe()})")
        if self._previous is None:
            raise reject("no reference state: reset the gate from the measured joints first")
        step = q - self._previous
        largest = float(np.max(np.abs(step)))
        if largest > cfg.max_step:
            raise reject(f"joint step {largest:.3f} rad exceeds max_step {cfg.max_step} rad")
        velocity = step / self.period
        speed = float(np.max(np.abs(velocity)))
        if speed > cfg.max_joint_speed + 1e-6:
            raise reject(f"joint speed {speed:.2f} rad/s exceeds {cfg.max_joint_speed:.2f}")
        acceleration = float(np.max(np.abs(velocity - self._velocity))) / self.period
        if acceleration > cfg.max_joint_acceleration:
            raise reject(f"joint acceleration {acceleration:.1f} rad/s^2 exceeds "
                         f"{cfg.max_joint_acceleration:.1f}")
        tcp_speed = float(np.linalg.norm(tcp - self._previous_tcp)) / self.period
        if tcp_speed > cfg.max_tcp_speed:
            raise reject(f"TCP speed {tcp_speed:.2f} m/s exceeds {cfg.max_tcp_speed:.2f}")
        self._previous, self._velocity, self._previous_tcp = q.copy(), velocity, tcp


class FaultLatch:
    """Holds the first fault until :meth:`clear`; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fault: SafetyFault | None = None

    @property
    def fault(self) -> SafetyFault | None:
        """The latched fault, or ``None``."""
        with self._lock:
            return self._fault

    def trip(self, fault: SafetyFault) -> SafetyFault:
        """Latch ``fault`` unless one is latched already; return the latched one."""
        with self._lock:
            if self._fault is None:
                self._fault = fault
                logger.error("safety fault latched: %s: %s", fault.kind, fault.message)
            return self._fault

    def clear(self) -> None:
        """Forget the fault (operator decision; see ``RealEnv.clear_fault``)."""
        with self._lock:
            self._fault = None


class Watchdog:
    """Polls the arm every ``period`` seconds between commands; on an anomaly trips the
    latch and stops the arm.

    Args:
        arm: the arm driver (its ``read_state`` and ``stop`` must be thread-safe).
        latch: the fault latch shared with the control path.
        config: ``watchdog_period`` and ``stop_deceleration``.
    """

    def __init__(self, arm: ArmDriver, latch: FaultLatch, config: SafetyConfig) -> None:
        self.arm = arm
        self.latch = latch
        self.config = config
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start polling (no-op when running)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stopped.clear()
        self._thread = threading.Thread(target=self._run, name="safety-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop polling and wait for the thread."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None

    def poll(self) -> SafetyFault | None:
        """Check the arm once; trip the latch and stop the arm on an anomaly."""
        try:
            fault = state_fault(self.arm.read_state())
        except DriverError as error:
            fault = SafetyFault(FaultKind.CONNECTION_LOST, str(error))
        if fault is None:
            return None
        latched = self.latch.trip(fault)
        try:
            self.arm.stop(self.config.stop_deceleration)
        except DriverError as error:
            logger.error("stopping the arm after a fault failed: %s", error)
        return latched

    def _run(self) -> None:
        while not self._stopped.wait(self.config.watchdog_period):
            if self.latch.fault is None:
                self.poll()
