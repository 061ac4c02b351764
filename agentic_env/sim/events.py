"""Replays a trial's scheduled events (:mod:`agentic_env.contract.events`) in the simulator.

The env calls :meth:`EventRunner.primitive_requested` before every primitive request (it
fires the events scheduled at that request and says whether the e-stop now refuses it) and
:meth:`EventRunner.control_step` after every control period (events at a simulated time).
A person's changes act on the free bodies directly; the e-stop is a flag the env obeys.
Every applied event is kept in :attr:`EventRunner.applied` (``info["events"]``).

This module acts on the simulator (privileged): it is the harness's hand, not the agent's.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.events import EventSpec, announcement
from agentic_env.contract.workcell import TABLE_HEIGHT
from agentic_env.sim.state import SceneState, body_box, holding, shift_free_body

#: Where removed objects go: the floor behind the robot (base frame xy, metres).
REMOVED_XY = (-0.7, 0.7)


class EventRunner:
    """Fires one episode's schedule.

    Args:
        specs: the schedule, in order.
        scene: privileged simulator access.

    Attributes:
        applied: the fired events (spec fields, ``sim_time``, ``primitive``, ``text``).
        estop: whether the e-stop is pressed.
        requests: primitive requests so far (refused ones included).
        refused: motion requests refused while the e-stop was pressed, not counting one
            that was already under way when it was pressed.
    """

    def __init__(self, specs: list[EventSpec], scene: SceneState) -> None:
        self.specs = list(specs)
        self._scene = scene
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
        return float(self._scene.data.time) >= start + spec.at_time

    def _fire(self, condition: Any) -> None:
        for index in list(self._pending):
            spec = self.specs[index]
            if not condition(spec):
                continue
            self._pending.remove(index)
            self._fired_at[index] = float(self._scene.data.time)
            details = self._apply(spec)
            entry = {**spec.to_dict(), "sim_time": float(self._scene.data.time),
                     "primitive": self.requests, **details}
            entry["text"] = announcement(entry)
            self.applied.append(entry)

    def _apply(self, spec: EventSpec) -> dict[str, Any]:
        if spec.kind in ("estop", "estop_release"):
            self.estop = spec.kind == "estop"
            return {}
        if spec.kind == "say":
            return {"spoken": spec.text}
        scene = self._scene
        if spec.kind == "move_object" and not holding(scene, spec.body):
            shift_free_body(scene, spec.body, np.array([*spec.shift, 0.0]))
        elif spec.kind == "remove_object":
            self._put(spec.body, np.array(REMOVED_XY), -TABLE_HEIGHT)
        elif spec.kind == "add_object":
            self._put(spec.body, np.asarray(spec.position, dtype=float), 0.0)
        mujoco.mj_forward(scene.model, scene.data)
        return {"moved_to": scene.body_position(spec.body).tolist()}

    def _put(self, body: str, xy: np.ndarray, surface_z: float) -> None:
        """Set ``body`` upright-as-it-is at ``xy`` resting on a surface at ``surface_z``
        (base frame, metres; 0 = the table top)."""
        scene = self._scene
        above = scene.body_position(body)[2] - body_box(scene, body).low[2]
        shift = np.array([*xy, surface_z + above + 0.002]) - scene.body_position(body)
        shift_free_body(scene, body, shift)
