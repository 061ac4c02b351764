"""Replays a trial's scheduled events (:mod:`agentic_env.contract.events`) in the simulator.

The env calls :meth:`EventRunner.primitive_requested` before every primitive request (it
fires the events scheduled at that request and says whether the e-stop now refuses it) and
:meth:`EventRunner.control_step` after every control period (events at a time). A person's
changes act on the free bodies (:class:`SimHands`); the e-stop is a flag the env obeys. The
real robot's harness runs the same runner on wall time with the twin's hands.
Every applied event is kept in :attr:`EventRunner.applied` (``info["events"]``).

This module acts on the simulator (privileged): it is the harness's hand, not the agent's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.events import OBJECT_KINDS, EventSpec, announcement
from agentic_env.contract.workcell import TABLE_HEIGHT
from agentic_env.sim.state import SceneState, body_box, holding, shift_free_body

#: Where removed objects go: the floor behind the robot (base frame xy, metres).
REMOVED_XY = (-0.7, 0.7)


#: Applies one event to the world; returns details for its ``info["events"]`` entry.
Hands = Callable[[EventSpec], dict[str, Any]]


class EventRunner:
    """Fires one episode's schedule.

    Args:
        specs: the schedule, in order.
        clock: the episode's time, seconds (the simulated time; wall time on a real robot).
        hands: what carries out a person's change (:class:`SimHands` in the simulator); the
            runner itself only keeps the e-stop's state and the operator's words.

    Attributes:
        applied: the fired events (spec fields, ``sim_time``: the clock's time,
            ``primitive``: the request count, ``announced``: what the robot is told).
        estop: whether the e-stop is pressed.
        requests: primitive requests so far (refused ones included).
        refused: motion requests refused while the e-stop was pressed, not counting one
            that was already under way when it was pressed.
    """

    def __init__(self, specs: list[EventSpec], clock: Callable[[], float],
                 hands: Hands) -> None:
        self.specs = list(specs)
        self._clock, self._hands = clock, hands
        self._pending = list(range(len(self.specs)))
        self._fired_at: dict[int, float] = {}
        self.applied: list[dict[str, Any]] = []
        self.estop = False
        self.requests = 0
        self.refused = 0

    def primitive_requested(self) -> bool:
        """Count a primitive request and fire the events scheduled at it; whether the
        e-stop refuses the request (an e-stop pressed at this very request stops a motion
        already under way, which is not counted as a refused request)."""
        self.requests += 1
        was_pressed = self.estop
        self._fire(lambda spec: spec.at_primitive == self.requests)
        self.refused += int(self.estop and was_pressed)
        return self.estop

    def control_step(self) -> bool:
        """Fire the events due at the current simulated time; whether the e-stop was
        pressed by one of them."""
        was_pressed = self.estop
        self._fire(self._due)
        return self.estop and not was_pressed

    def _due(self, spec: EventSpec) -> bool:
        if spec.at_time < 0.0:
            return False
        index = self.specs.index(spec)
        start = 0.0
        if spec.after_previous:
            if index == 0 or index - 1 not in self._fired_at:
                return False
            start = self._fired_at[index - 1]
        return self._clock() >= start + spec.at_time

    def _fire(self, condition: Any) -> None:
        for index in list(self._pending):
            spec = self.specs[index]
            if not condition(spec):
                continue
            self._pending.remove(index)
            self._fired_at[index] = self._clock()
            if spec.kind in ("estop", "estop_release"):
                self.estop = spec.kind == "estop"
            details = self._hands(spec)
            entry = {**spec.to_dict(), "sim_time": self._clock(),
                     "primitive": self.requests, **details}
            self.applied.append({**entry, "announced": announcement(entry)})



class SimClock:
    """The simulated time of ``scene``, seconds (picklable, like the env)."""

    def __init__(self, scene: SceneState) -> None:
        self.scene = scene

    def __call__(self) -> float:
        return float(self.scene.data.time)


class SimHands:
    """A person's changes in the simulator: ``move_object`` shifts a free body (unless the
    gripper holds it), ``remove_object`` puts it on the floor behind the robot,
    ``add_object`` on the table at ``position``; other kinds change nothing physical.
    Returns the body's new position (base frame, metres) for the event's entry."""

    def __init__(self, scene: SceneState) -> None:
        self.scene = scene

    def _put(self, body: str, xy: np.ndarray, surface_z: float) -> None:
        scene = self.scene
        above = scene.body_position(body)[2] - body_box(scene, body).low[2]
        shift = np.array([*xy, surface_z + above + 0.002]) - scene.body_position(body)
        shift_free_body(scene, body, shift)

    def __call__(self, spec: EventSpec) -> dict[str, Any]:
        scene = self.scene
        if spec.kind not in OBJECT_KINDS:
            return {}
        if spec.kind == "move_object" and not holding(scene, spec.body):
            shift_free_body(scene, spec.body, np.array([*spec.shift, 0.0]))
        elif spec.kind == "remove_object":
            self._put(spec.body, np.array(REMOVED_XY), -TABLE_HEIGHT)
        elif spec.kind == "add_object":
            self._put(spec.body, np.asarray(spec.position, dtype=float), 0.0)
        mujoco.mj_forward(scene.model, scene.data)
        return {"moved_to": scene.body_position(spec.body).tolist()}
