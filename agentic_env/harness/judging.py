"""ALRM's trace judge beside the world state, for agents that report subtasks.

The episode evaluation ``alrm-judge`` (:class:`TraceJudge`, declared by ALRM's registration;
see :mod:`agentic_env.harness.evaluations`): at the start of an episode :func:`ground_truth`
writes the task's ground-truth subtask sequence (its reference plan from the true initial
state). At the end, when the agent's report holds ``subtask`` events (ALRM's planner),
:func:`judge_episode` has a panel of three judges score the executed sequence 0/1/2 against it
(majority, mean when all differ); the harness stores that score with the episode
(``judge_score``) next to the simulator's success, so the judge-world disagreement can be
counted per category and mode.

The judges answer through the episode's ``judge`` model (``--modules judge=...``, else
``--model``): with the sim-oracle, three simulator-free oracle judges with the spec's judge
error rate and distinct seeds; any other model spec judges three times. Judge calls are the
harness's evaluation, not the agent's: they are not counted in the episode's tokens.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from agentic_env.agents.alrm.judge import build_judge, judge_with_panel
from agentic_env.agents.base import AgentReport
from agentic_env.agents.models.base import ModelError
from agentic_env.agents.models.registry import parse_model_spec
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.evaluations import EpisodeEvaluation
from agentic_env.oracle import OracleJudge
from agentic_env.pddl.planning import PlanNotFoundError
from agentic_env.tasks.base import SymbolicTask
from agentic_env.tasks.subtasks import ground_truth_subtasks

logger = logging.getLogger(__name__)
#: Judges per panel (ALRM: three).
PANEL_SIZE = 3


def ground_truth(env: SimEnv) -> list[str] | None:
    """The ground-truth subtasks of ``env``'s task from its state now (``None``: the task
    has no PDDL model or no plan)."""
    if not isinstance(env.task, SymbolicTask):
        return None
    try:
        return [s.text for s in ground_truth_subtasks(env.task, env.scene_state)]
    except PlanNotFoundError:
        return None


def executed_subtasks(report: AgentReport) -> list[str] | None:
    """The subtasks the agent reports as carried out, in order (``None``: it reports none)."""
    steps = [e for e in report.events if e.get("kind") == "subtask"]
    if not steps:
        return None
    return [str(e["subtask"]) for e in steps if e.get("ok")]


def judge_episode(spec: EpisodeSpec, instruction: str, truth: Sequence[str] | None,
                  report: AgentReport) -> float | None:
    """The panel's score (0..2) of the episode, ``None`` when it cannot be judged (no
    ground truth, no reported subtasks, or the judges failed)."""
    executed = executed_subtasks(report)
    if truth is None or executed is None:
        return None
    judge_spec = spec.module_models().get("judge", spec.model)
    parsed = parse_model_spec(judge_spec)
    if parsed.kind == "sim-oracle":
        rate = parsed.error_rates.get("judge", 0.0)
        judges = [OracleJudge(rate, seed=(parsed.seed * PANEL_SIZE + i) * 100_003 + spec.seed)
                  for i in range(PANEL_SIZE)]
    else:
        judges = [build_judge(judge_spec)] * PANEL_SIZE
    try:
        return judge_with_panel(judges, instruction, list(truth), executed).score
    except ModelError as error:
        logger.warning("the trace judges failed: %s", error)
        return None


class TraceJudge(EpisodeEvaluation):
    """``alrm-judge``: the trace judges' score of the episode in ``judge_score``.

    Args:
        spec: the episode (its judge model and seed).
    """

    def __init__(self, spec: EpisodeSpec) -> None:
        self._spec = spec
        self._truth: list[str] | None = None
        self._instruction = ""

    def start(self, env: SimEnv, instruction: str) -> None:
        """Keep the ground-truth subtasks of the initial state and the instruction."""
        self._truth, self._instruction = ground_truth(env), instruction

    def finish(self, result: EpisodeResult, report: AgentReport) -> EpisodeResult:
        """``result`` with the panel's :func:`judge_episode` score."""
        return replace(result, judge_score=judge_episode(self._spec, self._instruction,
                                                         self._truth, report))
