"""The workcell's UR5e + fin-ray gripper as a LeRobot :class:`~lerobot.robots.Robot`.

:class:`AgenticUR5e` drives the project's real-hardware layer — a
:class:`~agentic_env.real.RealEnv` in ``joint_position`` mode over the hardware drivers
(:func:`~agentic_env.real.hardware.real_hardware`) or, with ``twin``, over the digital twin
(:func:`~agentic_env.real.twin.make_twin_env`) — so every action passes the project's safety
layer: :meth:`AgenticUR5e.send_action` clamps the target to the joint limits, rate-limits it
to the joint speed limit and ramps the gripper (:meth:`~agentic_env.real.robot.RealRobot.send`),
then the :class:`~agentic_env.real.safety.TargetGate` checks it (TCP in the safety box, step,
joint speed and acceleration, TCP speed); the watchdog polls the controller between commands.
A refused target or any anomaly latches a fault, stops the arm and raises
:class:`~agentic_env.real.safety.SafetyFaultError` from this and every later call until the
robot is reconnected, which ends a ``lerobot-record`` run: the episodes saved before are kept,
the interrupted one is dropped. Reconnecting reads the controller again and fails while it
still reports a stop (unlock a protective stop or release the e-stop on the pendant first).

Features (named as :mod:`agentic_env.datasets.lerobot_format` names them, so LeRobot's
``observation.state``, ``action`` and ``observation.images.<cam>`` equal the exporter's):

* observation: ``shoulder_pan`` ... ``wrist_3`` (rad), ``gripper_width`` (m), and the images
  ``shoulder`` and ``wrist`` (H, W, 3) uint8, fitted and undistorted as in the real env;
* action: ``shoulder_pan.target`` ... ``wrist_3.target`` (rad) and ``gripper_width.target``
  (m): the joint targets of the next control period (the exporter's ``action``).

With ``feature_names=lerobot`` both are named ``<joint>.pos`` / ``gripper_width.pos`` instead
(LeRobot's convention, which ``lerobot-rollout`` 0.6.1 requires); see :func:`feature_names`.
"""

from __future__ import annotations

import logging
from functools import cached_property
from typing import Any

import numpy as np
from lerobot.cameras.utils import make_cameras_from_configs
from lerobot.robots import Robot
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError
from lerobot_camera_agentic import AgenticCamera

from agentic_env.contract.features import CAMERAS
from agentic_env.contract.lowlevel import low_level_targets
from agentic_env.contract.workcell import SceneConfig
from agentic_env.datasets.lerobot_format import JOINT_NAMES
from agentic_env.errors import AgenticEnvError, InvalidActionError
from agentic_env.real.real_env import RealEnv
from lerobot_robot_agentic_ur5e.config_agentic_ur5e import AgenticUR5eConfig

logger = logging.getLogger(__name__)

#: Observation feature names of the proprioception (the exporter's ``observation.state``).
STATE_NAMES: tuple[str, ...] = (*JOINT_NAMES, "gripper_width")
#: Action feature names (the exporter's ``action``).
ACTION_NAMES: tuple[str, ...] = tuple(f"{name}.target" for name in STATE_NAMES)
#: Observation and action names in LeRobot's convention (``feature_names=lerobot``).
POS_NAMES: tuple[str, ...] = tuple(f"{name}.pos" for name in STATE_NAMES)


