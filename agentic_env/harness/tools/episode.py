"""One episode driven through a tool set, scored from ground truth into the results database.

:class:`ToolEpisode` is shared by the MCP server (``agentic-env serve``) and in-process
tool-calling agents (:func:`run_tool_episode`): it owns the env, the robot IO and the tool
registry, logs every call, follows the executed PDDL steps, and turns the end state into an
:class:`~agentic_env.harness.episode.EpisodeResult`. On the sim backend the judge is the env
itself; on the real robot's MuJoCo twin it is the twin's world (hardware episodes are judged
by the operator, see :mod:`agentic_env.harness.tools.backends`).
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agentic_env.agents.base import RobotIO
from agentic_env.agents.skills.result import SkillResult
from agentic_env.agents.tools.registry import ToolRegistry, build_tool_set
from agentic_env.agents.tools.robot import ToolContext
from agentic_env.harness.episode import (
    UNSCORED,
    EpisodeResult,
    EpisodeSpec,
    ModuleCall,
    ObjectOutcome,
)
from agentic_env.harness.objects import object_outcomes, start_facts
from agentic_env.pddl.planning import PlanNotFoundError, PlanStep
from agentic_env.tasks.base import SymbolicTask
from agentic_env.tasks.symbolic import EpisodeScorer

if TYPE_CHECKING:
    from agentic_env.agents.models.context import ModuleContext
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.harness.db import ResultStore


@dataclass(frozen=True)
class Verdict:
    """The judge's view of the end state.

    Attributes:
        success: the goal holds.
        progress: fraction of goal predicates satisfied, 0..1.
        score / n_done / n_extra / n_required: AgenticLab progress score and its counts.
        unscored: why the judge could not score the end state (an operator's rubric left
            unanswered), ``None`` when it did.
        objects: where each object the goal is about ended
            (:func:`agentic_env.harness.objects.object_outcomes`), ``()`` without simulator
            truth.
    """

    success: bool
    progress: float
    score: float
    n_done: int = 0
    n_extra: int = 0
    n_required: int = 0
    unscored: str | None = None
    objects: tuple[ObjectOutcome, ...] = ()


class Judge(Protocol):
    """Whoever scores the episode's end state."""

    def after_action(self) -> None:
        """Follow the effect of one primitive action (called after each)."""
        ...

    def verdict(self, claimed_success: bool | None) -> Verdict:
        """Score the end state; ``claimed_success`` is the agent's own verdict, if any."""
        ...


class SimJudge:
    """Scores from a simulator's ground truth (the sim env, or the twin's world).

    Args:
        env: the simulator, already reset to the episode's start.
    """

    def __init__(self, env: SimEnv) -> None:
        self.env = env
        task = env.task
        self._scorer = (EpisodeScorer(task, env.scene_state) if isinstance(task, SymbolicTask)
                        else None)
        self._start_facts = start_facts(task, env.scene_state)

    def reference(self) -> list[PlanStep]:
        """The reference plan's steps from the start state (``[]`` without a PDDL model)."""
        return [] if self._scorer is None else list(self._scorer.reference())

    def after_action(self) -> None:
        """Record the PDDL step an action executed (call after every primitive)."""
        if self._scorer is not None:
            self._scorer.record(self.env.scene_state)

    def verdict(self, claimed_success: bool | None) -> Verdict:
        """Ground-truth verdict; a wrong ``claimed_success`` counts as a goal-checker error."""
        evaluation = self.env.task.evaluate(self.env.scene_state)
        wrong_claim = claimed_success is not None and claimed_success != evaluation.success
        counts: tuple[float, int, int, int] = (float(evaluation.success), 0, 0, 0)
        if self._scorer is not None:
            try:
                score = self._scorer.score(wrong_claim)
                counts = (score.score, score.n_done, score.n_extra, score.n_required)
            except PlanNotFoundError:  # no reference plan from the start state
                pass
        task, variant = self.env.task, self.env.schedule.variant
        objects = (object_outcomes(task, self.env.scene_state, self._start_facts, evaluation)
                   if variant is None or variant.expect == "act" else ())
        return Verdict(evaluation.success, evaluation.progress, *counts, objects=objects)


