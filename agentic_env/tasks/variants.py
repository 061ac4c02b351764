"""Trial kinds on the existing symbolic tasks: ambiguous, impossible and conversational
instructions, and intervention scripts (a changed preference, an e-stop, a moved object).

:func:`make_variant` turns a freshly reset task and its true state into a :class:`Variant`
(what is said, what is expected of the robot, the goal facts) and the events the kind
schedules; :class:`VariantTask` is the task seen through it (instruction, goal facts, an
evaluation that accepts any of the ambiguous alternatives, a goal that a ``say`` event can
change). Expected behaviours:

* ``act``: the goal facts must hold at the end;
* ``refuse`` (an impossible instruction) and ``answer`` (a question): the scene must stay as
  it was (the goal facts are its resting facts) and, for the harness, no motion is made.

Privileged (reads the simulator's truth): the env and the harness use it, never an agent.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from agentic_env.contract.events import EventSpec
from agentic_env.errors import InvalidConfigError
from agentic_env.pddl.planning import PDDLError, PlanNotFoundError
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import SymbolicTask, TaskEvaluation
from agentic_env.tasks.instructions import Instruction
from agentic_env.tasks.symbolic import reference_plan

#: Trial kinds and the behaviour each expects.
KINDS: dict[str, str] = {"ambiguous": "act", "impossible": "refuse",
                         "conversational": "answer", "preference": "act", "estop": "act",
                         "moved_object": "act"}
#: Instructions no robot arm at a table can carry out.
IMPOSSIBLE = ("Fly to the window.", "Put the table in the bin.",
              "Drive to the kitchen and bring me a coffee.", "Lift the table over your head.")
#: Questions about the scene.
QUESTIONS = ("What is on the table?", "How many objects can you see?",
             "Which objects are in front of you?")
#: Ambiguous descriptions of a catalogue object: (words, fitting kinds or categories).
DESCRIPTIONS: tuple[tuple[str, frozenset[str]], ...] = (
    ("any tool I could tighten a screw with", frozenset({"screwdriver"})),
    ("something I could write a note with", frozenset({"marker"})),
    ("anything a child could play with", frozenset({"toy"})),
    ("something I could eat", frozenset({"fruit", "food"})),
    ("anything I could build a tower with", frozenset({"block"})),
)
#: The e-stop script: pressed at the first motion request (the planner-executor's first pick
#: primitive), released this many simulated seconds later.
ESTOP_AT, ESTOP_FOR_S = 1, 4.0
#: A changed preference is spoken just before this primitive request.
PREFERENCE_AT = 2
#: A person moves an object just before this primitive request, by this much (metres).
MOVE_AT, MOVE_SHIFT = 3, (0.0, 0.06)
#: Facts that say where an object rests (the first argument is the object).
_RESTING = ("on-table", "in", "on-top-of", "in-drawer", "in-slot", "in-pose")


@dataclass(frozen=True)
class Variant:
    """What a trial of a kind asks and expects.

    Attributes:
        kind: one of :data:`KINDS`.
        instruction: what the operator says first.
        expect: ``act``, ``refuse`` or ``answer``.
        goal: the goal facts (for ``refuse``/``answer``: the facts that must stay true).
        alternatives: further goal fact sets that count as success (ambiguous references).
    """

    kind: str
    instruction: str
    expect: str
    goal: tuple[str, ...]
    alternatives: tuple[tuple[str, ...], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {**asdict(self), "goal": list(self.goal),
                "alternatives": [list(a) for a in self.alternatives]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Variant:
        """Inverse of :meth:`to_dict`."""
        return cls(data["kind"], data["instruction"], data["expect"], tuple(data["goal"]),
                   tuple(tuple(a) for a in data.get("alternatives", ())))


class VariantTask:
    """``base`` seen through ``variant``: the instruction, goal facts and evaluation change;
    the scene and facts are the base task's, and so is the scripted expert
    (:func:`agentic_env.experts.expert_for` uses the base task's, which follows the base
    goal)."""

    def __init__(self, base: SymbolicTask, variant: Variant) -> None:
        self.base, self.variant = base, variant
        self.name, self.domain = base.name, base.domain
        self._goal = list(variant.goal)
        self._alternatives = [list(a) for a in variant.alternatives]

    def change_goal(self, facts: list[str]) -> None:
        """A changed preference: ``facts`` are the goal from now on."""
        self._goal, self._alternatives = list(facts), []

    def build(self, builder: SceneBuilder) -> None:
        """Delegated to the base task."""
        self.base.build(builder)

    def reset(self, scene: SceneState, rng: np.random.Generator,
              instruction_category: str | None) -> None:
        """Delegated to the base task."""
        self.base.reset(scene, rng, instruction_category)

    def trial_state(self) -> dict[str, Any]:
        """The base task's state."""
        return self.base.trial_state()

    def apply_trial(self, scene: SceneState, trial: Any) -> None:
        """Delegated to the base task."""
        self.base.apply_trial(scene, trial)

    def goal(self) -> dict[str, Any]:
        """The base task's structured goal (the variant is stored beside it)."""
        return self.base.goal()

    def instruction(self) -> Instruction:
        """The variant's instruction (the base task's paraphrase category)."""
        return Instruction(self.variant.instruction, self.base.instruction().category)

    def pddl_objects(self) -> dict[str, str]:
        """The base task's objects."""
        return self.base.pddl_objects()

    def facts(self, scene: SceneState) -> set[str]:
        """The base task's true facts."""
        return self.base.facts(scene)

    def goal_facts(self) -> list[str]:
        """The current goal facts."""
        return list(self._goal)

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """Success when the goal facts, or one set of alternatives, all hold; progress and
        terms of the best set."""
        facts = self.base.facts(scene)
        sets = [self._goal, *self._alternatives]
        best = max(sets, key=lambda s: sum(f in facts for f in s) / max(len(s), 1))
        terms = {f: float(f in facts) for f in best}
        progress = sum(terms.values()) / len(terms) if terms else 1.0
        return TaskEvaluation(all(f in facts for f in best), progress, terms)


