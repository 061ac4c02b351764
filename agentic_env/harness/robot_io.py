"""The one :class:`~agentic_env.agents.base.RobotIO` over any env, sim or real.

:class:`EnvRobotIO` hands an agent what a real robot reports too: observations and the
primitive's status. The env and its privileged ``info`` (scene state, symbolic steps, task
truth) stay in a table private to this (harness) module, keyed by the robot io: no attribute,
slot, closure or bound method of the object an agent holds leads to the simulator.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from agentic_env.agents.base import RobotStoppedError
from agentic_env.contract.events import announcement
from agentic_env.contract.spaces import Workspace


def event_text(disturbance: dict[str, Any]) -> str:
    """The announcement of an applied disturbance (``info["disturbances"]`` entry), or ""
    for one nobody would announce (a light, a camera bump, an occluder passing)."""
    body = disturbance.get("body")
    if disturbance.get("kind") in ("move_target", "move_place_location") and body:
        return f"a person moved {body}"
    return ""


class PrimitiveEnv(Protocol):
    """What :class:`EnvRobotIO` needs of an env (``SimEnv`` and ``RealEnv`` both fit)."""

    primitive_config: Any

    def observe(self) -> dict[str, np.ndarray]: ...

    def step(self, action: dict[str, Any]) -> tuple[Any, ...]: ...

    # optional: ``wait(seconds) -> info`` lets time pass without moving (EnvRobotIO.wait)


@dataclass
class _Link:
    """What an :class:`EnvRobotIO` reaches its env through (harness side only)."""

    env: PrimitiveEnv
    on_observation: Callable[[dict[str, np.ndarray]], None] | None
    #: how many disturbances and scheduled events were already reported
    reported: list[int] = field(default_factory=lambda: [0, 0])

    def seen(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if self.on_observation is not None:
            self.on_observation(obs)
        return obs

    def take(self, info: dict[str, Any], events: list[str]) -> None:
        """Append the newly reported events of ``info`` to ``events`` as text."""
        applied = list(info.get("disturbances", ()))
        events.extend(t for t in map(event_text, applied[self.reported[0]:]) if t)
        self.reported[0] = max(self.reported[0], len(applied))
        scheduled = list(info.get("events", ()))
        events.extend(t for t in map(announcement, scheduled[self.reported[1]:]) if t)
        self.reported[1] = max(self.reported[1], len(scheduled))


#: The env behind each live :class:`EnvRobotIO`, by its key; an entry goes with its robot io.
_LINKS: dict[int, _Link] = {}
_KEYS = itertools.count()


class EnvRobotIO:
    """Observations and primitive status of ``env``; nothing else.

    Args:
        env: a ``SimEnv`` or ``RealEnv`` in ``primitive`` control mode, already reset.
        on_observation: the harness's view of every observation the agent gets (the trace
            shows them); never the agent's.

    Attributes:
        workspace: the reachable box of the primitives (base frame, metres).
        actions: primitives sent so far.
        stopped: why the robot stopped the episode (safety fault, declined primitive),
            ``""`` while it has not.
    """

    __slots__ = ("__weakref__", "_events", "_key", "actions", "stopped", "workspace")

    def __init__(self, env: PrimitiveEnv,
                 on_observation: Callable[[dict[str, np.ndarray]], None] | None = None) -> None:
        self.workspace: Workspace = env.primitive_config.workspace
        self.actions = 0
        self.stopped = ""
        self._events: list[str] = []
        self._key = next(_KEYS)
        _LINKS[self._key] = _Link(env, on_observation)
        weakref.finalize(self, _LINKS.pop, self._key, None)

    def observe(self) -> dict[str, np.ndarray]:
        """A fresh observation (see :mod:`agentic_env.contract.spaces`)."""
        link = _LINKS[self._key]
        return link.seen(link.env.observe())

    def poll_events(self) -> list[str]:
        """The exogenous events the env reported since the last poll, as text (an operator
        would announce them: ``a person moved apple-1``, ``operator says: stop``, ``e-stop
        pressed...``); only the text reaches the agent."""
        events, self._events[:] = list(self._events), []
        return events

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass without moving (the robot waits, e.g. for the operator or
        the e-stop's release); events that happen meanwhile reach :meth:`poll_events`."""
        link = _LINKS[self._key]
        waiting = getattr(link.env, "wait", None)
        if waiting is not None:
            link.take(waiting(seconds), self._events)

    def act(self, action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Run one primitive; the observation after it and its status report (``name``,
        ``ok``, ``reason``, ``message``).

        Raises:
            RobotStoppedError: on a safety fault or a primitive the operator declined.
        """
        obs, _terminated, info = self._step(action)
        return obs, dict(info.get("primitive", {}))

    def control(self, action: np.ndarray) -> tuple[dict[str, np.ndarray], bool]:
        """Hold a ``joint_position`` action (six joint targets, rad; gripper width target, m)
        for one control period of an env in that mode; the observation after it and whether
        the episode ended (the env's ``terminated``). Counted in :attr:`actions`.

        Raises:
            RobotStoppedError: on a safety fault.
        """
        obs, terminated, _info = self._step(np.asarray(action, dtype=float))
        return obs, terminated

    def _step(self, action: Any) -> tuple[dict[str, np.ndarray], bool, dict[str, Any]]:
        link = _LINKS[self._key]
        obs, _reward, terminated, _truncated, info = link.env.step(action)
        link.take(info, self._events)
        fault = info.get("safety_fault")
        stop = (f"safety fault {fault.get('kind')}: {fault.get('message')}" if fault is not None
                else "the operator declined a primitive" if info.get("operator_declined")
                else "")
        if stop:
            self.stopped = stop
            raise RobotStoppedError(stop)
        self.actions += 1
        return link.seen(obs), bool(terminated), info
