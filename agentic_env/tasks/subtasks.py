"""Ground-truth subtask sequences (ALRM): a reference plan in natural language.

ALRM's planner issues one natural-language subtask per step, about one object ("Pick up the
lemon and place it in the bowl."), and its trace judge compares the executed subtasks with a
ground-truth sequence. :func:`subtasks_from_plan` writes that sequence from a PDDL plan: a
pick and the place of the same object that follows it become one subtask; a drawer opening or
closing is one of its own. :func:`ground_truth_subtasks` does it for a task's reference plan
(Fast Downward on the true problem), for the privileged harness.

Many orders of the subtasks solve a task ("all objects into the basket" in any order);
:func:`subtask_dependencies` keeps only the orderings the plan's PDDL conditions impose: a
subtask comes after one that makes a fact it needs true (the drawer's opening before putting
something in it), after one whose needs it destroys (putting something in the drawer before
closing it; placing the lower block before stacking on it), and after one whose effect it
overturns.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from agentic_env.pddl.planning import PlanStep, step_conditions
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import SymbolicTask
from agentic_env.tasks.symbolic import reference_plan, true_problem

#: A plan step's grounded (preconditions, effects) as PDDL literals, deletions as ``(not ...)``
#: (the form :func:`agentic_env.pddl.planning.step_conditions` gives).
Conditions = Callable[[PlanStep], tuple[Sequence[str], Sequence[str]]]

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


@dataclass(frozen=True)
class _NetEffect:
    """What a subtask's steps need from the state before them and change in it.

    Attributes:
        needs: facts that must hold before the subtask (not made true by its own steps).
        adds: facts true after it that were not true before it.
        deletes: facts true before it that are false after it.
    """

    needs: frozenset[str]
    adds: frozenset[str]
    deletes: frozenset[str]


def _net_effect(steps: Sequence[PlanStep], conditions: Conditions) -> _NetEffect:
    """The net effect of ``steps`` run in order (deletions applied before additions)."""
    needs: set[str] = set()
    added: set[str] = set()
    deleted: set[str] = set()
    for step in steps:
        preconditions, effects = conditions(step)
        needs |= {fact for fact in preconditions if fact not in added}
        for literal in effects:
            if literal.startswith("(not "):
                fact = literal.removeprefix("(not ").removesuffix(")").strip()
                if fact in added:
                    added.discard(fact)
                else:
                    deleted.add(fact)
        for literal in effects:
            if not literal.startswith("(not "):
                deleted.discard(literal)
                added.add(literal)
    return _NetEffect(frozenset(needs), frozenset(added - needs), frozenset(deleted))


def subtask_dependencies(subtasks: Sequence[Subtask],
                         conditions: Conditions) -> list[tuple[int, ...]]:
    """For each subtask of a plan, the earlier subtasks (0-based indices) it must follow.

    Subtask ``j`` depends on an earlier ``i`` when ``i`` makes true a fact ``j`` needs, ``j``
    makes false a fact ``i`` needs, or one overturns the other's effect (see the module
    docstring); facts a subtask needs and restores itself (``hand-empty`` around a pick and
    place) order nothing. Every other pair may run in either order.

    Args:
        subtasks: the plan's subtasks, in plan order (:func:`subtasks_from_plan`).
        conditions: a step's grounded preconditions and effects (e.g.
            :func:`agentic_env.pddl.planning.step_conditions` on the true problem).
    """
    effects = [_net_effect(subtask.steps, conditions) for subtask in subtasks]
    return [tuple(i for i, before in enumerate(effects[:j])
                  if before.adds & after.needs or after.deletes & before.needs
                  or before.adds & after.deletes or before.deletes & after.adds)
            for j, after in enumerate(effects)]


def ground_truth_dependencies(task: SymbolicTask, scene: SceneState,
                              subtasks: Sequence[Subtask]) -> list[tuple[int, ...]]:
    """:func:`subtask_dependencies` of ``subtasks`` (the task's ground truth from ``scene``,
    :func:`ground_truth_subtasks`) under the task's PDDL domain and its true problem."""
    domain, problem = true_problem(task, scene)
    return subtask_dependencies(subtasks, lambda step: step_conditions(domain, problem, step))