def words(name: str) -> str:
    """An identifier in words: ``rubber-duck-1`` -> ``rubber duck``."""
    return re.sub(r"-\d+$", "", name).replace("-", " ")


def make_variant(kind: str, task: SymbolicTask, scene: SceneState,
                 rng: np.random.Generator) -> tuple[Variant, list[EventSpec]]:
    """The variant of ``kind`` for the task's current trial, and the events it schedules.

    Raises:
        InvalidConfigError: an unknown kind, or one this trial cannot host (e.g. no second
            object for a changed preference).
    """
    if kind not in KINDS:
        raise InvalidConfigError(f"unknown trial kind {kind!r}; valid: task, "
                                 f"{', '.join(KINDS)}")
    facts = task.facts(scene)
    resting = tuple(sorted(f for f in facts if f.split()[0] in _RESTING))
    goal = tuple(task.goal_facts())
    text = task.instruction().text
    if kind == "impossible":
        return Variant(kind, str(rng.choice(IMPOSSIBLE)), "refuse", resting), []
    if kind == "conversational":
        return Variant(kind, str(rng.choice(QUESTIONS)), "answer", resting), []
    if kind == "estop":
        return Variant(kind, text, "act", goal), [
            EventSpec("estop", at_primitive=ESTOP_AT),
            EventSpec("estop_release", at_time=ESTOP_FOR_S, after_previous=True)]
    if kind == "moved_object":
        picked = _picked(task, scene)
        target = picked[min(1, len(picked) - 1)]
        return Variant(kind, text, "act", goal), [
            EventSpec("move_object", at_primitive=MOVE_AT, body=target, shift=MOVE_SHIFT)]
    first = next((f for f in goal if f.split()[0] not in ("on-table",)), None)
    if first is None:
        raise InvalidConfigError(f"trial kind {kind!r}: the goal {goal} moves nothing")
    predicate, obj, *where = first.split()
    others = _alike(task, facts, obj)
    if kind == "ambiguous":
        description, fitting = _description(task, facts, obj)
        alternatives = tuple((" ".join([predicate, o, *where]),) for o in fitting if o != obj)
        said = f"Put {description} {_preposition(predicate)} the {words(where[0])}."
        return Variant(kind, said, "act", (first,), alternatives), []
    said = f"Put the {words(obj)} {_preposition(predicate)} the {words(where[0])}."
    for other in [str(o) for o in rng.permutation(others)] if others else []:
        rest = [f for f in resting if f in (f"on-table {obj}", f"on-top-of {obj} table")]
        new_goal = (" ".join([predicate, other, *where]), *rest)
        if _plannable(task, scene, list(new_goal)):
            change = f"Use the {words(other)} instead" + (
                f", and leave the {words(obj)} where it was." if rest else ".")
            return Variant(kind, said, "act", (first,)), [
                EventSpec("say", at_primitive=PREFERENCE_AT, text=change, goal=new_goal)]
    raise InvalidConfigError(f"trial kind {kind!r}: no second object like {obj} can take "
                             "its place")


def _plannable(task: SymbolicTask, scene: SceneState, goal: list[str]) -> bool:
    try:
        reference_plan(task, scene, goal)
    except (PlanNotFoundError, PDDLError):
        return False
    return True


def _preposition(predicate: str) -> str:
    return "on" if predicate == "on-top-of" else "in"


def _picked(task: SymbolicTask, scene: SceneState) -> list[str]:
    """The objects the reference plan picks, in order."""
    picks = [s.args[0] for s in reference_plan(task, scene) if s.name.startswith("pick")]
    if not picks:
        raise InvalidConfigError("this trial's reference plan picks nothing")
    return picks


def _alike(task: SymbolicTask, facts: set[str], obj: str) -> list[str]:
    """Other objects of ``obj``'s PDDL type (its last word: any ``*-cube``) that rest
    somewhere in the scene."""
    types = {name: kind.split("-")[-1] for name, kind in task.pddl_objects().items()}
    resting = {f.split()[1] for f in facts if f.split()[0] in _RESTING}
    return sorted(o for o in resting if o != obj and types.get(o) == types.get(obj))


def _description(task: SymbolicTask, facts: set[str], obj: str) -> tuple[str, list[str]]:
    """Ambiguous words for ``obj`` and every object on the table they fit (``obj``
    first)."""
    items = getattr(task, "items", {})
    entry = items.get(obj)
    if entry is not None:
        for description, labels in DESCRIPTIONS:
            if {entry.kind, entry.category} & labels:
                fitting = [o for o in [obj, *_alike(task, facts, obj)] if o in items
                           and {items[o].kind, items[o].category} & labels]
                return description, fitting
    kind = words(obj).split()[-1]
    return f"any {kind}", [obj, *_alike(task, facts, obj)]
