"""Scripted experts (privileged: they read the true sim state), one module per task, found
by task name.

As ManiSkill keeps its motion-planning solutions beside its envs (``MP_SOLUTIONS``), the
tasks never import their experts: each expert module imports its task (for annotations), and
:data:`EXPERTS` maps task names to expert classes by lazy ``"module:class"`` entry point
(:func:`register_expert` adds one). :func:`expert_for` builds a task instance's expert once
and keeps it while the task lives; :func:`expert_actions` and :func:`primitive_for` are the
calls the harness, the dataset recorder, the demos and the benchmarks use. Every PDDL task
but the crossword (which orders its own plan) runs the plan-execute-replan loop of
:mod:`agentic_env.experts.closed_loop`.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from agentic_env.entry_points import load_entry_point
from agentic_env.errors import InvalidConfigError
from agentic_env.pddl.planning import PlanStep
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import Task
from agentic_env.tasks.variants import VariantTask


class Expert(Protocol):
    """A task instance's scripted expert: built as ``ExpertClass(task)``."""

    def actions(self, scene: SceneState) -> Iterator[dict[str, Any]]:
        """Primitive actions that carry out the task from the true state, computed lazily
        (each from the state when it is requested)."""
        ...


@runtime_checkable
class PlanExpert(Expert, Protocol):
    """The expert of a :class:`~agentic_env.tasks.base.SymbolicTask`: it also grounds single
    PDDL plan steps."""

    def primitive_for(self, step: PlanStep, scene: SceneState) -> dict[str, Any]:
        """The primitive action that executes ``step`` with ground-truth poses."""
        ...


#: Task name (:attr:`Task.name <agentic_env.tasks.base.Task.name>`) -> ``"module:class"`` of
#: its expert; the class is called with the task instance.
EXPERTS: dict[str, str] = {
    "tabletop": "agentic_env.experts.tabletop:TabletopExpert",
    "stacking": "agentic_env.experts.stacking:StackingExpert",
    "crossword": "agentic_env.experts.crossword:CrosswordExpert",
    "reorientation": "agentic_env.experts.reorientation:ReorientationExpert",
    "sorting": "agentic_env.experts.sorting:SortingExpert",
    "sorting-cluttered": "agentic_env.experts.sorting:SortingExpert",
    "kitchen": "agentic_env.experts.kitchen:KitchenExpert",
}

#: Experts already built, by task instance (dropped with the task).
_BUILT: weakref.WeakKeyDictionary[Task, Expert] = weakref.WeakKeyDictionary()


def register_expert(task_name: str, entry_point: str) -> None:
    """Make ``entry_point`` (``"module:class"``, called with the task) the expert of the tasks
    named ``task_name``; it replaces a registered one."""
    EXPERTS[task_name] = entry_point


def expert_for(task: Task) -> Expert:
    """The scripted expert of ``task`` (of its base task for a
    :class:`~agentic_env.tasks.variants.VariantTask`, whose expert follows the base goal),
    built on first use and kept while the task lives (experts cache kinematics).

    Raises:
        InvalidConfigError: no expert is registered for the task's name; the message lists
            the tasks that have one.
    """
    if isinstance(task, VariantTask):
        task = task.base
    if task not in _BUILT:
        if task.name not in EXPERTS:
            raise InvalidConfigError(f"task {task.name!r} has no scripted expert; tasks with "
                                     f"one: {', '.join(sorted(EXPERTS))}")
        _BUILT[task] = load_entry_point(EXPERTS[task.name], f"expert of {task.name!r}")(task)
    return _BUILT[task]


def expert_actions(task: Task, scene: SceneState) -> Iterator[dict[str, Any]]:
    """Primitive actions of ``task``'s scripted expert from the true state ``scene``
    (e.g. ``expert_actions(env.task, env.scene_state)``), computed lazily."""
    return expert_for(task).actions(scene)


def primitive_for(task: Task, step: PlanStep, scene: SceneState) -> dict[str, Any]:
    """The primitive action that executes plan ``step`` of ``task`` with ground-truth poses.

    Raises:
        InvalidConfigError: the task's expert grounds no plan steps (not a PDDL task), or no
            expert is registered for it.
    """
    expert = expert_for(task)
    if not isinstance(expert, PlanExpert):
        raise InvalidConfigError(f"the expert of task {task.name!r} grounds no plan steps")
    return expert.primitive_for(step, scene)
