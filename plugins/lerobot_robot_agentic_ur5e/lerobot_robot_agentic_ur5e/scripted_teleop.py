"""A scripted "teleoperator" for ``lerobot-record`` without a human device.

LeRobot 0.6.1's ``lerobot-record`` requires a teleoperator (policies run through
``lerobot-rollout``). :class:`AgenticScripted` (``--teleop.type=agentic_scripted``) is one
that needs no device: it plays a smooth joint-space motion for ``agentic_ur5e`` — from the
start configuration (default: the workcell's home), each joint swings by its amplitude along
``(1 - cos(2 pi t / period)) / 2`` (zero speed at the start, so the safety layer's
acceleration cap holds), while the gripper closes and reopens over the same period. ``t``
counts ``get_action`` calls at ``fps``, so a recording is reproducible on the twin. Its
actions are named like the robot's (``feature_names`` as the robot's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from lerobot.teleoperators import Teleoperator, TeleoperatorConfig
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError

from agentic_env.errors import InvalidConfigError
from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE, HOME_JOINT_POSITIONS
from lerobot_robot_agentic_ur5e.agentic_ur5e import feature_names
from lerobot_robot_agentic_ur5e.config_agentic_ur5e import FEATURE_NAMES


@TeleoperatorConfig.register_subclass("agentic_scripted")
@dataclass(kw_only=True)
class AgenticScriptedConfig(TeleoperatorConfig):
    """The scripted motion.

    Attributes:
        fps: calls per second (the recording's ``--dataset.fps``).
        period_s: one swing out and back, seconds (> 0).
        amplitude: per-joint swing, rad (six values, each within +-0.5).
        start: start joint configuration, rad (six values); empty: the home configuration.
        gripper_closed: gripper width at mid-swing, metres (within the gripper's range).
        feature_names: action naming, as the robot's (``exporter`` or ``lerobot``).
    """

    fps: int = 20
    period_s: float = 4.0
    amplitude: list[float] = field(default_factory=lambda: [0.25, 0.1, -0.15, 0.1, 0.0, 0.3])
    start: list[float] = field(default_factory=list)
    gripper_closed: float = 0.03
    feature_names: str = "exporter"

    def __post_init__(self) -> None:
        if self.fps <= 0 or self.period_s <= 0:
            raise InvalidConfigError("agentic_scripted: fps and period_s must be > 0")
        if len(self.amplitude) != 6 or max(abs(a) for a in self.amplitude) > 0.5:
            raise InvalidConfigError("agentic_scripted: amplitude needs six values within "
                                     f"+-0.5 rad; got {self.amplitude}")
        if self.start and len(self.start) != 6:
            raise InvalidConfigError(f"agentic_scripted: start needs six joint angles (rad); "
                                     f"got {self.start}")
        if self.feature_names not in FEATURE_NAMES:
            raise InvalidConfigError(f"agentic_scripted: feature_names={self.feature_names!r}; "
                                     f"valid: {', '.join(FEATURE_NAMES)}")
        low, high = GRIPPER_WIDTH_RANGE
        if not low <= self.gripper_closed <= high:
            raise InvalidConfigError(f"agentic_scripted: gripper_closed must be in "
                                     f"[{low}, {high}] m; got {self.gripper_closed}")


class AgenticScripted(Teleoperator):
    """See the module docstring.

    Args:
        config: the scripted motion.
    """

    config_class = AgenticScriptedConfig
    name = "agentic_scripted"

    def __init__(self, config: AgenticScriptedConfig) -> None:
        super().__init__(config)
        self.config = config
        self._start = np.asarray(config.start or HOME_JOINT_POSITIONS, dtype=float)
        self._amplitude = np.asarray(config.amplitude, dtype=float)
        self._calls: int | None = None
        self._names = feature_names(config.feature_names)[1]

    @cached_property
    def action_features(self) -> dict[str, type]:
        """The ``agentic_ur5e`` action names, all float."""
        return dict.fromkeys(self._names, float)

    @cached_property
    def feedback_features(self) -> dict[str, type]:
        """None: the script takes no feedback."""
        return {}

    @property
    def is_connected(self) -> bool:
        """Whether the script runs."""
        return self._calls is not None

    @property
    def is_calibrated(self) -> bool:
        """Always: there is no device."""
        return True

    def calibrate(self) -> None:
        """Nothing to calibrate."""

    def configure(self) -> None:
        """Nothing to configure."""

    def connect(self, calibrate: bool = True) -> None:
        """Start the script at ``t = 0``."""
        if self._calls is not None:
            raise DeviceAlreadyConnectedError(f"{self} is already connected")
        self._calls = 0

    def get_action(self) -> dict[str, float]:
        """The next target: joints (rad) and gripper width (m)."""
        if self._calls is None:
            raise DeviceNotConnectedError(f"{self} is not connected; call connect() first")
        t = self._calls / self.config.fps
        self._calls += 1
        phase = (1.0 - np.cos(2.0 * np.pi * t / self.config.period_s)) / 2.0
        joints = self._start + self._amplitude * phase
        open_width = GRIPPER_WIDTH_RANGE[1]
        width = open_width + (self.config.gripper_closed - open_width) * phase
        return {name: float(v) for name, v in zip(self._names, [*joints, width], strict=True)}

    def send_feedback(self, feedback: dict[str, Any]) -> None:
        """Ignored: the script is open-loop."""

    def disconnect(self) -> None:
        """Stop the script."""
        if self._calls is None:
            raise DeviceNotConnectedError(f"{self} is not connected; call connect() first")
        self._calls = None
