"""The agentic_env workcell's Azure Kinect and RealSense D405 as LeRobot cameras.

Importing this package (LeRobot does it by itself for every installed ``lerobot_camera_*``
distribution) registers the camera types ``agentic_kinect`` and ``agentic_d405``.
"""

from lerobot_camera_agentic.agentic_camera import (
    AgenticCamera,
    AgenticD405Camera,
    AgenticKinectCamera,
)
from lerobot_camera_agentic.config_agentic_camera import (
    AgenticCameraConfig,
    AgenticD405CameraConfig,
    AgenticKinectCameraConfig,
)

__all__ = [
    "AgenticCamera",
    "AgenticCameraConfig",
    "AgenticD405Camera",
    "AgenticD405CameraConfig",
    "AgenticKinectCamera",
    "AgenticKinectCameraConfig",
]
