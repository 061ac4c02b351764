"""Configuration of the ``agentic_ur5e`` LeRobot robot (``--robot.type=agentic_ur5e``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lerobot.cameras import CameraConfig
from lerobot.robots import RobotConfig
from lerobot_camera_agentic import AgenticD405CameraConfig, AgenticKinectCameraConfig

from agentic_env.contract.features import CAMERAS
from agentic_env.errors import InvalidConfigError
from agentic_env.real.safety import SafetyConfig

_SAFETY = SafetyConfig()
#: Feature naming schemes (see :attr:`AgenticUR5eConfig.feature_names`).
FEATURE_NAMES = ("exporter", "lerobot")


def _default_cameras() -> dict[str, CameraConfig]:
    return {"shoulder": AgenticKinectCameraConfig(), "wrist": AgenticD405CameraConfig()}


@RobotConfig.register_subclass("agentic_ur5e")
@dataclass(kw_only=True)
class AgenticUR5eConfig(RobotConfig):
    """The UR5e + fin-ray gripper workcell, on hardware or on its digital twin.

    Attributes:
        twin: run on the digital twin (MuJoCo arm, gripper behind the servo emulator on a
            pseudo-terminal, rendered cameras) instead of the hardware.
        robot_host: UR controller IP address or host name (hardware).
        gripper_port: serial device of the gripper's controller, e.g. ``/dev/ttyACM0``
            (hardware).
        calibration_file: camera calibration JSON written by ``agentic-env calibrate``
            (hardware; the twin uses its exact camera poses).
        cameras: ``shoulder`` (``agentic_kinect``) and ``wrist`` (``agentic_d405``); their
            ``width`` x ``height`` is the recorded image size, pixels.
        control_hz: control rate, Hz (1-500): one ``send_action`` streams one period; record
            with ``--dataset.fps`` equal to it.
        max_joint_speed: safety cap on joint speed, rad/s (at most pi, the UR5e's limit).
        max_tcp_speed: safety cap on TCP speed between targets, m/s.
        max_step: largest joint change between consecutive targets, rad.
        twin_task: task laid out in the twin's simulated cell.
        twin_seed: layout seed of the twin's cell.
        feature_names: ``exporter`` (default): observation ``shoulder_pan`` ...
            ``gripper_width`` and action ``shoulder_pan.target`` ... ``gripper_width.target``,
            the dataset exporter's names; ``lerobot``: ``shoulder_pan.pos`` ...
            ``gripper_width.pos`` for both, LeRobot's convention, which ``lerobot-rollout``
            0.6.1 needs (it drops scalar features not ending in ``.pos`` or ``.vel``). Same
            order and units either way, so a policy trained on one runs with the other.
    """

    twin: bool = False
    robot_host: str = ""
    gripper_port: str = ""
    calibration_file: Path | None = None
    cameras: dict[str, CameraConfig] = field(default_factory=_default_cameras)
    control_hz: float = 20.0
    max_joint_speed: float = _SAFETY.max_joint_speed
    max_tcp_speed: float = _SAFETY.max_tcp_speed
    max_step: float = _SAFETY.max_step
    twin_task: str = "tabletop"
    twin_seed: int = 0
    feature_names: str = "exporter"

    def __post_init__(self) -> None:
        super().__post_init__()
        kinds = {"shoulder": AgenticKinectCameraConfig, "wrist": AgenticD405CameraConfig}
        if set(self.cameras) != set(CAMERAS):
            raise InvalidConfigError(f"agentic_ur5e cameras are {', '.join(CAMERAS)}; got "
                                     f"{sorted(self.cameras)}")
        for name, kind in kinds.items():
            camera = self.cameras[name]
            if not isinstance(camera, kind):
                raise InvalidConfigError(
                    f"agentic_ur5e camera {name!r} must be of type "
                    f"{kind.get_choice_name(kind)}; got {camera.type}")
            if camera.fps != 30:
                raise InvalidConfigError(f"agentic_ur5e streams both cameras at 30 fps; "
                                         f"{name} has fps={camera.fps}")
            if camera.use_depth:
                raise InvalidConfigError(
                    f"agentic_ur5e records RGB only (LeRobot would store depth as "
                    f"observation.images.{name}_depth, not the exporter's observation.depth."
                    f"{name}): set use_depth=false on camera {name!r}")
            if camera.twin and not self.twin:
                raise InvalidConfigError(f"camera {name!r} is a twin on a hardware robot: set "
                                         "robot.twin=true or the camera's twin=false")
        if self.feature_names not in FEATURE_NAMES:
            raise InvalidConfigError(f"feature_names={self.feature_names!r}; valid: "
                                     f"{', '.join(FEATURE_NAMES)}")
        if not 1.0 <= self.control_hz <= 500.0:
            raise InvalidConfigError(f"control_hz={self.control_hz} is outside 1..500 Hz")
        if not self.twin and not (self.robot_host and self.gripper_port):
            raise InvalidConfigError(
                "the hardware robot needs robot_host and gripper_port (--robot.robot_host=... "
                "--robot.gripper_port=..., and --robot.calibration_file=...); or run the "
                "digital twin with --robot.twin=true")

    def safety(self) -> SafetyConfig:
        """The safety layer's limits (the project's defaults with the caps above)."""
        return SafetyConfig(max_joint_speed=self.max_joint_speed,
                            max_tcp_speed=self.max_tcp_speed, max_step=self.max_step)
