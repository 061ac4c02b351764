"""Helpers of the LeRobot plugin tests (tests/plugins): the ``agentic_ur5e`` robot on the
digital twin with 64 x 36 images."""

from __future__ import annotations

from typing import Any

#: Image size of every camera in the plugin tests, pixels.
WIDTH, HEIGHT = 64, 36
#: The same cameras as a LeRobot command-line value (``--robot.cameras=...``).
CAMERAS_ARG = (f"{{shoulder: {{type: agentic_kinect, width: {WIDTH}, height: {HEIGHT}}}, "
               f"wrist: {{type: agentic_d405, width: {WIDTH}, height: {HEIGHT}}}}}")


def twin_config(**fields: Any) -> Any:
    """An ``agentic_ur5e`` config on the twin with small images; ``fields`` override."""
    from lerobot_camera_agentic import AgenticD405CameraConfig, AgenticKinectCameraConfig
    from lerobot_robot_agentic_ur5e import AgenticUR5eConfig

    cameras = {"shoulder": AgenticKinectCameraConfig(width=WIDTH, height=HEIGHT),
               "wrist": AgenticD405CameraConfig(width=WIDTH, height=HEIGHT)}
    return AgenticUR5eConfig(**{"twin": True, "cameras": cameras, **fields})
