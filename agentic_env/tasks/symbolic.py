"""The bridge between the sim and PDDL: reference plans, executed steps, progress scores.

* :func:`reference_plan` solves the *true* problem (facts from the sim, the task's goal) with
  Fast Downward; the scripted experts (:mod:`agentic_env.experts`) execute it and the
  progress score compares against it.
* :func:`infer_step` names the PDDL action a primitive actually performed, from the true
  facts before and after it (e.g. ``holding x`` appeared and ``on-top-of x y`` disappeared:
  ``(pick x y)``), so any agent's execution can be scored the same way.
* :class:`EpisodeScorer` accumulates the executed steps of an episode and computes the
  AgenticLab task progress score.
"""

from __future__ import annotations

from agentic_env.pddl.planning import PlanStep, load_domain, problem_text, solve
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import SymbolicTask
from agentic_env.tasks.score import ProgressScore, progress_score

#: Facts a pick removes -> the PDDL action that names the pick (args: object, then source).
_PICK_SOURCES: dict[str, str] = {
    "on-top-of": "pick",
    "in": "pick-from",
    "in-drawer": "pick-from-drawer",
    "in-slot": "pick-from-slot",
    "in-pose": "pick",
    "on-table": "pick",
}
#: Facts a place adds -> the PDDL action that names the place (args: object, then target).
_PLACE_TARGETS: dict[str, str] = {
    "on-top-of": "place-on-object",
    "in": "place-in",
    "in-drawer": "place-in-drawer",
    "in-slot": "place-in-slot",
    "in-pose": "place-in-pose",
    "on-table": "place-on-table",
}
#: Control periods between two :meth:`EpisodeScorer.record` calls when an agent drives the
#: arm low-level (0.25 s at 20 Hz): far shorter than any pick or place, so no step is missed.
RECORD_PERIOD = 5


def _split(fact: str) -> tuple[str, ...]:
    return tuple(fact.strip("()").split())


def infer_step(before: set[str], after: set[str]) -> PlanStep | None:
    """The PDDL step that turned ``before`` into ``after``, or ``None`` if nothing changed.

    Facts are strings like ``"on-top-of a b"``. Recognised changes: a pick (``holding x``
    appears), a place (``holding x`` disappears), a drawer opening or closing.
    """
    added = [_split(f) for f in after - before]
    removed = [_split(f) for f in before - after]
    for fact in added:
        if fact[0] == "holding":
            obj = fact[1]
            for old in removed:
                if len(old) >= 2 and old[1] == obj and old[0] in _PICK_SOURCES:
                    return PlanStep(_PICK_SOURCES[old[0]], (obj, *old[2:]))
            return PlanStep("pick", (obj,))
        if fact[0] == "drawer-open":
            return PlanStep("open-drawer", fact[1:])
    for fact in removed:
        if fact[0] == "holding":
            obj = fact[1]
            for new in added:
                if len(new) >= 2 and new[1] == obj and new[0] in _PLACE_TARGETS:
                    return PlanStep(_PLACE_TARGETS[new[0]], (obj, *new[2:]))
            return PlanStep("place", (obj,))
        if fact[0] == "drawer-open":
            return PlanStep("close-drawer", fact[1:])
    return None


def true_problem(task: SymbolicTask, scene: SceneState,
                 goal: list[str] | None = None) -> tuple[str, str]:
    """(domain, problem) PDDL texts of the current true state and ``goal`` (default: the
    task's goal facts)."""
    domain = load_domain(task.domain)
    problem = problem_text(task.domain, f"{task.name}-true", task.pddl_objects(),
                           sorted(task.facts(scene)),
                           task.goal_facts() if goal is None else goal)
    return domain, problem


def reference_plan(task: SymbolicTask, scene: SceneState,
                   goal: list[str] | None = None) -> list[PlanStep]:
    """Fast Downward's plan for the true problem of the current state (to ``goal``, default
    the task's goal facts)."""
    return solve(*true_problem(task, scene, goal))


class EpisodeScorer:
    """Executed PDDL steps of one episode and its AgenticLab progress score.

    Create it once the episode's initial state has settled; call :meth:`record` after every
    primitive, or every :data:`RECORD_PERIOD` control periods of low-level control.
    """

    def __init__(self, task: SymbolicTask, scene: SceneState) -> None:
        self._task = task
        self._start_facts = task.facts(scene)
        self._facts = set(self._start_facts)
        self._reference: list[PlanStep] | None = None
        self.executed: list[PlanStep] = []

    def reference(self) -> list[PlanStep]:
        """The reference plan from the episode's initial state (solved on first use)."""
        if self._reference is None:
            task = self._task
            problem = problem_text(task.domain, f"{task.name}-reference", task.pddl_objects(),
                                   sorted(self._start_facts), task.goal_facts())
            self._reference = solve(load_domain(task.domain), problem)
        return self._reference

    def record(self, scene: SceneState) -> PlanStep | None:
        """Compare the state with the last recorded one; log and return the executed step."""
        facts = self._task.facts(scene)
        step = infer_step(self._facts, facts)
        self._facts = facts
        if step is not None:
            self.executed.append(step)
        return step

    def score(self, goal_checker_error: bool = False) -> ProgressScore:
        """Progress score of the executed steps against the reference plan."""
        return progress_score(self.executed, self.reference(), goal_checker_error)
