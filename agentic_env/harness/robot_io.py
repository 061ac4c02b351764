"""The one :class:`~agentic_env.agents.base.RobotIO` over any env, sim or real.

:class:`EnvRobotIO` hands an agent what a real robot reports too: observations and the
primitive's status. The env and its privileged ``info`` (scene state, symbolic steps, task
truth) are kept in closures, not attributes, so nothing an agent reaches by attribute leads
to the simulator.
"""

from __future__ import annotations

from collections.abc import Callable
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

    __slots__ = ("_act", "_events", "_observe", "_wait", "actions", "stopped", "workspace")

    def __init__(self, env: PrimitiveEnv,
                 on_observation: Callable[[dict[str, np.ndarray]], None] | None = None) -> None:
        self.workspace: Workspace = env.primitive_config.workspace
        self.actions = 0
        self.stopped = ""
        self._events: list[str] = []
        reported = [0, 0]  # disturbances, scheduled events

        def take(info: dict[str, Any]) -> None:
            applied = list(info.get("disturbances", ()))
            self._events.extend(t for t in map(event_text, applied[reported[0]:]) if t)
            reported[0] = max(reported[0], len(applied))
            scheduled = list(info.get("events", ()))
            self._events.extend(t for t in map(announcement, scheduled[reported[1]:]) if t)
            reported[1] = max(reported[1], len(scheduled))

        def seen(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
            if on_observation is not None:
                on_observation(obs)
            return obs

        def observe() -> dict[str, np.ndarray]:
            return seen(env.observe())

        def act(action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
            obs, _reward, _terminated, _truncated, info = env.step(action)
            take(info)
            fault = info.get("safety_fault")
            if fault is not None:
                raise RobotStoppedError(f"safety fault {fault.get('kind')}: "
                                        f"{fault.get('message')}")
            if info.get("operator_declined"):
                raise RobotStoppedError("the operator declined a primitive")
            return seen(obs), dict(info.get("primitive", {}))

        def wait(seconds: float) -> None:
            waiting = getattr(env, "wait", None)
            if waiting is not None:
                take(waiting(seconds))

        self._observe, self._act, self._wait = observe, act, wait

    def observe(self) -> dict[str, np.ndarray]:
        """A fresh observation (see :mod:`agentic_env.contract.spaces`)."""
        return self._observe()

    def poll_events(self) -> list[str]:
        """The exogenous events the env reported since the last poll, as text (an operator
        would announce them: ``a person moved apple-1``, ``operator says: stop``, ``e-stop
        pressed...``); only the text reaches the agent."""
        events, self._events[:] = list(self._events), []
        return events

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass without moving (the robot waits, e.g. for the operator or
        the e-stop's release); events that happen meanwhile reach :meth:`poll_events`."""
        self._wait(seconds)

    def act(self, action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Run one primitive; the observation after it and its status report (``name``,
        ``ok``, ``reason``, ``message``).

        Raises:
            RobotStoppedError: on a safety fault or a primitive the operator declined.
        """
        try:
            result = self._act(action)
        except RobotStoppedError as stop:
            self.stopped = str(stop)
            raise
        self.actions += 1
        return result
