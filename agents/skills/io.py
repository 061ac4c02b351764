"""How skills reach the robot: the latest observation, primitives and a trace of events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from agentic_env.agents.base import RobotIO
from agentic_env.contract.spaces import PRIMITIVES, Workspace


class SkillIO(Protocol):
    """What a skill needs of its caller: the latest observation, a way to run a primitive
    (which updates ``obs``) and an event sink for the trace. An agent may implement it
    itself (to count actions against its limits) or use :class:`RobotSkillIO`."""

    obs: dict[str, np.ndarray]
    workspace: Workspace

    def act(self, action: dict[str, Any], why: str) -> dict[str, Any]:
        """Run one primitive (``why``: a few words for the trace); its status report."""
        ...

    def event(self, kind: str, **details: Any) -> None:
        """Record one decision."""
        ...


class RobotSkillIO:
    """A :class:`SkillIO` over a :class:`~agentic_env.agents.base.RobotIO`.

    Args:
        robot: the robot.
        on_event: receives each event as a dict (``kind`` plus details).

    Attributes:
        obs: the latest observation.
        actions: primitives run.
        events: every event, in order.
    """

    def __init__(self, robot: RobotIO,
                 on_event: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.robot = robot
        self.workspace = robot.workspace
        self.obs = robot.observe()
        self.actions = 0
        self.events: list[dict[str, Any]] = []
        self._on_event = on_event

    def act(self, action: dict[str, Any], why: str) -> dict[str, Any]:
        """Run one primitive; the observation after it becomes :attr:`obs`."""
        self.obs, status = self.robot.act(action)
        self.actions += 1
        self.event("primitive", primitive=PRIMITIVES[int(action["primitive"])], why=why,
                   ok=status.get("ok"), reason=status.get("reason", ""))
        return status

    def event(self, kind: str, **details: Any) -> None:
        """Record one event (and pass it on)."""
        event = {"kind": kind, **details}
        self.events.append(event)
        if self._on_event is not None:
            self._on_event(event)
