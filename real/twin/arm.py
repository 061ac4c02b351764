"""Twin of the UR5e controller: the :class:`~agentic_env.real.drivers.base.ArmDriver`
interface over the MuJoCo arm of a :class:`~agentic_env.real.twin.world.TwinWorld`.

It behaves like the controller where the env can tell: ``servo_joint`` tracks one target
per period, blocking moves follow planned paths at the requested speed, ``stop`` brakes to
rest, a robot contact (the sim's unexpected contact) trips a protective stop, which freezes
the arm until an operator unlocks it, and a dropped link
raises :class:`~agentic_env.real.drivers.base.ConnectionLostError`. Fault injection:
:meth:`TwinArm.protective_stop_after`, :meth:`TwinArm.emergency_stop`,
:meth:`TwinArm.drop_connection_after` and :meth:`TwinArm.reject_next_command`.
"""

from __future__ import annotations

import numpy as np

from agentic_env.errors import MotionPlanningError
from agentic_env.geometry.rotations import exp_rotation, log_rotation
from agentic_env.real.drivers.base import (
    ArmState,
    CommandRejectedError,
    Connectable,
    ConnectionLostError,
    SafetyBits,
)
from agentic_env.real.twin.world import TwinWorld
from agentic_env.robot.constants import JOINT_SPEED_LIMIT
from agentic_env.robot.kinematics import ArmKinematics
from agentic_env.robot.motion import (
    MotionLimits,
    plan_cartesian_path,
    plan_joint_path,
    time_parameterize,
)

#: Joint speed below which a braking arm counts as at rest, rad/s.
_REST_SPEED = 0.005
#: Longest braking time of a stop, seconds.
_MAX_BRAKING = 1.0


def pose_vector(pose: np.ndarray) -> np.ndarray:
    """UR pose vector (x, y, z, rx, ry, rz) of a 4x4 pose."""
    return np.concatenate([pose[:3, 3], log_rotation(pose[:3, :3])])


def pose_matrix(vector: np.ndarray) -> np.ndarray:
    """4x4 pose of a UR pose vector."""
    pose = np.eye(4)
    pose[:3, :3] = exp_rotation(np.asarray(vector[3:6], dtype=float))
    pose[:3, 3] = vector[:3]
    return pose


