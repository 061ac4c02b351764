"""AgenticLab's mapping of PDDL actions onto the named-object :class:`~agentic_env.agents.
runtime.Manipulator`.

``pick*`` -> a pick (a turning pick when a later ``place-in-pose`` needs it), ``place*`` -> a
place whose mode the action names (``place-in`` a container, ``place-in-drawer``,
``place-in-slot``, ``place-on-object`` with faces aligned, ``place-on``, ``place-on-table``,
``place-in-pose`` turned), ``open-drawer`` / ``close-drawer`` -> the drawer motions. A step
that cannot be grounded blames the module at fault (``detector``, ``grasp``) or
``execution``.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentic_env.agents.runtime import Episode, Manipulator, Place
from agentic_env.agents.runtime.listing import Kind
from agentic_env.agents.skills import SkillResult
from agentic_env.pddl.planning import PlanStep

#: Place mode of each place action (``place-in-pose`` turns instead).
PLACE_MODES = {"place-in": Place.IN, "place-in-drawer": Place.DRAWER,
               "place-in-slot": Place.SLOT, "place-on-object": Place.ON,
               "place-on-table": Place.TABLE}


class GroundingError(Exception):
    """A step could not be grounded; ``source`` names the module to blame."""

    def __init__(self, source: str, detail: str) -> None:
        super().__init__(detail)
        self.source = source


class StepRunner:
    """Runs plan steps through the manipulator and books their failures in the episode.

    Args:
        episode: the episode's robot access and report.
        hands: the named-object manipulator (its detector and grasp judgement are the
            agent's modules).
    """

    def __init__(self, episode: Episode, hands: Manipulator) -> None:
        self.episode, self.hands = episode, hands

    def execute(self, step: PlanStep, plan: list[PlanStep],
                kinds: Mapping[str, Kind] | None = None) -> bool:
        """Ground and run ``step`` of ``plan``; ``False`` when it could not be done (the
        failure is in the report). ``kinds``: what the parser said each object is (a place
        onto the object it typed ``table`` sets the held object down on the table)."""
        name = step.name.lower()
        try:
            if name.startswith("pick"):
                return self._booked(self._pick(step, plan))
            if name.startswith("place"):
                return self._booked(self._place(step, kinds or {}))
            if name in ("open-drawer", "close-drawer"):
                return self._booked(self.hands.move_drawer(
                    step.args[0], name == "open-drawer", why=str(step)))
        except GroundingError as exc:
            self.episode.fail_first(exc.source, str(exc))
            self.episode.event("grounding_failed", step=str(step), source=exc.source,
                               detail=str(exc))
            return False
        self.episode.fail_first("parser", f"the plan uses action {step.name!r}, which has "
                                "no primitive")
        self.episode.event("unknown_action", step=str(step))
        return False

    def _booked(self, result: SkillResult) -> bool:
        """Book a manipulator result: recovered failures, then a grounding failure (the
        detector's or the grasp judgement's) raised, or the robot's failure recorded."""
        for failure in result.data.get("failures", ()):
            self.episode.fail_first("execution", failure)
        if result.ok:
            return True
        blame = result.data.get("blame", "execution")
        if blame != "execution" or result.data.get("look"):
            raise GroundingError(blame, result.message)
        self.episode.fail_first("execution", result.message)
        return False

    def _pick(self, step: PlanStep, plan: list[PlanStep]) -> SkillResult:
        """Pick ``step``'s object; an object a later step places in a pose is picked so the
        wrist can turn it."""
        later = plan[plan.index(step) + 1:] if step in plan else []
        for other in later:
            if other.name.lower() == "place-in-pose" and other.args[0] == step.args[0]:
                return self.hands.pick_to_turn(step.args[0], other.args[1], why=str(step))
        drawer = step.args[1] if step.name.lower() == "pick-from-drawer" and len(
            step.args) > 1 else None
        return self.hands.pick(step.args[0], from_drawer=drawer, why=str(step))

    def _place(self, step: PlanStep, kinds: Mapping[str, Kind]) -> SkillResult:
        name, held = step.name.lower(), step.args[0]
        if name == "place-in-pose":
            return self.hands.place_turned(held, step.args[1], str(step))
        where = step.args[1] if len(step.args) > 1 else None
        if where is not None and kinds.get(where) == Kind.TABLE:
            where = None
        mode = PLACE_MODES.get(name, Place.ON_LOOSE)
        return self.hands.place(held, mode if where is not None else Place.TABLE, where,
                                why=str(step))
