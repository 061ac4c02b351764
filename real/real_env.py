"""The real-hardware Gymnasium env: same spaces, same primitives, same reporting as the sim.

:class:`RealEnv` runs the shared code on real drivers (or their MuJoCo twins):

* the spaces come from :mod:`agentic_env.contract.spaces` for the same :class:`SceneConfig`,
  :class:`PrimitiveConfig` and control mode as :class:`~agentic_env.envs.sim_env.SimEnv`;
* primitives run in the shared :class:`~agentic_env.primitives.executor.PrimitiveExecutor` over a
  :class:`~agentic_env.real.robot.RealRobot`, reported in ``info["primitive"]`` as in sim;
  low-level modes decode actions with :func:`agentic_env.contract.lowlevel.low_level_targets`;
* observations are assembled by :func:`agentic_env.contract.observation.assemble_observation` from
  device frames fitted to the configured resolution (:mod:`agentic_env.real.frames`),
  undistorted with the lens coefficients each camera driver reports (``distortion``; colour
  bilinear, depth nearest so 0 stays no return), exactly as the simulator's realistic
  cameras undistort theirs, and camera poses from the
  :class:`~agentic_env.real.calibration.Calibration`.

Safety: every target passes the :class:`~agentic_env.real.safety.TargetGate`; the control
path and a :class:`~agentic_env.real.safety.Watchdog` thread watch the controller. A fault
stops the arm, is latched, and the step returns ``terminated=True`` with
``info["safety_fault"]``; later steps do nothing and report it again. Faults are cleared
only by :meth:`RealEnv.clear_fault`, after the operator has resolved them (a protective stop
must first be unlocked on the pendant). The e-stop is the exception that does not end the
episode: while the :class:`~agentic_env.real.estop.EStopChannel` (the controller's safety
status plus the operator console) reports it pressed, every motion is refused with reason
``estop`` and ``info["estop"]["active"]``; :meth:`RealEnv.release_estop` is the operator's
release. Stale or missing camera frames are faults too: the
observation then carries zero images. With ``confirm`` set, the operator approves every
primitive first (``--confirm-each-step``). ``close()`` (and leaving a ``with`` block, on any
exit path) stops motion and disconnects every driver.

The env has no privileged state: the reward is 0 and success is judged by the operator
(see the trial command's rubric).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from types import TracebackType
from typing import Any, Self

import gymnasium as gym
import numpy as np

from agentic_env.contract.actions import home, vector_to_pose
from agentic_env.contract.lowlevel import low_level_targets
from agentic_env.contract.observation import CameraView, assemble_observation
from agentic_env.contract.spaces import (
    EEDeltaScale,
    action_space,
    check_env_options,
    episode_step_limit,
    observation_space,
)
from agentic_env.contract.trial import TrialSpec
from agentic_env.contract.workcell import SceneConfig
from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.geometry.camera import CameraConfig
from agentic_env.primitives.executor import PrimitiveExecutor
from agentic_env.primitives.types import (
    FailureReason,
    PrimitiveCommand,
    PrimitiveConfig,
    PrimitiveOutcome,
    parse_primitive_action,
)
from agentic_env.real.calibration import Calibration, FlangeKinematics
from agentic_env.real.drivers.base import DriverError, FrameTimeoutError
from agentic_env.real.estop import EStopChannel
from agentic_env.real.frames import camera_frame, check_fresh
from agentic_env.real.hardware import Hardware
from agentic_env.real.robot import RealRobot
from agentic_env.real.safety import (
    FaultKind,
    FaultLatch,
    SafetyConfig,
    SafetyFault,
    SafetyFaultError,
    Watchdog,
    state_fault,
)
from agentic_env.robot.constants import JOINT_SPEED_LIMIT
from agentic_env.robot.kinematics import ArmKinematics
from agentic_env.visualize import resize_nearest

logger = logging.getLogger(__name__)

#: ``confirm(description) -> bool``: the operator's answer to "run this primitive?".
Confirm = Callable[[str], bool]


class RealEnv(gym.Env):
    """The real workcell behind the shared observation/action contract.

    Args:
        hardware: the drivers (real or twin), not yet connected.
        calibration: camera poses (shoulder camera -> base, wrist camera -> flange).
        control_mode: one of ``primitive``, ``ee_delta``, ``joint_position``.
        render_mode: ``None`` or ``"rgb_array"`` (the last observation's camera images).
        scene: camera resolutions and optics of the observation (as in the sim).
        control_hz: control rate, Hz.
        primitives: primitive tunables (as in the sim).
        ee_delta_scale: scaling of the ``ee_delta`` action.
        safety: limits of the safety layer.
        max_episode_steps: truncation bound (primitives or control periods).
        confirm: asked before every primitive; ``False`` skips it and ends the episode.
        home_on_reset: move home (and open the gripper) in ``reset``.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(
        self,
        hardware: Hardware,
        calibration: Calibration,
        control_mode: str = "primitive",
        render_mode: str | None = None,
        scene: SceneConfig | None = None,
        control_hz: float = 20.0,
        primitives: PrimitiveConfig | None = None,
        ee_delta_scale: EEDeltaScale | None = None,
        safety: SafetyConfig | None = None,
        max_episode_steps: int | None = None,
        confirm: Confirm | None = None,
        home_on_reset: bool = True,
    ) -> None:
        check_env_options(control_mode, render_mode, control_hz)
        self.hardware = hardware
        self.calibration = calibration
        self.control_mode = control_mode
        self.render_mode = render_mode
        self.scene_config = scene or SceneConfig()
        self.primitive_config = primitives or PrimitiveConfig()
        self.ee_delta_scale = ee_delta_scale or EEDeltaScale()
        self.safety = safety or SafetyConfig()
        self.max_episode_steps = episode_step_limit(control_mode, max_episode_steps)
        self.confirm = confirm
        self.home_on_reset = home_on_reset
        self.control_dt = 1.0 / control_hz
        self.metadata = {**self.metadata, "render_fps": int(round(control_hz))}
        self.cameras: tuple[CameraConfig, ...] = (self.scene_config.shoulder_camera,
                                                  self.scene_config.wrist_camera)
        missing = {cam.name for cam in self.cameras} - set(hardware.cameras)
        if missing:
            raise InvalidConfigError(f"no camera driver for {sorted(missing)}; the hardware "
                                     f"has {sorted(hardware.cameras)}")
        _check_motion_within_safety(self.primitive_config, self.safety)
        self.observation_space = observation_space(self.cameras)
        self.action_space = action_space(control_mode, self.primitive_config.workspace)
        self.kinematics = ArmKinematics()
        self._flange = FlangeKinematics(self.kinematics)
        self.latch = FaultLatch()
        self.robot = RealRobot(hardware.arm, hardware.gripper, self.kinematics, self.control_dt,
                               self.safety, self.latch)
        self.executor = PrimitiveExecutor(self.robot, self.primitive_config)
        self._watchdog = Watchdog(hardware.arm, self.latch, self.safety)
        #: The e-stop channel: while pressed every motion is refused with reason ``estop``.
        self.estop = EStopChannel(hardware.arm)
        self._connected: list[object] = []
        self._steps = 0
        self._tcp_target = np.eye(4)
        self._last_obs: dict[str, np.ndarray] | None = None
        self._instruction = ""
        self._instruction_category = ""
        #: The trial of the current episode, when reset with one.
        self.trial: TrialSpec | None = None

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """Whether every driver is connected."""
        return len(self._connected) == 2 + len(self.hardware.cameras)

    def connect(self) -> None:
        """Connect the arm, the gripper and the cameras, and start the watchdog.

        On a failure everything connected so far is disconnected again and the error raised.
        """
        if self.connected:
            return
        hw = self.hardware
        try:
            for driver in (hw.arm, hw.gripper, *hw.cameras.values()):
                driver.connect()
                self._connected.append(driver)
            self.robot.sync()
        except BaseException:
            self.disconnect()
            raise
        self._watchdog.start()

    def disconnect(self) -> None:
        """Stop the watchdog and motion, then disconnect every driver (errors are logged)."""
        self._watchdog.stop()
        if self._connected:
            self.robot.stop()
        while self._connected:
            driver = self._connected.pop()
            try:
                driver.disconnect()
            except (DriverError, OSError) as error:
                logger.error("disconnecting %s failed: %s", type(driver).__name__, error)
        for closer in self.hardware.closers:
            closer()
        self.hardware.closers.clear()

    def close(self) -> None:
        """Stop motion and disconnect (safe to call twice)."""
        self.disconnect()

    def __enter__(self) -> Self:
        self.connect()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def safety_fault(self) -> SafetyFault | None:
        """The latched fault, or ``None``."""
        return self.latch.fault

    def clear_fault(self) -> None:
        """Clear the latched fault after the operator resolved it.

        Raises:
            SafetyFaultError: if the controller still reports a stop (unlock a protective
                stop or release the e-stop on the pendant first) or the link is down.
        """
        try:
            state = self.hardware.arm.read_state()
        except DriverError as error:
            raise SafetyFaultError(SafetyFault(FaultKind.CONNECTION_LOST, str(error))) from None
        fault = state_fault(state)
        if fault is not None:
            raise SafetyFaultError(replace(
                fault, message=f"not cleared, the controller still reports it: {fault.message}"))
        self.latch.clear()
        self.robot.sync()

    def release_estop(self) -> None:
        """The operator releases the e-stop: the console lets go and, once the controller
        reports no emergency stop any more, a latched emergency-stop fault is cleared.

        Raises:
            SafetyFaultError: if the controller still reports a stop (see :meth:`clear_fault`).
        """
        self.estop.release()
        fault = self.latch.fault
        if fault is not None and fault.kind == FaultKind.EMERGENCY_STOP:
            self.clear_fault()

    def wait(self, seconds: float) -> dict[str, Any]:
        """Hold still for ``seconds`` of wall time (nothing is sent); the ``info`` after."""
        time.sleep(seconds)
        return self._info(None)

    # -- gymnasium API ----------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode: connect if needed, move home, open the gripper, observe.

        Options:
            ``trial``: the :class:`TrialSpec` (or its dict) laid out on the table; its
            instruction becomes the episode's. ``instruction``: the instruction text
            otherwise.

        Raises:
            SafetyFaultError: if a fault is latched (see :meth:`clear_fault`) or one occurs.
            InvalidConfigError: on unknown options.
        """
        options = dict(options or {})
        trial = options.pop("trial", None)
        instruction = options.pop("instruction", None)
        if options:
            raise InvalidConfigError(f"unknown reset options {sorted(options)}; valid: trial, "
                                     "instruction")
        super().reset(seed=seed)
        self.trial = (None if trial is None else trial if isinstance(trial, TrialSpec)
                      else TrialSpec.from_dict(trial))
        self._instruction = self.trial.instruction if self.trial else (instruction or "")
        self._instruction_category = self.trial.instruction_category if self.trial else ""
        self.connect()
        fault = self.latch.fault
        if fault is not None:
            raise SafetyFaultError(replace(fault, message=f"{fault.message} (the fault is "
                                           "latched: resolve it, then call clear_fault())"))
        self.robot.sync()
        if self.home_on_reset:
            outcome = self.executor.execute(home())
            if outcome.ok:
                outcome = self.executor.execute({"primitive": "open_gripper",
                                                 "pose": np.array([0, 0, 0, 1, 0, 0, 0.0]),
                                                 "width": 0.0, "distance": 0.0})
            if not outcome.ok:
                raise AgenticEnvError(f"reset could not move home: {outcome.message}")
        self._steps = 0
        self._tcp_target = self.kinematics.forward(self.robot.joint_reference())
        observation = self.observe()
        info = self._info(None)
        info["trial"] = None if self.trial is None else self.trial.to_dict()
        return observation, info

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool,
                                         dict[str, Any]]:
        """Apply one action on the robot (see the module docstring for faults).

        Raises:
            InvalidActionError: malformed actions, before anything moves.
        """
        extra: dict[str, Any] = {"operator_declined": False}
        command = parse_primitive_action(action) if self.control_mode == "primitive" else None
        name = command.name if command is not None else ""
        if self.estop.pressed():  # nothing moves; the episode goes on after the release
            if name:
                extra["primitive"] = PrimitiveOutcome(
                    name, False, FailureReason.ESTOP.value,
                    "refused: the e-stop is pressed").as_info()
            self._steps += 1
            try:  # a latched e-stop fault: the arm is braked, nothing is read or sent
                observation = (self._faulted_observation() if self.latch.fault is not None
                               else self.observe())
            except SafetyFaultError:
                observation = self._faulted_observation()
            return observation, 0.0, False, False, self._info(extra)

        if self.latch.fault is not None:  # nothing moves while a fault is latched
            if name:
                extra["primitive"] = PrimitiveOutcome(
                    name, False, FailureReason.SAFETY_FAULT.value,
                    "not run: a safety fault is latched").as_info()
            return self._faulted_observation(), 0.0, True, False, self._info(extra)
        if self.control_mode == "primitive":
            assert command is not None
            if self.confirm is not None and not self.confirm(describe_action(command)):
                outcome = PrimitiveOutcome(name, False, FailureReason.OPERATOR_DECLINED.value,
                                           "the operator declined this primitive")
                extra["operator_declined"] = True
            else:
                start = self.robot.time
                try:
                    outcome = self.executor.execute(command)
                except SafetyFaultError as error:
                    outcome = PrimitiveOutcome(name, False, FailureReason.SAFETY_FAULT.value,
                                               str(error), self.robot.time - start)
            extra["primitive"] = outcome.as_info()
            self._tcp_target = self.kinematics.forward(self.robot.joint_reference())
        else:
            joint_target, width, self._tcp_target = low_level_targets(
                self.control_mode, action, self._tcp_target, self.kinematics,
                self.robot.joint_reference(), self.control_dt, self.ee_delta_scale)
            with contextlib.suppress(SafetyFaultError):  # latched; reported below
                self.robot.send(joint_target, width)
        self._steps += 1
        try:
            observation = self.observe()
        except SafetyFaultError:
            observation = self._faulted_observation()
        terminated = self.latch.fault is not None
        truncated = not terminated and (extra["operator_declined"]
                                        or self._steps >= self.max_episode_steps)
        return observation, 0.0, terminated, truncated, self._info(extra)

    def observe(self) -> dict[str, np.ndarray]:
        """Read the arm, the gripper and both cameras and assemble the observation.

        Raises:
            SafetyFaultError: on a fault (stale or missing frame, arm or gripper anomaly);
                it is latched and the arm stopped.
        """
        self.robot.refresh()
        q = self.robot.joint_positions()
        views = {}
        for cam in self.cameras:
            rgb, depth, intrinsics = self._frame(cam)
            views[cam.name] = CameraView(rgb, depth, intrinsics, self._extrinsics(cam.name, q))
        self._last_obs = assemble_observation(views, q, self.kinematics.forward(q),
                                              self.robot.gripper_width())
        return self._last_obs

    def _frame(self, cam: CameraConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        driver = self.hardware.cameras[cam.name]
        try:
            raw = driver.capture(self.safety.frame_timeout)
            check_fresh(raw, cam.name, self.hardware.clock(), self.safety.max_frame_age)
        except FrameTimeoutError as error:
            self.robot.fault(FaultKind.STALE_FRAME, f"{error}: check the {cam.name} camera")
        except SafetyFaultError as error:
            self.robot.trip(error.fault)
        except DriverError as error:
            self.robot.fault(FaultKind.CONNECTION_LOST, f"{cam.name} camera: {error}")
        return camera_frame(raw, cam, driver.distortion)

    def _extrinsics(self, camera: str, q: np.ndarray) -> np.ndarray:
        if camera == "shoulder":
            return self.calibration.shoulder_to_base
        return self._flange.pose(q) @ self.calibration.wrist_to_flange

    def _faulted_observation(self) -> dict[str, np.ndarray]:
        """Zero images (no valid frame) with the last known proprioception."""
        views = {}
        for cam in self.cameras:
            intrinsics = (self._last_obs[f"{cam.name}_intrinsics"] if self._last_obs
                          else cam.intrinsics)
            extrinsics = (self._last_obs[f"{cam.name}_extrinsics"] if self._last_obs
                          else np.eye(4))
            views[cam.name] = CameraView(np.zeros((cam.height, cam.width, 3), np.uint8),
                                         np.zeros((cam.height, cam.width), np.float32),
                                         intrinsics, extrinsics)
        state = self.robot.state
        q = state.joint_positions if state is not None else np.zeros(6)
        return assemble_observation(views, q, self.kinematics.forward(q),
                                    self.robot.gripper_width())

    def _info(self, extra: dict[str, Any] | None) -> dict[str, Any]:
        fault = self.latch.fault
        return {
            "instruction": self._instruction,
            "instruction_category": self._instruction_category,
            "safety_fault": None if fault is None else fault.as_info(),
            "estop": {"active": self.estop.pressed()},
            "robot_time": self.robot.time,
            **(extra or {}),
        }

    def render(self) -> np.ndarray | None:
        """The last observation's shoulder and wrist images side by side (360 px high)."""
        if self.render_mode != "rgb_array" or self._last_obs is None:
            return None
        side = [resize_nearest(self._last_obs[f"{cam.name}_rgb"], 640, 360)
                for cam in self.cameras]
        return np.concatenate(side, axis=1)


def _check_motion_within_safety(primitives: PrimitiveConfig, safety: SafetyConfig) -> None:
    """Primitives must plan within the safety caps, or every motion would fault."""
    motion = primitives.motion
    planned_joint_speed = motion.joint_speed_fraction * JOINT_SPEED_LIMIT
    if planned_joint_speed > safety.max_joint_speed or motion.max_linear_speed > (
            safety.max_tcp_speed):
        raise InvalidConfigError(
            f"primitives plan up to {planned_joint_speed:.2f} rad/s and "
            f"{motion.max_linear_speed:.2f} m/s but the safety caps are "
            f"{safety.max_joint_speed:.2f} rad/s and {safety.max_tcp_speed:.2f} m/s: lower "
            "PrimitiveConfig.motion or raise SafetyConfig")


def describe_action(action: dict | PrimitiveCommand) -> str:
    """One line describing a primitive action (or its parsed command) for the operator."""
    command = parse_primitive_action(action)
    name, pose, width, distance = command.name, command.pose, command.width, command.distance
    if name in ("home", "open_gripper", "close_gripper"):
        return name
    try:
        position = vector_to_pose(pose)[:3, 3]
    except AgenticEnvError:
        return f"{name} with an invalid pose {np.round(pose, 3).tolist()}"
    text = f"{name} at ({', '.join(f'{v * 100:.1f}' for v in position)}) cm"
    if name == "pick":
        text += f", width {width * 1000:.0f} mm"
    if distance:
        text += f", distance {distance * 100:.1f} cm"
    return text


def console_confirm(description: str) -> bool:
    """Ask the operator on the terminal; only ``y`` / ``yes`` runs the primitive."""
    answer = input(f"next primitive: {description}. Run it? [y/N] ")
    return answer.strip().lower() in ("y", "yes")
