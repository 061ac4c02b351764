"""AgenticLab's plan steps: what a place does follows the parser's typed answer, never the
spelling of a name."""

from __future__ import annotations

from typing import Any

from agentic_env.agents.agenticlab.steps import StepRunner
from agentic_env.agents.runtime import Place
from agentic_env.agents.runtime.listing import Kind
from agentic_env.agents.skills.result import SkillResult, ok
from agentic_env.pddl.planning import PlanStep


class _Hands:
    """Records the places asked of it."""

    def __init__(self) -> None:
        self.places: list[tuple[str, Place, str | None]] = []

    def place(self, held: str, mode: Place, where: str | None, why: str = "") -> SkillResult:
        self.places.append((held, mode, where))
        return ok("placed")


class _Episode:
    def fail_first(self, source: str, detail: str) -> None:
        raise AssertionError(f"{source}: {detail}")

    def event(self, kind: str, **details: Any) -> None:
        pass


def _placed(step: PlanStep, kinds: dict[str, Kind]) -> tuple[str, Place, str | None]:
    hands = _Hands()
    assert StepRunner(_Episode(), hands).execute(step, [step], kinds)  # type: ignore[arg-type]
    return hands.places[0]


def test_a_place_onto_what_the_parser_typed_the_table_sets_the_object_down() -> None:
    step = PlanStep("place-on-object", ("green-cube-1", "wooden-tabletop"))
    assert _placed(step, {"wooden-tabletop": Kind.TABLE}) == ("green-cube-1", Place.TABLE, None)


def test_an_object_named_table_but_typed_a_surface_is_placed_onto() -> None:
    step = PlanStep("place-on-object", ("green-cube-1", "table"))
    assert _placed(step, {"table": Kind.SURFACE}) == ("green-cube-1", Place.ON, "table")
    assert _placed(step, {}) == ("green-cube-1", Place.ON, "table")  # no kind: no guess
