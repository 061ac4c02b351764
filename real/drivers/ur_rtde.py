"""UR5e arm driver over RTDE (the ``ur-rtde`` package, imported lazily on ``connect``).

Streams joint targets with ``servoJ`` at the env's control period (one target per period,
``initPeriod`` / ``waitPeriod`` pacing), runs blocking ``moveJ`` / ``moveL`` with the given
speed and acceleration caps, stops asynchronously (``servoStop`` / ``stopJ``) and reads the
actual joints, TCP pose, safety status bits and program state from the receive interface.
Calls are serialised by a lock so the safety watchdog can read and stop from its thread.
"""

from __future__ import annotations

import threading

import numpy as np

from agentic_env.real.drivers.base import (
    ArmState,
    CommandRejectedError,
    Connectable,
    ConnectionLostError,
    SafetyBits,
    require,
)

_INSTALL = "install the 'real' extra: pip install 'agentic-env[real]'"
#: servoJ look-ahead time (s) and proportional gain: ur-rtde's documented defaults.
SERVO_LOOKAHEAD = 0.1
SERVO_GAIN = 300


class URRtdeArm(Connectable):
    """:class:`~agentic_env.real.drivers.base.ArmDriver` for a UR e-Series controller.

    Args:
        host: controller IP address or host name.
        frequency: RTDE update rate, Hz (500 for e-Series).
    """

    def __init__(self, host: str, frequency: float = 500.0) -> None:
        self.host = host
        self.frequency = frequency
        self._control = None
        self._receive = None
        self._lock = threading.RLock()
        self._servoing = False

    def connect(self) -> None:
        """Open the control and receive interfaces (uploads the RTDE control script).

        Raises:
            MissingDriverError: without ur-rtde.
            ConnectionLostError: if the controller does not answer.
        """
        rtde_control = require("rtde_control", "the UR5e driver", _INSTALL)
        rtde_receive = require("rtde_receive", "the UR5e driver", _INSTALL)
        try:
            self._receive = rtde_receive.RTDEReceiveInterface(self.host, self.frequency)
            self._control = rtde_control.RTDEControlInterface(self.host, self.frequency)
        except RuntimeError as error:
            raise ConnectionLostError(
                f"cannot reach the UR controller at {self.host}: {error}; check the network and "
                "that the robot is in remote control mode"
            ) from None

    def disconnect(self) -> None:
        """Stop motion, stop the control script and close both interfaces."""
        with self._lock:
            if self._control is not None:
                try:
                    self.stop(2.0)
                    self._control.stopScript()
                finally:
                    self._control.disconnect()
                    self._control = None
            if self._receive is not None:
                self._receive.disconnect()
                self._receive = None

    def _interfaces(self) -> tuple[object, object]:
        if self._control is None or self._receive is None:
            raise ConnectionLostError("the UR5e is not connected; call connect() first")
        if not self._receive.isConnected() or not self._control.isConnected():
            raise ConnectionLostError(f"the RTDE link to {self.host} dropped")
        return self._control, self._receive

    def read_state(self) -> ArmState:
        """Latest RTDE state sample."""
        with self._lock:
            control, receive = self._interfaces()
            return ArmState(
                timestamp=float(receive.getTimestamp()),
                joint_positions=np.array(receive.getActualQ()),
                joint_velocities=np.array(receive.getActualQd()),
                tcp_pose=np.array(receive.getActualTCPPose()),
                safety_bits=SafetyBits(int(receive.getSafetyStatusBits())),
                program_running=bool(control.isProgramRunning()),
                connected=True,
            )

    def servo_joint(self, q: np.ndarray, period: float, speed: float,
                    acceleration: float) -> None:
        """One ``servoJ`` target, paced to ``period`` seconds."""
        with self._lock:
            control, _ = self._interfaces()
            start = control.initPeriod()
            accepted = control.servoJ([float(v) for v in q], speed, acceleration, period,
                                      SERVO_LOOKAHEAD, SERVO_GAIN)
            self._servoing = True
            control.waitPeriod(start)
        if not accepted:
            raise CommandRejectedError(f"the controller refused servoJ to {np.round(q, 3)}")

    def move_joint(self, q: np.ndarray, speed: float, acceleration: float) -> None:
        """Blocking ``moveJ``."""
        with self._lock:
            control, _ = self._interfaces()
            self._end_servo(control, acceleration)
            if not control.moveJ([float(v) for v in q], speed, acceleration, False):
                raise CommandRejectedError(f"the controller refused moveJ to {np.round(q, 3)}")

    def move_linear(self, pose: np.ndarray, speed: float, acceleration: float) -> None:
        """Blocking ``moveL`` to a UR pose vector."""
        with self._lock:
            control, _ = self._interfaces()
            self._end_servo(control, acceleration)
            if not control.moveL([float(v) for v in pose], speed, acceleration, False):
                raise CommandRejectedError(
                    f"the controller refused moveL to {np.round(pose, 3)} (unreachable?)")

    def stop(self, deceleration: float) -> None:
        """Decelerate to rest (asynchronous ``stopJ``; ends servoing first)."""
        with self._lock:
            if self._control is None:
                return
            self._end_servo(self._control, deceleration)
            self._control.stopJ(deceleration, True)

    def _end_servo(self, control: object, deceleration: float) -> None:
        if self._servoing:
            control.servoStop(deceleration)
            self._servoing = False
