"""The AgenticLab closed-loop pipeline (paper Algorithm 1, section IV).

parse the task (VLM -> PDDL, validated, errors fed back) -> plan (Fast Downward) -> for each
action: check preconditions -> detect the target -> grasp candidates -> VLM grasp evaluation
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

import time
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
from agentic_env.agents.agenticlab.steps import StepGrounding
from agentic_env.agents.base import (
    AgentReport,
    AgentSetup,
    RobotIO,
    RobotStoppedError,
    TaskContext,
)
from agentic_env.agents.models.base import BudgetExceededError
from agentic_env.agents.models.context import ModuleFailedError
from agentic_env.agents.skills import reorient, turn
from agentic_env.agents.skills.scene import (
    at_home,
    kinematics,
)
from agentic_env.contract.actions import (
    home,
)
from agentic_env.contract.spaces import PRIMITIVES
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
        max_actions: primitives before giving up (``home`` and wrist views included).
        max_replans: task-parser calls after the first.
        max_parse_attempts: parser answers per (re)plan before giving up (PDDL errors and
            unsolvable problems are fed back).
        max_step_retries: re-executions of one plan step whose effects failed, before a replan.
        max_wall_s: wall-clock limit, seconds.
        grasp_candidates_judged: candidates shown to the VLM per view before falling back
            (an accepted grasp the arm cannot reach gives way to the next accepted one).
        seed: seed of grasp sampling.
    """

    verification: str = "full"
    grasp_evaluation: bool = True
    max_actions: int = 40
    max_replans: int = 5
    max_parse_attempts: int = 3
    max_step_retries: int = 1
    max_wall_s: float = 900.0
    grasp_candidates_judged: int = 3
    seed: int = 0


def make_agenticlab(setup: AgentSetup) -> AgenticLabAgent:
    """The AgenticLab agent of ``setup`` (options: ``grasp_evaluation``, bool)."""
    config = AgentConfig(verification=setup.verification,
                         grasp_evaluation=bool(setup.options.get("grasp_evaluation", True)),
                         max_actions=setup.max_actions, max_replans=setup.max_replans,
                         max_wall_s=setup.max_wall_s, seed=setup.seed)
    return AgenticLabAgent(setup.models, config, setup.on_event)


class _StopEpisodeError(Exception):
    """Ends the episode: a limit, an exhausted budget or a module that cannot go on."""

    def __init__(self, source: str, detail: str) -> None:
        super().__init__(detail)
        self.source = source


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


