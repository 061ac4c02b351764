"""One sim episode's scheduled events and trial variant, as the env runs them.

:class:`EpisodeSchedule` owns the :class:`~agentic_env.sim.events.EventRunner` of the episode
and the task the env scores with: the base task, or the base task seen through a
:class:`~agentic_env.tasks.variants.Variant` (a trial kind, or a plain trial whose operator
changes the goal by a ``say`` event); it applies goal changes as their events fire.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from agentic_env.contract.events import EventSpec
from agentic_env.errors import InvalidConfigError
from agentic_env.pddl.planning import PlanStep
from agentic_env.sim.disturbances import DisturbanceSpec
from agentic_env.sim.events import EventRunner, SimClock, SimHands
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import SymbolicTask, Task
from agentic_env.tasks.variants import Variant, VariantTask, make_variant


class EpisodeSchedule:
    """The events and the task of one episode.

    Args:
        base: the env's task, already reset.
        scene: privileged simulator access.
        events: the schedule.
        variant: the trial variant, or ``None`` for the task's own trial.

    Attributes:
        task: what the env scores with (a :class:`VariantTask` when there is a variant or a
            ``say`` event changes the goal).
        runner: fires the events.
    """

    def __init__(self, base: Task, scene: SceneState, events: list[EventSpec],
                 variant: Variant | None = None) -> None:
        self.variant = variant
        if variant is None and any(e.goal for e in events) and isinstance(base, SymbolicTask):
            variant = Variant("task", base.instruction().text, "act",
                              tuple(base.goal_facts()))
        self.task: Task = base if variant is None else VariantTask(base, variant)  # type: ignore[arg-type]
        self.runner = EventRunner(events, SimClock(scene), SimHands(scene))
        self._handled = 0

    @classmethod
    def for_kind(cls, kind: str, base: Task, scene: SceneState, seed: int,
                 events: list[EventSpec]) -> EpisodeSchedule:
        """The schedule of a fresh trial of ``kind`` (``"task"``: the task's own trial):
        the kind's events first, then ``events``.

        Raises:
            InvalidConfigError: an unknown kind, or one the trial cannot host.
        """
        if kind == "task":
            return cls(base, scene, events)
        variant, scheduled = make_variant(kind, base, scene,  # type: ignore[arg-type]
                                          np.random.default_rng([seed, 3]))
        return cls(base, scene, [*scheduled, *events], variant)

    def sync(self) -> None:
        """Apply the goal changes of the events fired since the last call."""
        applied = self.runner.applied
        for event in applied[self._handled:]:
            if event["kind"] == "say" and event["goal"] and isinstance(self.task, VariantTask):
                self.task.change_goal(list(event["goal"]))
        self._handled = len(applied)

    def info(self) -> dict[str, Any]:
        """``info`` entries: the applied events and the e-stop's state."""
        runner = self.runner
        return {"events": list(runner.applied),
                "estop": {"active": runner.estop, "refused": runner.refused}}


#: First word of a PDDL action -> the primitive that executes it.
PDDL_TO_PRIMITIVE = {"pick": "pick", "place": "place"}


def resolve_last(specs: list[DisturbanceSpec], reference: Callable[[], Sequence[PlanStep]] | None,
                 task: str) -> list[DisturbanceSpec]:
    """``specs`` with occurrence -1 ("the last") replaced by the count of that primitive in
    the reference plan (``reference()``; ``None`` when task ``task`` has none).

    Raises:
        InvalidConfigError: an occurrence -1 without a reference plan.
    """
    if not any(spec.occurrence == -1 for spec in specs):
        return specs
    if reference is None:
        raise InvalidConfigError(f"occurrence -1 needs a reference plan; task {task!r} has none")
    counts: dict[str, int] = {}
    for step in reference():
        primitive = PDDL_TO_PRIMITIVE.get(step.name.split("-")[0], step.name.replace("-", "_"))
        counts[primitive] = counts.get(primitive, 0) + 1
    return [replace(spec, occurrence=counts.get(spec.primitive, 1))
            if spec.occurrence == -1 else spec for spec in specs]
