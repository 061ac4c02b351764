"""Per-object outcomes of an episode: which objects the goal was about and where they ended.

The harness computes them at the episode's end from the task's goal facts and the simulator's
final state (privileged; agents never see them), so results can be tabled by object set
(fruit, food, blocks, toys, tools): :class:`~agentic_env.harness.episode.ObjectOutcome` in
:attr:`EpisodeResult.objects <agentic_env.harness.episode.EpisodeResult.objects>`, stored as
the episodes table's ``objects_json`` column, checked by the findings metric
``object_success`` (:mod:`agentic_env.harness.findings`) and tabled by the report
(:mod:`agentic_env.reports.objects`).

A goal fact is about its first argument, the object it places (``in apple-1 white-bin``,
``on-top-of red-cube-1 blue-plate-1``, ``in-slot block-3 slot-2``); fixtures (containers,
plates, slots, the drawer) are not listed, only free bodies. Whether a fact holds is the
task's own score of it (:meth:`Task.evaluate <agentic_env.tasks.base.Task.evaluate>` terms,
e.g. sorting's strict ``on-table``, the ambiguous-reference variant's best alternative); a
task whose terms are not goal facts names the term that scores each fact
(``goal_fact_terms()``, the crossword: any block of the slot's letter fills it), else the
task's true facts decide.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agentic_env.harness.episode import ObjectOutcome
from agentic_env.sim.state import free_body_names
from agentic_env.tasks.base import SymbolicTask, TaskEvaluation
from agentic_env.tasks.catalogue import CATALOGUE, CatalogueEntry

if TYPE_CHECKING:
    from agentic_env.sim.state import SceneState

#: The object set of each catalogue category (:data:`agentic_env.tasks.catalogue.CATEGORIES`):
#: the small set of names that results are tabled by. Toy blocks are ``blocks``, apart from
#: the other toys (the sorting rules pool them as toys: :data:`~agentic_env.tasks.sorting.
#: rules.CLASSES`), so that cubes of every task compare with one another. An object without
#: a catalogue entry takes its own set from :data:`PROP_SETS`, else its task's from
#: :data:`TASK_SETS`, else :data:`OTHER`.
CATEGORY_SETS: dict[str, str] = {
    "fruit": "fruit",
    "food": "food",
    "block": "blocks",
    "toy": "toys",
    "tool": "tools",
}
#: Object set of a task's objects that have no catalogue entry: the stacking cubes and the
#: crossword's letter blocks.
TASK_SETS: dict[str, str] = {"stacking": "blocks", "crossword": "blocks"}
#: Object set of the kitchen's own props that have no catalogue entry
#: (:mod:`agentic_env.tasks.kitchen.props`), by name without its index: its food (the spice
#: bottle, the chicken leg, the tomato). The sponge is in none of the sets.
PROP_SETS: dict[str, str] = {"spice-bottle": "food", "chicken-leg": "food", "tomato": "food"}
#: The set of an object found in none of these (the sponge, the reorientation task's
#: bottles, boxes and mugs).
OTHER = "other"
#: Every object set, in the order reports show them.
OBJECT_SETS: tuple[str, ...] = ("fruit", "food", "blocks", "toys", "tools", OTHER)


def catalogue_entry(name: str) -> CatalogueEntry | None:
    """The catalogue entry a body is an instance of, ``None`` when none.

    The body name without its index (``apple-1`` -> ``apple``) is a catalogue kind, or ends
    with one after a ``-`` (the kitchen's ``blue-snack-pack-1`` is a ``snack-pack``; the
    longest such kind wins).
    """
    stem = _stem(name)
    if stem in CATALOGUE:
        return CATALOGUE[stem]
    ending = [kind for kind in CATALOGUE if stem.endswith(f"-{kind}")]
    return CATALOGUE[max(ending, key=len)] if ending else None


def _stem(name: str) -> str:
    """A body's name without its index (``apple-1`` -> ``apple``)."""
    return re.sub(r"-\d+$", "", name)


def object_set(task: str, name: str) -> tuple[str, str | None]:
    """The object set (:data:`OBJECT_SETS`) and catalogue kind (``None`` if none) of body
    ``name`` in task ``task`` (see :data:`CATEGORY_SETS`)."""
    entry = catalogue_entry(name)
    if entry is not None:
        return CATEGORY_SETS.get(entry.category, OTHER), entry.kind
    prop = PROP_SETS.get(_stem(name))
    return prop or TASK_SETS.get(task, OTHER), None


def goal_truth(task: SymbolicTask, scene: SceneState,
               evaluation: TaskEvaluation | None = None) -> dict[str, bool]:
    """Each goal fact -> it holds in ``scene``, as the task scores it (module docstring).

    Args:
        task: the episode's task (a variant's goal is its current one).
        scene: the simulator state.
        evaluation: ``task.evaluate(scene)`` if the caller has it.
    """
    evaluation = evaluation or task.evaluate(scene)
    terms = evaluation.terms
    names = task.pddl_objects()
    if terms and all(_is_fact(key, names) for key in terms):
        return {fact: value > 0.5 for fact, value in terms.items()}
    named = getattr(task, "goal_fact_terms", None)
    scored_by: dict[str, str] = named() if callable(named) else {}
    true: set[str] | None = None
    out = {}
    for fact in task.goal_facts():
        term = scored_by.get(fact)
        if term in terms:
            out[fact] = terms[str(term)] > 0.5
            continue
        true = task.facts(scene) if true is None else true
        out[fact] = fact in true
    return out


def _is_fact(text: str, names: dict[str, str]) -> bool:
    """``text`` is a ground fact over the task's PDDL objects (``in apple-1 bowl``)."""
    words = text.split()
    return len(words) >= 2 and all(word in names for word in words[1:])


def start_facts(task: object, scene: SceneState) -> frozenset[str] | None:
    """The task's true facts in ``scene`` (taken as an episode starts, for
    :func:`object_outcomes`), ``None`` for a task without a PDDL model."""
    return frozenset(task.facts(scene)) if isinstance(task, SymbolicTask) else None


def object_outcomes(task: object, scene: SceneState,
                    start_facts: frozenset[str] | set[str] | None = None,
                    evaluation: TaskEvaluation | None = None) -> tuple[ObjectOutcome, ...]:
    """Where each free body that a goal fact places ended, in the goal facts' order (``()``
    for a task without a PDDL model).

    Args:
        task: the episode's task.
        scene: the final simulator state.
        start_facts: ``task.facts(scene)`` at the episode's start, to tell the objects
            whose goal facts held from the start (``None``: none counts as such).
        evaluation: ``task.evaluate(scene)`` if the caller has it.
    """
    if not isinstance(task, SymbolicTask):
        return ()
    truth = goal_truth(task, scene, evaluation)
    movable = set(free_body_names(scene.model))
    about: dict[str, list[str]] = {}
    for fact in truth:
        words = fact.split()
        if len(words) >= 2 and words[1] in movable:
            about.setdefault(words[1], []).append(fact)
    out = []
    for name, facts in about.items():
        met = sum(truth[f] for f in facts)
        group, kind = object_set(task.name, name)
        at_start = start_facts is not None and all(f in start_facts for f in facts)
        out.append(ObjectOutcome(name, group, kind, placed=met == len(facts),
                                 met_at_start=at_start, facts=tuple(facts), met=met))
    return tuple(out)