def feature_names(scheme: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(observation, action) scalar feature names of a naming ``scheme`` (``exporter`` or
    ``lerobot``), in the order of the exporter's ``observation.state`` and ``action``."""
    return (STATE_NAMES, ACTION_NAMES) if scheme == "exporter" else (POS_NAMES, POS_NAMES)


class CalibrationMissingError(AgenticEnvError, FileNotFoundError):
    """The hardware robot has no camera calibration file; the message says how to make one."""


class AgenticUR5e(Robot):
    """See the module docstring.

    Args:
        config: the robot's configuration.
    """

    config_class = AgenticUR5eConfig
    name = "agentic_ur5e"

    def __init__(self, config: AgenticUR5eConfig) -> None:
        super().__init__(config)
        self.config = config
        #: Scalar observation and action feature names (see :func:`feature_names`).
        self.state_names, self.action_names = feature_names(config.feature_names)
        #: The LeRobot cameras (they read through the env's drivers while connected).
        self.cameras: dict[str, AgenticCamera] = make_cameras_from_configs(config.cameras)
        #: The real env underneath while connected, else ``None``.
        self.env: RealEnv | None = None

    @cached_property
    def observation_features(self) -> dict[str, type | tuple[int, int, int]]:
        """Joint positions and gripper width (float) and the two images (H, W, 3)."""
        images = {name: (self.config.cameras[name].height, self.config.cameras[name].width, 3)
                  for name in CAMERAS}
        return {**dict.fromkeys(self.state_names, float), **images}

    @cached_property
    def action_features(self) -> dict[str, type]:
        """Joint targets (rad) and the gripper width target (m), all float."""
        return dict.fromkeys(self.action_names, float)

    @property
    def is_connected(self) -> bool:
        """Whether the arm, the gripper and both cameras are connected."""
        return self.env is not None and self.env.connected

    @property
    def is_calibrated(self) -> bool:
        """The twin always; the hardware when its camera calibration file exists (the
        arm's joint encoders are absolute and the gripper homes itself)."""
        file = self.config.calibration_file
        return self.config.twin or (file is not None and file.is_file())

    def calibrate(self) -> None:
        """The workcell's calibration is the cameras' hand-eye calibration, solved by the
        project's own tool (``agentic-env calibrate``); nothing to do once its file exists.

        Raises:
            CalibrationMissingError: on the hardware without its calibration file, naming the
                commands to run.
        """
        if not self.is_calibrated:
            raise self._missing_calibration()

    def _missing_calibration(self) -> CalibrationMissingError:
        host = self.config.robot_host or "HOST"
        file = self.config.calibration_file or "calibration.json"
        return CalibrationMissingError(
            f"no camera calibration at {file}: run `agentic-env calibrate --camera shoulder "
            f"--robot-host {host} --out {file}` and the same with --camera wrist, then pass "
            f"--robot.calibration_file={file}")

    def configure(self) -> None:
        """Nothing to configure: the controller's safety configuration lives on the pendant,
        the project's safety limits in the config."""

    def connect(self, calibrate: bool = True) -> None:
        """Connect the arm, the gripper and both cameras, and start the safety watchdog.
        Nothing moves.

        Args:
            calibrate: unused: the calibration is made by ``agentic-env calibrate`` (the
                error of an uncalibrated robot names the commands).

        Raises:
            DeviceAlreadyConnectedError: when connected already.
            CalibrationMissingError: on the hardware without a calibration file.
            DriverError: when a device does not answer (everything is disconnected again).
        """
        if self.is_connected:
            raise DeviceAlreadyConnectedError(f"{self} is already connected")
        if not self.is_calibrated:
            raise self._missing_calibration()
        env = self._make_env()
        for name, camera in self.cameras.items():
            camera.attach(env.hardware.cameras[name])
        try:
            env.connect()
        except BaseException:
            self._release(env)
            raise
        self.env = env
        logger.info("%s connected (%s)", self, "twin" if self.config.twin else
                    self.config.robot_host)

    def _make_env(self) -> RealEnv:
        config = self.config
        cams = config.cameras
        scene = SceneConfig(
            shoulder_camera=self.cameras["shoulder"].optics,
            wrist_camera=self.cameras["wrist"].optics)
        kwargs: dict[str, Any] = {"scene": scene, "control_hz": config.control_hz,
                                  "control_mode": "joint_position", "safety": config.safety(),
                                  "home_on_reset": False}
        if config.twin:
            from agentic_env.real.twin import make_twin_env

            env, _ = make_twin_env(config.twin_task, config.twin_seed, **kwargs)
            return env
        from agentic_env.real.calibration import Calibration
        from agentic_env.real.hardware import real_hardware

        hardware = real_hardware(config.robot_host, config.gripper_port,
                                 kinect_device=cams["shoulder"].device_id,
                                 realsense_serial=cams["wrist"].serial_number or None,
                                 safety=kwargs["safety"])
        return RealEnv(hardware, Calibration.load(config.calibration_file), **kwargs)

    def get_observation(self) -> dict[str, Any]:
        """Read the arm, the gripper and both cameras.

        Raises:
            DeviceNotConnectedError: when not connected.
            SafetyFaultError: on a fault (stale frame, controller anomaly...): latched, the
                arm stopped.
        """
        env = self._require_env()
        obs = env.observe()
        state = np.concatenate([obs["joint_positions"], obs["gripper_width"]])
        observation: dict[str, Any] = {name: float(v) for name, v in zip(self.state_names, state,
                                                                          strict=True)}
        for name in CAMERAS:
            observation[name] = obs[f"{name}_rgb"]
        return observation

    def send_action(self, action: dict[str, Any]) -> dict[str, float]:
        """Stream one control period towards the action's joint and gripper targets through
        the safety layer (see the module docstring).

        Returns:
            The targets actually sent: clamped to the joint limits, rate-limited to the joint
            speed limit, the gripper reference ramped at the servo's speed.

        Raises:
            DeviceNotConnectedError: when not connected.
            InvalidActionError: a missing key or a non-finite value (nothing moves).
            SafetyFaultError: when the safety layer refuses the target or anything faults
                (latched, the arm stopped; reconnect after resolving it).
        """
        env = self._require_env()
        names = self.action_names
        missing = [name for name in names if name not in action]
        if missing:
            raise InvalidActionError(f"agentic_ur5e actions need {', '.join(names)}; "
                                     f"missing {', '.join(missing)}")
        vector = np.array([float(action[name]) for name in names])
        joints, width, _ = low_level_targets("joint_position", vector, np.eye(4),
                                             env.kinematics, env.robot.joint_reference(),
                                             env.control_dt, env.ee_delta_scale)
        env.robot.send(joints, width)
        sent = [*env.robot.joint_reference(), env.robot.gripper_reference()]
        return {name: float(v) for name, v in zip(names, sent, strict=True)}

    def disconnect(self) -> None:
        """Stop motion, stop the watchdog and disconnect every device (the twin's cell is
        closed).

        Raises:
            DeviceNotConnectedError: when not connected.
        """
        if self.env is None:
            raise DeviceNotConnectedError(f"{self} is not connected; call connect() first")
        env, self.env = self.env, None
        self._release(env)
        logger.info("%s disconnected", self)

    def _release(self, env: RealEnv) -> None:
        try:
            env.close()
        finally:
            for camera in self.cameras.values():
                camera.detach()

    def _require_env(self) -> RealEnv:
        if self.env is None or not self.env.connected:
            raise DeviceNotConnectedError(f"{self} is not connected; call connect() first")
        return self.env
