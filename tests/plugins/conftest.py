"""Shared setup of the LeRobot plugin tests: everything runs on the digital twin, headless."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.lerobot_plugins import twin_config

pytest.importorskip("lerobot")
pytest.importorskip("serial")  # the twin's gripper talks over a pseudo-terminal

try:
    import lerobot_camera_agentic  # noqa: F401
    import lerobot_robot_agentic_ur5e  # noqa: F401
except ModuleNotFoundError as missing:
    raise ImportError(
        f"{missing}: the LeRobot plugins are not installed; run scripts/setup.sh (or "
        "`pip install --no-deps -e plugins/lerobot_camera_agentic -e "
        "plugins/lerobot_robot_agentic_ur5e`)") from None


@pytest.fixture
def twin_robot() -> Iterator[Any]:
    """A connected ``agentic_ur5e`` on the twin (seed 0), disconnected after the test."""
    from lerobot.robots import make_robot_from_config

    robot = make_robot_from_config(twin_config())
    robot.connect()
    yield robot
    if robot.is_connected:
        robot.disconnect()