class TwinArm(Connectable):
    """The arm driver of the twin.

    Args:
        world: the simulated cell.
        kinematics: TCP kinematics (for the reported TCP pose and blocking moves).
    """

    def __init__(self, world: TwinWorld, kinematics: ArmKinematics) -> None:
        self.world = world
        self.kinematics = kinematics
        self.control_dt = world.env.robot.control_dt
        self._connected = False
        self._bits = SafetyBits.NORMAL_MODE
        self._program_running = False
        self._protective_stop_in: int | None = None
        self._drop_in: int | None = None
        self._reject: str | None = None
        self._hold: np.ndarray | None = None
        #: Motion commands received (servo periods and blocking moves).
        self.commands = 0

    # -- lifecycle --------------------------------------------------------------------------

    def connect(self) -> None:
        """Connect and start the (virtual) control script."""
        with self.world.lock:
            self._connected = True
            self._program_running = True

    def disconnect(self) -> None:
        """Brake to rest and close the link."""
        with self.world.lock:
            if self._connected:
                self._brake()
            self._connected = False
            self._program_running = False

    # -- fault injection --------------------------------------------------------------------

    def protective_stop_after(self, periods: int) -> None:
        """Trip a protective stop (as on a collision) after ``periods`` more servo periods."""
        with self.world.lock:
            self._protective_stop_in = periods

    def emergency_stop(self) -> None:
        """Press the e-stop now: the arm brakes and the program stops."""
        with self.world.lock:
            self._bits = SafetyBits.EMERGENCY_STOPPED | SafetyBits.ROBOT_EMERGENCY_STOPPED
            self._program_running = False
            self._brake()

    def drop_connection_after(self, periods: int) -> None:
        """Lose the link after ``periods`` more servo periods (the arm then brakes)."""
        with self.world.lock:
            self._drop_in = periods

    def reject_next_command(self, reason: str = "target pose unreachable") -> None:
        """Make the controller refuse the next motion command."""
        with self.world.lock:
            self._reject = reason

    def release_emergency_stop(self) -> None:
        """Release the e-stop and restart the arm, as an operator does at the cell."""
        self.unlock_protective_stop()

    def unlock_protective_stop(self) -> None:

        """What an operator does on the pendant after inspecting the cell."""
        with self.world.lock:
            self._bits = SafetyBits.NORMAL_MODE
            self._program_running = True
            self._hold = None

    # -- driver interface -------------------------------------------------------------------

    def read_state(self) -> ArmState:
        """State of the simulated arm as the controller reports it."""
        with self.world.lock:
            self._require_link()
            robot = self.world.env.robot
            q = robot.joint_positions()
            return ArmState(
                timestamp=self.world.time, joint_positions=q,
                joint_velocities=robot.joint_velocities(),
                tcp_pose=pose_vector(self.kinematics.forward(q)),
                safety_bits=self._bits, program_running=self._program_running, connected=True)

    def servo_joint(self, q: np.ndarray, period: float, speed: float,
                    acceleration: float) -> None:
        """Track ``q`` for one control period (the world's period)."""
        with self.world.lock:
            self._require_link()
            self._count_down()
            self._take_rejection()
            self._period(np.asarray(q, dtype=float))

    def move_joint(self, q: np.ndarray, speed: float, acceleration: float) -> None:
        """Blocking joint move at ``speed`` rad/s (acceleration is the planner's)."""
        with self.world.lock:
            self._require_link()
            self._take_rejection()
            start = self.world.env.robot.joint_positions()
            limits = MotionLimits(joint_speed_fraction=min(1.0, speed / JOINT_SPEED_LIMIT))
            try:
                path = plan_joint_path(self.kinematics, start, np.asarray(q, float), limits)
            except MotionPlanningError as error:
                raise CommandRejectedError(f"moveJ refused: {error}") from None
            self._follow(time_parameterize(path, self.control_dt, limits))

    def move_linear(self, pose: np.ndarray, speed: float, acceleration: float) -> None:
        """Blocking straight TCP move at ``speed`` m/s."""
        with self.world.lock:
            self._require_link()
            self._take_rejection()
            start = self.world.env.robot.joint_positions()
            limits = MotionLimits(max_linear_speed=speed)
            try:
                path = plan_cartesian_path(self.kinematics, start, pose_matrix(pose), limits)
            except MotionPlanningError as error:
                raise CommandRejectedError(f"moveL refused: {error}") from None
            self._follow(time_parameterize(path, self.control_dt, limits))

    def stop(self, deceleration: float) -> None:
        """Brake to rest (the twin's clock advances while it brakes)."""
        with self.world.lock:
            if self._connected:
                self._brake()

    # -- internals --------------------------------------------------------------------------

    def _require_link(self) -> None:
        if not self._connected:
            raise ConnectionLostError("the twin UR5e link is down")

    def _count_down(self) -> None:
        if self._drop_in is not None:
            self._drop_in -= 1
            if self._drop_in < 0:
                self._drop_in = None
                self._brake()  # the controller stops when its client goes away
                self._connected = False
                raise ConnectionLostError("the twin UR5e link dropped (injected)")
        if self._protective_stop_in is not None:
            self._protective_stop_in -= 1
            if self._protective_stop_in < 0:
                self._protective_stop_in = None
                self._bits = SafetyBits.PROTECTIVE_STOPPED | SafetyBits.STOPPED_DUE_TO_SAFETY
                self._brake()

    def _take_rejection(self) -> None:
        if self._reject is not None:
            reason, self._reject = self._reject, None
            raise CommandRejectedError(f"the controller refused the command: {reason}")

    def _period(self, target: np.ndarray) -> None:
        """One control period; a stopped controller holds where it braked instead. A robot
        contact with anything (the sim's unexpected contact) trips a protective stop, as the
        controller's collision detection does."""
        self.commands += 1
        stopped = bool(self._bits & ~SafetyBits.NORMAL_MODE) or not self._program_running
        self.world.step(self._hold if stopped and self._hold is not None else target)
        if not stopped and self.world.env.robot.unexpected_contact() is not None:
            self._bits = SafetyBits.PROTECTIVE_STOPPED | SafetyBits.STOPPED_DUE_TO_SAFETY
            self._brake()

    def _follow(self, targets: np.ndarray) -> None:
        for target in targets:
            self._period(target)

    def _brake(self) -> None:
        robot = self.world.env.robot
        self._hold = robot.joint_positions()
        for _ in range(int(np.ceil(_MAX_BRAKING / self.control_dt))):
            self.world.step(self._hold)
            if np.max(np.abs(robot.joint_velocities())) < _REST_SPEED:
                break
        self._hold = robot.joint_positions()
