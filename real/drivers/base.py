"""Driver interfaces of the real workcell and the errors drivers raise.

Three small interfaces — :class:`ArmDriver`, :class:`CameraDriver`, :class:`GripperDriver` —
each a context manager around ``connect()`` / ``disconnect()``. The hardware drivers
(ur-rtde, pyk4a, pyrealsense2, pyserial) and the MuJoCo twins implement the same ones, so
:class:`~agentic_env.real.real_env.RealEnv` runs the same code over either.

Frames: the arm reports in the UR controller's base frame (the robot base frame of
:mod:`agentic_env.contract.spaces`); TCP poses are UR pose vectors ``x, y, z`` (m) and a rotation
vector ``rx, ry, rz`` (rad).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag
from types import TracebackType
from typing import Protocol, Self

import numpy as np

from agentic_env.errors import AgenticEnvError


class DriverError(AgenticEnvError, RuntimeError):
    """A device failed or answered out of protocol."""


class ConnectionLostError(DriverError):
    """The link to a device dropped (cable, network, controller restart)."""


class CommandRejectedError(DriverError):
    """The controller refused a command (target unreachable, not in remote control...)."""


class FrameTimeoutError(DriverError):
    """A camera delivered no frame within the timeout."""


class MissingDriverError(AgenticEnvError, ImportError):
    """An optional hardware package is not installed; the message names what to install."""


def require(module: str, what: str, install: str) -> object:
    """Import ``module`` lazily or raise :class:`MissingDriverError` naming ``install``."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingDriverError(
            f"{what} needs the Python module {module!r} ({error}); {install}"
        ) from None


class SafetyBits(IntFlag):
    """UR controller safety status bits (RTDE ``safety_status_bits``)."""

    NORMAL_MODE = 1 << 0
    REDUCED_MODE = 1 << 1
    PROTECTIVE_STOPPED = 1 << 2
    RECOVERY_MODE = 1 << 3
    SAFEGUARD_STOPPED = 1 << 4
    SYSTEM_EMERGENCY_STOPPED = 1 << 5
    ROBOT_EMERGENCY_STOPPED = 1 << 6
    EMERGENCY_STOPPED = 1 << 7
    VIOLATION = 1 << 8
    FAULT = 1 << 9
    STOPPED_DUE_TO_SAFETY = 1 << 10


#: Bits any one of which stops the env (everything but normal and reduced mode).
ANOMALY_BITS = (SafetyBits.PROTECTIVE_STOPPED | SafetyBits.RECOVERY_MODE
                | SafetyBits.SAFEGUARD_STOPPED | SafetyBits.SYSTEM_EMERGENCY_STOPPED
                | SafetyBits.ROBOT_EMERGENCY_STOPPED | SafetyBits.EMERGENCY_STOPPED
                | SafetyBits.VIOLATION | SafetyBits.FAULT | SafetyBits.STOPPED_DUE_TO_SAFETY)


@dataclass(frozen=True)
class ArmState:
    """One state sample of the arm.

    Attributes:
        timestamp: controller clock, seconds.
        joint_positions: (6,) measured joint angles, rad, shoulder pan to wrist 3.
        joint_velocities: (6,) measured joint speeds, rad/s.
        tcp_pose: (6,) the controller's TCP pose, x y z (m) + rotation vector (rad), base frame.
        safety_bits: :class:`SafetyBits` reported by the controller.
        program_running: whether the control script runs on the controller.
        connected: whether the driver still receives data.
    """

    timestamp: float
    joint_positions: np.ndarray
    joint_velocities: np.ndarray
    tcp_pose: np.ndarray
    safety_bits: SafetyBits
    program_running: bool
    connected: bool


