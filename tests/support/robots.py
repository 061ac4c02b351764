"""Robots without a simulator, shared by the agent tests: one that records the primitives it is
sent, one that only observes, and a one-tool registry that picks a lemon."""

from __future__ import annotations

from typing import Any

import numpy as np

from agentic_env.agents.skills.result import SkillCode, SkillResult, fail, ok
from agentic_env.agents.tools.registry import ToolRegistry
from agentic_env.contract.spaces import Workspace


class RecordingRobot:
    """A robot that records primitives and never moves."""

    workspace = Workspace()

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def observe(self) -> dict[str, np.ndarray]:
        return {"shoulder_rgb": np.zeros((4, 4, 3), np.uint8), "joint_positions": np.zeros(6)}

    def act(self, action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        self.sent.append(action)
        return self.observe(), {"ok": True}


class StillRobot:
    """A robot that only observes (scripted tools never move it)."""

    workspace = Workspace()

    def observe(self) -> dict[str, np.ndarray]:
        return {"shoulder_rgb": np.zeros((8, 8, 3), np.uint8)}

    def act(self, action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        raise AssertionError("no primitive is expected")


def pick_tools() -> ToolRegistry:
    """A registry of one tool, ``pick(name)``, that finds only ``lemon-1``."""

    def pick(name: str) -> SkillResult:
        """Pick up an object.

        Args:
            name: the object's name.
        """
        if name != "lemon-1":
            return fail(SkillCode.NOT_FOUND, f"Object {name} not found")
        return ok("The lemon was successfully picked")

    return ToolRegistry([pick])
