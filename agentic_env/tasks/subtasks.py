"""Ground-truth subtask sequences (ALRM): a reference plan in natural language.

ALRM's planner issues one natural-language subtask per step, about one object ("Pick up the
lemon and place it in the bowl."), and its trace judge compares the executed subtasks with a
ground-truth sequence. :func:`subtasks_from_plan` writes that sequence from a PDDL plan: a
pick and the place of the same object that follows it become one subtask; a drawer opening or
closing is one of its own. :func:`ground_truth_subtasks` does it for a task's reference plan
(Fast Downward on the true problem), for the privileged harness.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentic_env.pddl.planning import PlanStep
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import SymbolicTask
from agentic_env.tasks.symbolic import reference_plan

#: Place actions -> how the destination is phrased (``{}``: the destination's words).
_PLACE_PHRASES: Mapping[str, str] = {
    "place-in": "in the {}",
    "place-in-drawer": "in the {}",
    "place-on-object": "on the {}",
    "place-in-slot": "in {}",
    "place-in-pose": "in the {} pose",
}
#: Drawer actions -> their verb.
_DRAWER_VERBS: Mapping[str, str] = {"open-drawer": "Open", "close-drawer": "Close"}


@dataclass(frozen=True)
class Subtask:
    """One ground-truth subtask: one object, one action, in words and as plan steps.

    Attributes:
        text: the subtask as ALRM's planner would say it.
        kind: ``pick_and_place``, ``pick``, ``place``, ``open`` or ``close``.
        obj: the PDDL object acted on.
        destination: where it goes (a PDDL object; ``table`` for the table top), or ``None``.
        steps: the PDDL steps it stands for.
    """

    text: str
    kind: str
    obj: str
    destination: str | None
    steps: tuple[PlanStep, ...]


def object_words(names: Sequence[str]) -> dict[str, str]:
    """Words for PDDL object names: ``red-cube-1`` -> ``red cube``, ``slot-3`` -> ``slot 3``.

    A first instance's ``-1`` is dropped unless another name has the same stem
    (``apple-1``, ``apple-2`` -> ``apple 1``, ``apple 2``); other numbers are kept.
    """
    bases = {name: re.sub(r"-\d+$", "", name) for name in names}
    shared = Counter(bases.values())
    return {name: (name if shared[bases[name]] > 1 else re.sub(r"-1$", "", name))
            .replace("-", " ").replace("_", " ") for name in names}


def _destination(step: PlanStep) -> str | None:
    if step.name == "place-on-table":
        return "table"
    return step.args[1] if len(step.args) > 1 else None


def _place_phrase(step: PlanStep, words: Mapping[str, str]) -> str:
    destination = _destination(step)
    if destination == "table":
        return "on the table"
    if destination is None:
        return "down"
    return _PLACE_PHRASES.get(step.name, "at the {}").format(words[destination])


def subtasks_from_plan(plan: Sequence[PlanStep],
                       words: Mapping[str, str] | None = None) -> list[Subtask]:
    """The plan as ALRM subtasks, one object each (see the module docstring).

    Args:
        plan: PDDL steps, in order.
        words: PDDL name -> words; names missing get :func:`object_words`.
    """
    named = {arg for step in plan for arg in step.args}
    words = {**object_words(sorted(named)), **(words or {})}
    subtasks: list[Subtask] = []
    index = 0
    while index < len(plan):
        step = plan[index]
        obj = step.args[0] if step.args else ""
        thing = words.get(obj, obj)
        following = plan[index + 1] if index + 1 < len(plan) else None
        if step.name.startswith("pick") and following is not None \
                and following.name.startswith("place") and following.args[:1] == (obj,):
            text = f"Pick up the {thing} and place it {_place_phrase(following, words)}."
            subtasks.append(Subtask(text, "pick_and_place", obj, _destination(following),
                                    (step, following)))
            index += 2
            continue
        if step.name in _DRAWER_VERBS:
            verb = _DRAWER_VERBS[step.name]
            subtasks.append(Subtask(f"{verb} the {thing}.", verb.lower(), obj, None, (step,)))
        elif step.name.startswith("pick"):
            subtasks.append(Subtask(f"Pick up the {thing}.", "pick", obj, None, (step,)))
        else:
            subtasks.append(Subtask(f"Place the {thing} {_place_phrase(step, words)}.",
                                    "place", obj, _destination(step), (step,)))
        index += 1
    return subtasks


def ground_truth_subtasks(task: SymbolicTask, scene: SceneState,
                          words: Mapping[str, str] | None = None) -> list[Subtask]:
    """The ground-truth subtasks of ``task`` from the state ``scene`` (its reference plan).

    Raises:
        PlanNotFoundError: the true problem has no plan.
    """
    every = object_words(sorted(task.pddl_objects()))
    return subtasks_from_plan(reference_plan(task, scene), {**every, **(words or {})})
