"""The agentic_env workcell's UR5e + fin-ray gripper as a LeRobot robot.

Importing this package (LeRobot does it by itself for every installed ``lerobot_robot_*``
distribution) registers the robot type ``agentic_ur5e`` and the device-free scripted
teleoperator ``agentic_scripted`` that ``lerobot-record`` can record it with.
"""

from lerobot_robot_agentic_ur5e.agentic_ur5e import (
    ACTION_NAMES,
    POS_NAMES,
    STATE_NAMES,
    AgenticUR5e,
    CalibrationMissingError,
    feature_names,
)
from lerobot_robot_agentic_ur5e.config_agentic_ur5e import AgenticUR5eConfig
from lerobot_robot_agentic_ur5e.scripted_teleop import AgenticScripted, AgenticScriptedConfig

__all__ = [
    "ACTION_NAMES",
    "POS_NAMES",
    "STATE_NAMES",
    "AgenticScripted",
    "AgenticScriptedConfig",
    "AgenticUR5e",
    "AgenticUR5eConfig",
    "CalibrationMissingError",
    "feature_names",
]
