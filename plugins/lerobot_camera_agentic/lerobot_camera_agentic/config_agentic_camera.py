"""Configurations of the workcell's cameras as LeRobot camera types.

``--robot.cameras='{shoulder: {type: agentic_kinect, width: 128, height: 72, fps: 30}}'``
selects :class:`AgenticKinectCameraConfig`; ``type: agentic_d405`` selects
:class:`AgenticD405CameraConfig`. ``width`` x ``height`` is the delivered image (pixels): the
device's native frame is cropped centrally to that aspect ratio, resized and undistorted
exactly as :class:`agentic_env.real.RealEnv` does it. ``fps`` is the device's stream rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from lerobot.cameras import CameraConfig

from agentic_env.errors import InvalidConfigError


@dataclass(kw_only=True)
class AgenticCameraConfig(CameraConfig):
    """What both workcell cameras share.

    Attributes:
        width: delivered image width, pixels (16-4096).
        height: delivered image height, pixels (16-4096).
        fps: device stream rate, frames per second.
        use_depth: also deliver depth (``read_depth``: (H, W, 1) uint16 millimetres along the
            optical axis, 0 = no return).
        twin: render the camera's MuJoCo twin in a simulated cell instead of opening the
            device (for tests and dry runs; a robot in twin mode gives its cameras its own
            cell instead).
        twin_task: task of the simulated cell (``twin`` only).
        twin_seed: layout seed of the simulated cell (``twin`` only).
        timeout_s: longest wait for one frame, seconds.
    """

    width: int | None = 640
    height: int | None = 360
    fps: int | None = 30
    use_depth: bool = False
    twin: bool = False
    twin_task: str = "tabletop"
    twin_seed: int = 0
    timeout_s: float = 1.0

    def __post_init__(self) -> None:
        for name in ("width", "height", "fps"):
            if getattr(self, name) is None:
                raise InvalidConfigError(f"{type(self).__name__}.{name} must be set")
        if not (16 <= self.width <= 4096 and 16 <= self.height <= 4096):
            raise InvalidConfigError(f"{type(self).__name__}: {self.width}x{self.height} is "
                                     "outside 16..4096 pixels per side")
        if self.timeout_s <= 0:
            raise InvalidConfigError(f"{type(self).__name__}.timeout_s must be > 0")


@CameraConfig.register_subclass("agentic_kinect")
@dataclass(kw_only=True)
class AgenticKinectCameraConfig(AgenticCameraConfig):
    """The Azure Kinect shoulder camera (colour 1280x720 BGRA, NFOV depth; ``pyk4a``).

    Attributes:
        device_id: index of the Azure Kinect on this host.
    """

    device_id: int = 0


@CameraConfig.register_subclass("agentic_d405")
@dataclass(kw_only=True)
class AgenticD405CameraConfig(AgenticCameraConfig):
    """The RealSense D405 wrist camera (848x480 RGB + z16 depth; ``pyrealsense2``).

    Attributes:
        serial_number: the D405's serial number; empty: the only one attached.
    """

    serial_number: str = ""