@dataclass(frozen=True)
class RawFrame:
    """One RGB-D frame as the device delivers it (native resolution and formats).

    Attributes:
        color: (H, W, 3) or (H, W, 4) uint8 colour image in ``color_format``.
        color_format: ``"rgb8"``, ``"bgr8"`` or ``"bgra8"`` (Azure Kinect).
        depth: (H, W) uint16 depth registered to the colour camera, in ``depth_scale`` units;
            0 = no return.
        depth_scale: metres per depth unit (Azure Kinect 0.001, D405 0.0001).
        intrinsics: (3, 3) OpenCV pinhole matrix of the colour camera at native resolution,
            pixels (pixel centres at integer + 0.5).
        timestamp: host clock when the frame arrived, seconds (the clock of the
            :class:`~agentic_env.real.real_env.Hardware` bundle).
    """

    color: np.ndarray
    color_format: str
    depth: np.ndarray
    depth_scale: float
    intrinsics: np.ndarray
    timestamp: float


@dataclass(frozen=True)
class GripperStatus:
    """State of the gripper servo.

    Attributes:
        width: present opening between the pads, metres.
        target: commanded width, metres.
        moving: whether the servo is moving.
        blocked: stopped short of the target by an object (force limit reached).
        fault: a latched servo error (needs ``clear_error``).
        speed: width speed limit, m/s.
        force: grip force limit, newtons.
    """

    width: float
    target: float
    moving: bool
    blocked: bool
    fault: bool
    speed: float
    force: float


class Connectable:
    """Context-manager lifecycle: ``with driver:`` connects and always disconnects."""

    def connect(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def disconnect(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.connect()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.disconnect()


class ArmDriver(Protocol):
    """A UR5e controller link."""

    def connect(self) -> None:
        """Open the link; raises :class:`ConnectionLostError` when the controller is absent."""
        ...

    def disconnect(self) -> None:
        """Stop motion and close the link (safe to call twice)."""
        ...

    def read_state(self) -> ArmState:
        """Latest state sample; raises :class:`ConnectionLostError` once the link is gone."""
        ...

    def servo_joint(self, q: np.ndarray, period: float, speed: float,
                    acceleration: float) -> None:
        """Stream joint target ``q`` (6,) rad for one control ``period`` (s) and block until
        the period ends; ``speed`` (rad/s) and ``acceleration`` (rad/s^2) cap the servo.
        Raises :class:`CommandRejectedError` when the controller refuses the target."""
        ...

    def move_joint(self, q: np.ndarray, speed: float, acceleration: float) -> None:
        """Blocking joint-space move to ``q`` (6,) rad at capped speed / acceleration."""
        ...

    def move_linear(self, pose: np.ndarray, speed: float, acceleration: float) -> None:
        """Blocking straight TCP move to a UR pose vector (6,) at ``speed`` (m/s) and
        ``acceleration`` (m/s^2)."""
        ...

    def stop(self, deceleration: float) -> None:
        """Decelerate the joints to rest at ``deceleration`` rad/s^2; returns at once."""
        ...


class CameraDriver(Protocol):
    """An RGB-D camera delivering frames registered to its colour camera."""

    def connect(self) -> None:
        """Start streaming."""
        ...

    def disconnect(self) -> None:
        """Stop streaming (safe to call twice)."""
        ...

    def capture(self, timeout: float) -> RawFrame:
        """The newest frame; raises :class:`FrameTimeoutError` after ``timeout`` s."""
        ...

    @property
    def distortion(self) -> np.ndarray:
        """The colour lens's distortion coefficients in OpenCV's order (k1, k2, p1, p2[, k3,
        ...]), as the device reports them; the real env undistorts both images with them."""
        ...


class GripperDriver(Protocol):
    """The fin-ray gripper's servo controller."""

    def connect(self) -> None:
        """Open the link and check the controller's identity and protocol version."""
        ...

    def disconnect(self) -> None:
        """Stop the servo and close the link (safe to call twice)."""
        ...

    def set_position(self, width: float) -> None:
        """Command the opening, metres (0-0.085); returns once acknowledged."""
        ...

    def read_position(self) -> float:
        """Present opening, metres."""
        ...

    def set_speed(self, speed: float) -> None:
        """Width speed limit, m/s."""
        ...

    def set_force(self, force: float) -> None:
        """Grip force limit, newtons."""
        ...

    def status(self) -> GripperStatus:
        """Full servo state."""
        ...

    def stop(self) -> None:
        """Hold the present width."""
        ...
