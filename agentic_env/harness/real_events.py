"""A trial's scheduled events on the real robot's path (:class:`RealEnv`, hardware or twin).

:class:`ScheduledRealEnv` wraps the env the agent drives: before every primitive request and
at every wait it fires the events due (primitive count, or wall time since the episode
began) with the given hands and reports them in ``info["events"]`` as the sim does. The
e-stop itself is the env's :class:`~agentic_env.real.estop.EStopChannel`: the hands press
it where the robot would feel it (on the twin, the twin arm's emergency stop sets the
controller's safety status bits that feed the channel; on hardware, the operator presses
the real button when asked), and the env refuses every motion while it reads pressed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from agentic_env.contract.events import OBJECT_KINDS, EventSpec
from agentic_env.real.real_env import RealEnv
from agentic_env.real.twin import Twin
from agentic_env.sim.events import EventRunner, Hands, SimHands
from agentic_env.tasks.variants import VariantTask


def twin_hands(env: RealEnv, twin: Twin) -> Hands:
    """The events on a twin cell: the e-stop through the twin arm's safety status (released
    as an operator would, then :meth:`RealEnv.release_estop`), a person's changes on the
    twin's world, a changed goal on the world's task (which the sim-oracle reads)."""
    world = twin.world

    def hands(spec: EventSpec) -> dict[str, Any]:
        if spec.kind == "estop":
            twin.arm.emergency_stop()
        elif spec.kind == "estop_release":
            twin.arm.release_emergency_stop()
            env.release_estop()
        elif spec.kind == "say" and spec.goal and isinstance(world.env.task, VariantTask):
            world.env.task.change_goal(list(spec.goal))
        elif spec.kind in OBJECT_KINDS:
            with world.lock:
                return SimHands(world.env.scene_state)(spec)
        return {}

    return hands


def operator_hands(env: RealEnv, ask: Callable[[str], str]) -> Hands:
    """The events on hardware: the operator is asked to carry out each physical one (press
    or release the e-stop, move, remove or add an object) and presses Enter when done."""

    def hands(spec: EventSpec) -> dict[str, Any]:
        if spec.kind == "estop":
            ask("Press the e-stop now, then press Enter: ")
        elif spec.kind == "estop_release":
            ask("Release the e-stop and restart the arm on the pendant, then press Enter: ")
            env.release_estop()
        elif spec.kind == "move_object":
            shift = np.round(np.asarray(spec.shift) * 100, 1).tolist()
            ask(f"Move {spec.body} by {shift} cm (x, y), then press Enter: ")
        elif spec.kind == "remove_object":
            ask(f"Take {spec.body} off the table, then press Enter: ")
        elif spec.kind == "add_object":
            at = np.round(np.asarray(spec.position) * 100, 1).tolist()
            ask(f"Put {spec.body} on the table at {at} cm (x, y), then press Enter: ")
        return {}

    return hands


class ScheduledRealEnv:
    """``env`` with the trial's events replayed (see the module docstring).

    Args:
        env: the real env, reset.
        events: the trial's schedule.
        hands: :func:`twin_hands` or :func:`operator_hands`.
        clock: wall time, seconds.
    """

    def __init__(self, env: RealEnv, events: list[EventSpec], hands: Hands,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.env = env
        self.primitive_config = env.primitive_config
        start = clock()
        self.runner = EventRunner(events, lambda: clock() - start, hands)

    def observe(self) -> dict[str, np.ndarray]:
        """The env's observation."""
        return self.env.observe()

    def step(self, action: dict[str, Any]) -> tuple[Any, ...]:
        """Fire the events due, then step the env (which refuses motion while the e-stop
        is pressed); ``info["events"]`` lists every event so far."""
        self.runner.primitive_requested()
        self.runner.control_step()
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {**info, "events": list(self.runner.applied)}

    def wait(self, seconds: float) -> dict[str, Any]:
        """The env waits ``seconds``; events due meanwhile fire."""
        info = self.env.wait(seconds)
        self.runner.control_step()
        return {**info, "events": list(self.runner.applied)}
