"""The workcell's static layout, shared by the sim and the real env: table, robot base, cameras.

Frames: the world frame has z up with the floor at z = 0; the robot base frame sits on the
table top at :attr:`SceneConfig.robot_base_pos` with the world's orientation, so base-frame
heights are heights above the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentic_env.geometry.camera import CameraConfig, azure_kinect_color, realsense_d405

#: Height of the table top above the floor, metres.
TABLE_HEIGHT = 0.75
#: Prefix of every robot name in the scene (``robot/gripper/tcp``, ...).
ROBOT_PREFIX = "robot/"


@dataclass(frozen=True)
class SceneConfig:
    """Static layout of the workcell.

    Attributes:
        shoulder_camera: optics of the Azure Kinect-like shoulder camera.
        wrist_camera: optics of the D405-like wrist camera.
        timestep: physics step, seconds.
        robot_base_pos: robot base origin in the world frame, metres (on the table top).
        shoulder_camera_pos: shoulder camera position in the robot base frame, metres.
        shoulder_camera_target: point the shoulder camera looks at, base frame, metres.
        table_extent: table top (x_min, x_max, y_min, y_max) in the base frame, metres.
        setting: name of the dressing in ``scenes/`` (lab, kitchen, outdoor): floor, sky,
            table, lights, clutter, background.
        randomize: whether the dressing is randomised per reset within the setting's ranges
            (:func:`agentic_env.sim.dressing.randomize_dressing`); off = the nominal dressing.
    """

    shoulder_camera: CameraConfig = field(default_factory=azure_kinect_color)
    wrist_camera: CameraConfig = field(default_factory=realsense_d405)
    timestep: float = 0.002
    robot_base_pos: tuple[float, float, float] = (0.0, 0.0, TABLE_HEIGHT)
    shoulder_camera_pos: tuple[float, float, float] = (0.05, -0.5, 0.58)
    shoulder_camera_target: tuple[float, float, float] = (0.55, 0.1, 0.0)
    table_extent: tuple[float, float, float, float] = (-0.3, 0.95, -0.75, 0.75)
    setting: str = "lab"
    randomize: bool = True

    @classmethod
    def at_resolution(cls, width: int, height: int, **fields: Any) -> SceneConfig:
        """The workcell with both cameras rendering ``width`` x ``height`` pixels (their
        optics otherwise the defaults) and the other ``fields`` as given."""
        return cls(shoulder_camera=azure_kinect_color(width, height),
                   wrist_camera=realsense_d405(width, height), **fields)
