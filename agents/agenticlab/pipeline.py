"""The AgenticLab closed-loop pipeline (paper Algorithm 1, section IV).

parse the task (VLM -> PDDL, validated, errors fed back) -> plan (Fast Downward) -> for each
action: check preconditions -> detect the target (a detection by another model than the VLM,
e.g. LangSAM, verified by the VLM: :mod:`agentic_env.agents.agenticlab.verify`) -> grasp
candidates -> VLM grasp evaluation
(on reject: wrist view, detect and plan again) -> execute -> check effects (retry the action, or
replan from a fresh observation) -> goal check at the end (replan if unmet).

Verification modes (section VI-D): ``full`` checks every action and the goal, ``goal`` checks
only the goal, ``none`` runs the plan open-loop. The agent talks to the robot only through
:class:`~agentic_env.agents.base.RobotIO` (observations and the primitive's own status
report), never to the simulator; each plan step is grounded by the robot skills
(:mod:`agentic_env.agents.agenticlab.steps`). :func:`make_agenticlab` builds it from an
:class:`~agentic_env.agents.base.AgentSetup` (registered as ``agenticlab``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.agents.agenticlab.modules import (
    ModuleContext,
    ParsedTask,
    check_conditions,
    check_goal,
    parse_task,
)
from agentic_env.agents.agenticlab.steps import StepRunner
from agentic_env.agents.agenticlab.verify import detections_verified, verified_detector
from agentic_env.agents.base import AgentReport, AgentSetup, RobotIO, TaskContext
from agentic_env.agents.models.context import ModuleFailedError
from agentic_env.agents.runtime import (
    Episode,
    Limits,
    Manipulator,
    StopEpisodeError,
    detector_for,
    grasp_judge,
)
from agentic_env.agents.skills.scene import at_home
from agentic_env.contract.actions import home
from agentic_env.pddl.planning import (
    PDDLError,
    PlanNotFoundError,
    PlanStep,
    goal_literals,
    solve,
    step_conditions,
    validate,
)

#: Effects the checker is not asked about: the table always has room (the stacking domain's
#: ``table`` object stays ``clear`` however many objects stand on it).
STATIC_EFFECTS = frozenset({"(not (clear table))"})


@dataclass(frozen=True)
class AgentConfig:
    """Settings of the AgenticLab agent.

    Attributes:
        verification: ``full``, ``goal`` or ``none``.
        grasp_evaluation: ask the VLM to judge grasp candidates (the wrist fallback needs it).
        limits: primitives (``home`` and wrist views included), task-parser calls after the
            first (replans) and wall time of the episode.
        max_parse_attempts: parser answers per (re)plan before giving up (PDDL errors and
            unsolvable problems are fed back).
        max_step_retries: re-executions of one plan step whose effects failed, before a replan.
        grasp_candidates_judged: candidates shown to the VLM per view before falling back
            (an accepted grasp the arm cannot reach gives way to the next accepted one).
        verify_detections: have the VLM check each detection (``None``: when another model
            answers the ``detector`` module, :func:`~agentic_env.agents.agenticlab.verify.
            detections_verified`).
        max_detection_retries: detections asked for again on the same image after the VLM
            rejected one (then the target counts as not seen there), as a plan step is
            retried once (``max_step_retries``).
        seed: seed of grasp sampling.
    """

    verification: str = "full"
    grasp_evaluation: bool = True
    limits: Limits = Limits()
    max_parse_attempts: int = 3
    max_step_retries: int = 1
    grasp_candidates_judged: int = 3
    verify_detections: bool | None = None
    max_detection_retries: int = 1
    seed: int = 0


def make_agenticlab(setup: AgentSetup) -> AgenticLabAgent:
    """The AgenticLab agent of ``setup`` (options: ``grasp_evaluation``, bool)."""
    config = AgentConfig(verification=setup.verification,
                         grasp_evaluation=bool(setup.options.get("grasp_evaluation", True)),
                         limits=Limits.of(setup), seed=setup.seed)
    return AgenticLabAgent(setup.models, config, setup.on_event)


class _ReplanError(Exception):
    """Back to the task parser with a fresh observation."""


PARSER_EXAMPLE = """\
Instruction: "Stack the cubes on the pink plate from bottom to top: green, yellow."
Problem:
(define (problem stack-example) (:domain stacking)
  (:objects green-cube-1 - green-cube yellow-cube-1 - yellow-cube pink-plate-1 - plate
            table - object)
  (:init (hand-empty) (on-top-of green-cube-1 table) (on-top-of yellow-cube-1 green-cube-1)
         (on-top-of pink-plate-1 table) (clear yellow-cube-1) (clear pink-plate-1)
         (clear table))
  (:goal (and (on-top-of green-cube-1 pink-plate-1) (on-top-of yellow-cube-1 green-cube-1))))"""


class AgenticLabAgent:
    """Algorithm 1 over a :class:`RobotIO`.

    Args:
        ctx: how modules reach their models.
        config: limits and verification mode.
        on_event: receives each decision as a dict (``kind`` plus details), as it happens.
    """

    def __init__(self, ctx: ModuleContext, config: AgentConfig | None = None,
                 on_event: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.ctx = ctx
        self.config = config or AgentConfig()
        self._on_event = on_event
        self.objects: dict[str, str] = {}

    def run(self, robot: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        """Carry out ``instruction`` with the task's PDDL domain; never raises for agent
        failures (they end the episode with ``report.failure`` set), nor when the robot
        stops the episode (``execution``)."""
        cfg = self.config
        self.episode = Episode(robot, cfg.limits, self._on_event)
        detector = detector_for(self.ctx, self._describe)
        verify = cfg.verify_detections
        if detections_verified(self.ctx) if verify is None else verify:
            detector = verified_detector(
                self.ctx, detector, self._describe,
                lambda **check: self.episode.event("detection_check", **check),
                cfg.max_detection_retries)
        self.hands = Manipulator(
            self.episode, detector,
            np.random.default_rng(cfg.seed), judged=cfg.grasp_candidates_judged,
            judge_for=self._judge if cfg.grasp_evaluation else None)
        self.steps = StepRunner(self.episode, self.hands)
        self.instruction, self.domain = instruction, context.domain
        with self.episode.guard():
            self._loop()
        return self.episode.report

    def _describe(self, name: str) -> str:
        return self.objects.get(name, name.replace("-", " "))

    def _judge(self, name: str, action: str) -> Any:
        return grasp_judge(self.ctx, action, self._describe(name))

    def _loop(self) -> None:
        cfg = self.config
        while True:
            parsed, plan = self._make_plan()
            self.objects = {name: desc for name, (_, desc) in parsed.objects.items()}
            self.parsed = parsed
            try:
                for step in plan:
                    self._run_step(step, plan)
            except _ReplanError:
                self._replan("an action check failed")
                continue
            except ModuleFailedError as exc:
                self.episode.fail_first(exc.module, str(exc))
                self.episode.event("module_failed", module=exc.module, error=str(exc)[:500])
                self._replan(f"the {exc.module} module failed")
                continue
            if cfg.verification == "none":
                self.episode.report.believes_done = True
                self.episode.event("done", verified=False)
                return
            try:
                verdict = check_goal(self.ctx, self.episode.obs, self.instruction,
                                     goal_literals(parsed.domain, parsed.problem), self.objects)
            except ModuleFailedError as exc:
                self.episode.fail_first("goal", str(exc))
                self.episode.event("module_failed", module="goal", error=str(exc)[:500])
                self._replan("the goal checker failed")
                continue
            self.episode.report.goal_checked = True
            self.episode.report.believes_done = verdict.success
            self.episode.event("goal_check", success=verdict.success, unmet=list(verdict.failed),
                               reasoning=verdict.reasoning)
            if verdict.success:
                return
            self.episode.fail_first("goal", "the goal check found the goal unmet")
            self._replan("the goal is not met")

    def _replan(self, why: str) -> None:
        self.episode.replan(why)
        if at_home(self.episode.obs):
            self.episode.observe()
        else:  # look at the scene with the arm out of the shoulder camera's view
            self.episode.act(home(), "clear the view for replanning")

    # -- task parser and planner ---------------------------------------------------------------

    def _make_plan(self) -> tuple[ParsedTask, list[PlanStep]]:
        feedback = ""
        for attempt in range(1, self.config.max_parse_attempts + 1):
            self.episode.check_time()
            try:
                parsed = parse_task(self.ctx, self.episode.obs, self.instruction, self.domain,
                                    PARSER_EXAMPLE, feedback)
            except ModuleFailedError as exc:
                feedback = ""
                self.episode.event("parser_error", attempt=attempt, error=str(exc)[:500])
                continue
            try:
                if _domain_changed_actions(self.domain, parsed.domain):
                    raise PDDLError("updated_domain changed the domain's actions or "
                                    "predicates; only new :types may be added")
                validate(parsed.domain, parsed.problem)
                plan = solve(parsed.domain, parsed.problem)
            except (PDDLError, PlanNotFoundError) as exc:
                feedback = f"{type(exc).__name__}: {exc}"
                self.episode.event("plan_error", attempt=attempt, error=feedback[:2000])
                continue
            self.episode.event("plan", attempt=attempt, steps=[str(s) for s in plan],
                               objects=sorted(parsed.objects), reasoning=parsed.reasoning)
            return parsed, plan
        raise StopEpisodeError("parser", f"no valid, solvable PDDL problem after "
                    f"{self.config.max_parse_attempts} parser answers")

    # -- one plan step ------------------------------------------------------------------------

    def _run_step(self, step: PlanStep, plan: list[PlanStep]) -> None:
        full = self.config.verification == "full"
        pre, effects = step_conditions(self.parsed.domain, self.parsed.problem, step)
        effects = [e for e in effects if e not in STATIC_EFFECTS]
        for attempt in range(self.config.max_step_retries + 1):
            if full:
                check = check_conditions(self.ctx, self.episode.obs, step, pre, "preconditions",
                                         self.objects)
                self.episode.event("precondition_check", step=str(step), success=check.success,
                                   failed=list(check.failed), reasoning=check.reasoning)
                if not check.success:
                    raise _ReplanError
            self.episode.event("step", step=str(step), attempt=attempt + 1)
            executed = self.steps.execute(step, plan, self.parsed.kinds)
            if not full:
                return
            check = check_conditions(self.ctx, self.episode.obs, step, effects, "effects",
                                     self.objects)
            self.episode.event("effect_check", step=str(step), success=check.success,
                               failed=list(check.failed), executed=executed,
                               reasoning=check.reasoning)
            if check.success:
                return
        raise _ReplanError


def _domain_changed_actions(original: str, updated: str) -> bool:
    """Whether ``updated`` differs from ``original`` beyond its ``:types`` section (the
    parser may add types; a changed action or predicate could smuggle in new behaviour)."""
    def body(text: str) -> str:
        lowered = " ".join(line.split(";")[0] for line in text.lower().splitlines())
        start = lowered.find("(:predicates")
        return " ".join(lowered[start:].split()) if start >= 0 else ""
    return body(original) != body(updated)

