"""The closed-loop scripted expert shared by the PDDL tasks: plan, execute, replan.

Each task's expert (:mod:`agentic_env.experts.kitchen`, ...) grounds plan steps as primitive
actions (its ``primitive_for``); this loop decides which step comes next.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from agentic_env.pddl.planning import PlanNotFoundError, PlanStep
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import SymbolicTask
from agentic_env.tasks.symbolic import infer_step, reference_plan


def closed_loop_actions(
    task: SymbolicTask, scene: SceneState,
    ground: Callable[[PlanStep, SceneState], dict[str, Any]], max_replans: int = 5,
) -> Iterator[dict[str, Any]]:
    """Closed-loop scripted expert: execute the reference plan, replan when a step fails.

    Each step is grounded by ``ground`` (an expert's ``primitive_for``) when its action is
    requested, from the state at that moment. After each action the true facts are compared
    with the planned step (:func:`infer_step`); on a mismatch (a misgrasp, a moved target)
    the plan is solved again from the current state, at most ``max_replans`` times.
    """
    try:
        plan = reference_plan(task, scene)
        replans = 0
        while plan:
            step = plan.pop(0)
            before = task.facts(scene)
            yield ground(step, scene)
            if infer_step(before, task.facts(scene)) != step:
                if replans == max_replans:
                    return
                replans += 1
                plan = reference_plan(task, scene)
    except PlanNotFoundError:  # e.g. an object knocked off the workspace: give up
        return
