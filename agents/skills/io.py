"""How skills reach the robot: the latest observation, primitives and a trace of events."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from agentic_env.contract.spaces import Workspace


class SkillIO(Protocol):
    """What a skill needs of its caller: the latest observation, a way to run a primitive
    (which updates ``obs``) and an event sink for the trace; the agent runtime's
    :class:`~agentic_env.agents.runtime.Episode` is the one every agent uses."""

    @property
    def obs(self) -> dict[str, np.ndarray]:
        """The latest observation (see :mod:`agentic_env.contract.spaces`)."""
        ...

    @property
    def workspace(self) -> Workspace:
        """The robot's primitive workspace."""
        ...

    def act(self, action: dict[str, Any], why: str) -> dict[str, Any]:
        """Run one primitive (``why``: a few words for the trace); its status report."""
        ...

    def event(self, kind: str, **details: Any) -> None:
        """Record one decision."""
        ...