class ToolEpisode:
    """An episode whose agent acts only through a tool set.

    Args:
        spec: the episode (``agent`` names the tool set, e.g. ``"tools:primitives"``).
        io: the robot.
        instruction: the episode's instruction.
        judge: scores the end state (``after_action`` / ``verdict``).
        tool_set: name of the tool set to expose (see ``build_tool_set``).
        close: releases the env(s) when the episode is closed.
        models: what the tools themselves ask (the ``alrm`` set's detector); ``None``: none.
    """

    def __init__(self, spec: EpisodeSpec, io: RobotIO, instruction: str, judge: Judge,
                 tool_set: str = "primitives", close: Callable[[], None] = lambda: None,
                 models: ModuleContext | None = None) -> None:
        self.spec = spec
        self.io = io
        self.judge = judge
        self.context = ToolContext(io, instruction, max_actions=spec.max_actions,
                                   models=models)
        self.tools: ToolRegistry = build_tool_set(tool_set, self.context)
        self.result: EpisodeResult | None = None
        self._close = close
        self._start = time.perf_counter()

    @property
    def instruction(self) -> str:
        """The episode's instruction."""
        return self.context.instruction

    def call(self, name: str, arguments: Any) -> SkillResult:
        """Run a tool (validated first; never raises) and follow its effect on the task."""
        actions = self.context.actions
        result = self.context.call(self.tools, name, arguments)
        if self.context.actions > actions:
            self.judge.after_action()
        return result

    @property
    def finished(self) -> bool:
        """``finish`` was called."""
        return self.context.log.finished

    def score(self, model: str = "", input_tokens: int = 0, output_tokens: int = 0,
              cost_usd: float | None = 0.0, model_calls: tuple[ModuleCall, ...] = ()
              ) -> EpisodeResult:
        """Judge the end state (once; later calls return the same result).

        Args:
            model: who drove the tools, for the per-call rows (e.g. the MCP client's name).
            input_tokens / output_tokens / cost_usd: the agent's model usage, if known.
            model_calls: one row per model turn (in-process agents), stored before the
                tool-call rows.
        """
        if self.result is not None:
            return self.result
        log = self.context.log
        verdict = self.judge.verdict(log.claimed_success)
        failure, detail = None, ""
        if verdict.unscored is not None:
            failure, detail = UNSCORED, f"unscored: {verdict.unscored}"
        elif not verdict.success:
            if not log.finished:
                failure, detail = "limits", "the agent stopped without calling finish"
            elif log.claimed_success:
                failure, detail = "goal", "finish claimed success on a state that misses the goal"
            else:
                failure, detail = "execution", log.summary or "the agent gave up"
        calls = tuple(ModuleCall(f"tool:{c.tool}", model or self.spec.model, c.latency_s, 0, 0,
                                 0.0, 1, c.result.code.value,
                                 None if c.result.ok else c.result.message[:300])
                      for c in log.calls)
        self.result = EpisodeResult(
            spec=self.spec, success=verdict.success, progress=verdict.progress,
            score=verdict.score, n_done=verdict.n_done, n_extra=verdict.n_extra,
            n_required=verdict.n_required,
            goal_checker_error=log.claimed_success is not None
            and log.claimed_success != verdict.success,
            actions=self.context.actions, wall_s=time.perf_counter() - self._start,
            input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost_usd,
            failure=failure, failure_detail=detail, calls=model_calls + calls,
            objects=verdict.objects)
        return self.result

    def store(self, store: ResultStore, worker: str = "", tag: str = "") -> str:
        """Score (if not yet) and write the episode to ``store`` under a fresh key
        (``<spec key>[:tag]:<8 hex>``, so repeated sessions of one spec are all kept; ``tag``
        e.g. ``real``); returns the key."""
        from agentic_env.harness.db import Finished

        result = self.score()
        key = ":".join(filter(None, (self.spec.key(), tag, uuid.uuid4().hex[:8])))
        store.record(Finished(key, result, result.wall_s,
                              worker or f"{socket.gethostname()}:tools"))
        return key

    def close(self) -> None:
        """Release the env(s)."""
        self._close()
