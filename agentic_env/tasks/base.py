"""What a task provides to the sim env: props, reset sampling, privileged scoring.

Tasks are plain objects composed into :class:`agentic_env.envs.sim_env.SimEnv`; they read
privileged simulator state only in :meth:`Task.reset` and :meth:`Task.evaluate` (used by the
env and the harness, never by agents). Their scripted experts live in
:mod:`agentic_env.experts`, found by task name: a task never imports its expert.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import SceneState

if TYPE_CHECKING:
    from agentic_env.contract.trial import TrialSpec
    from agentic_env.tasks.instructions import Instruction


@dataclass(frozen=True)
class TaskEvaluation:
    """Privileged score of the current state.

    Attributes:
        success: the goal holds.
        progress: fraction of the goal predicates satisfied, 0..1.
        terms: named components of the score (logged separately), e.g. one per goal predicate.
    """

    success: bool
    progress: float
    terms: dict[str, float] = field(default_factory=dict)

    @property
    def satisfied(self) -> int:
        """Number of goal predicates satisfied."""
        return int(sum(value > 0.5 for value in self.terms.values()))

    @property
    def total(self) -> int:
        """Number of goal predicates."""
        return len(self.terms)


class Task(Protocol):
    """A benchmark task: see :class:`agentic_env.tasks.stacking.StackingTask` for an example.

    The env calls :meth:`build` once, then per episode either :meth:`reset` (sample a new
    trial) or :meth:`apply_trial` (rebuild a recorded one), and :meth:`evaluate` after every
    step. Free objects are placed by :meth:`reset`; the env records and restores their poses
    itself, so :meth:`apply_trial` only restores what :meth:`trial_state` returned.
    """

    name: str

    def build(self, builder: SceneBuilder) -> None:
        """Add the task's props to the scene (called once per env)."""
        ...

    def reset(
        self, scene: SceneState, rng: np.random.Generator, instruction_category: str | None
    ) -> None:
        """Sample the layout, the goal and the instruction (before physics settles)."""
        ...

    def trial_state(self) -> dict[str, Any]:
        """JSON-ready task state beyond object poses (fixture poses, goal details...)."""
        ...

    def apply_trial(self, scene: SceneState, trial: TrialSpec) -> None:
        """Restore the goal, instruction and :meth:`trial_state` of a recorded trial."""
        ...

    def goal(self) -> dict[str, Any]:
        """The structured goal of the episode (JSON-ready)."""
        ...

    def instruction(self) -> Instruction:
        """The language instruction of the current episode."""
        ...

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """Privileged score of the current state."""
        ...


@runtime_checkable
class SymbolicTask(Task, Protocol):
    """A task with a PDDL model: true facts from the sim and a goal.

    ``domain`` names a file ``assets/pddl/<domain>.pddl``. The task's scripted expert
    (:func:`agentic_env.experts.expert_for`) solves the true problem with Fast Downward and
    grounds each plan step (:func:`agentic_env.experts.primitive_for`).
    """

    domain: str

    def pddl_objects(self) -> dict[str, str]:
        """PDDL object name -> type, for every object and fixture of the problem."""
        ...

    def facts(self, scene: SceneState) -> set[str]:
        """True ground facts of the current state, e.g. ``"on-top-of red-cube blue-cube"``."""
        ...

    def goal_facts(self) -> list[str]:
        """Ground facts the goal requires."""
        ...