class AgenticLabAgent(StepGrounding):
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
        self._rng = np.random.default_rng(self.config.seed)
        self._reorienter: reorient.Reorienter | None = None
        self._turning: turn.TurningGrip | None = None

    # -- bookkeeping -------------------------------------------------------------------------

    def event(self, kind: str, **details: Any) -> None:
        event = {"kind": kind, "t": round(time.perf_counter() - self._start, 3), **details}
        self.report.events.append(event)
        if self._on_event is not None:
            self._on_event(event)

    def _check_time(self) -> None:
        if time.perf_counter() - self._start > self.config.max_wall_s:
            raise _StopEpisodeError("limits",
                                    f"wall-time limit ({self.config.max_wall_s:g} s) reached")

    def act(self, action: dict[str, Any], why: str) -> dict[str, Any]:
        self._check_time()
        if self.report.actions >= self.config.max_actions:
            raise _StopEpisodeError("limits",
                                    f"action limit ({self.config.max_actions}) reached")
        self.obs, status = self.robot.act(action)
        self.report.actions += 1
        self.event("primitive", primitive=PRIMITIVES[int(action["primitive"])], why=why,
                    position=np.round(np.asarray(action["pose"])[:3], 3).tolist(),
                    distance=round(float(np.asarray(action["distance"]).ravel()[0]), 3),
                    ok=status.get("ok"), reason=status.get("reason", ""),
                    message=status.get("message", ""))
        return status

    def _fail_first(self, source: str, detail: str) -> None:
        if self.report.failure is None:
            self.report.failure, self.report.failure_detail = source, detail

    # -- main loop -------------------------------------------------------------------------

    def run(self, robot: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        """Carry out ``instruction`` with the task's PDDL domain; never raises for agent
        failures (they end the episode with ``report.failure`` set), nor when the robot
        stops the episode (``execution``)."""
        self.robot, self.report, self._start = robot, AgentReport(), time.perf_counter()
        self._reorienter = reorient.Reorienter(robot.workspace, kinematics=kinematics())
        self.instruction, self.domain = instruction, context.domain
        self.workspace = robot.workspace
        self.obs = robot.observe()
        try:
            self._loop()
        except _StopEpisodeError as stop:
            self._fail_first(stop.source, str(stop))
            self.event("stop", source=stop.source, detail=str(stop))
        except BudgetExceededError as exc:
            self._fail_first("limits", str(exc))
            self.event("stop", source="limits", detail=str(exc))
        except RobotStoppedError as exc:
            self._fail_first("execution", str(exc))
            self.event("stop", source="execution", detail=str(exc))
        return self.report

    def _loop(self) -> None:
        cfg = self.config
        while True:
            parsed, plan = self._make_plan()
            self.objects = {name: desc for name, (_, desc) in parsed.objects.items()}
            self.parsed, self.plan = parsed, plan
            try:
                for step in plan:
                    self._run_step(step)
            except _ReplanError:
                self._replan("an action check failed")
                continue
            except ModuleFailedError as exc:
                self._fail_first(exc.module, str(exc))
                self.event("module_failed", module=exc.module, error=str(exc)[:500])
                self._replan(f"the {exc.module} module failed")
                continue
            if cfg.verification == "none":
                self.report.believes_done = True
                self.event("done", verified=False)
                return
            try:
                verdict = check_goal(self.ctx, self.obs, self.instruction,
                                     goal_literals(parsed.domain, parsed.problem), self.objects)
            except ModuleFailedError as exc:
                self._fail_first("goal", str(exc))
                self.event("module_failed", module="goal", error=str(exc)[:500])
                self._replan("the goal checker failed")
                continue
            self.report.goal_checked = True
            self.report.believes_done = verdict.success
            self.event("goal_check", success=verdict.success, unmet=list(verdict.failed),
                        reasoning=verdict.reasoning)
            if verdict.success:
                return
            self._fail_first("goal", "the goal check found the goal unmet")
            self._replan("the goal is not met")

    def _replan(self, why: str) -> None:
        if self.report.replans >= self.config.max_replans:
            raise _StopEpisodeError(
                "limits", f"replan limit ({self.config.max_replans}) reached; last: {why}")
        self.report.replans += 1
        self.event("replan", why=why, replans=self.report.replans)
        if at_home(self.obs):
            self.obs = self.robot.observe()
        else:  # look at the scene with the arm out of the shoulder camera's view
            self.act(home(), "clear the view for replanning")

    # -- task parser and planner ---------------------------------------------------------------

    def _make_plan(self) -> tuple[ParsedTask, list[PlanStep]]:
        feedback = ""
        for attempt in range(1, self.config.max_parse_attempts + 1):
            self._check_time()
            try:
                parsed = parse_task(self.ctx, self.obs, self.instruction, self.domain,
                                    PARSER_EXAMPLE, feedback)
            except ModuleFailedError as exc:
                feedback = ""
                self.event("parser_error", attempt=attempt, error=str(exc)[:500])
                continue
            try:
                if _domain_changed_actions(self.domain, parsed.domain):
                    raise PDDLError("updated_domain changed the domain's actions or "
                                    "predicates; only new :types may be added")
                validate(parsed.domain, parsed.problem)
                plan = solve(parsed.domain, parsed.problem)
            except (PDDLError, PlanNotFoundError) as exc:
                feedback = f"{type(exc).__name__}: {exc}"
                self.event("plan_error", attempt=attempt, error=feedback[:2000])
                continue
            self.event("plan", attempt=attempt, steps=[str(s) for s in plan],
                        objects=sorted(parsed.objects), reasoning=parsed.reasoning)
            return parsed, plan
        raise _StopEpisodeError("parser", f"no valid, solvable PDDL problem after "
                    f"{self.config.max_parse_attempts} parser answers")

    # -- one plan step ------------------------------------------------------------------------

    def _run_step(self, step: PlanStep) -> None:
        full = self.config.verification == "full"
        pre, effects = step_conditions(self.parsed.domain, self.parsed.problem, step)
        effects = [e for e in effects if e not in STATIC_EFFECTS]
        for attempt in range(self.config.max_step_retries + 1):
            if full:
                check = check_conditions(self.ctx, self.obs, step, pre, "preconditions",
                                         self.objects)
                self.event("precondition_check", step=str(step), success=check.success,
                            failed=list(check.failed), reasoning=check.reasoning)
                if not check.success:
                    raise _ReplanError
            self.event("step", step=str(step), attempt=attempt + 1)
            executed = self._execute(step)
            if not full:
                return
            check = check_conditions(self.ctx, self.obs, step, effects, "effects",
                                     self.objects)
            self.event("effect_check", step=str(step), success=check.success,
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

