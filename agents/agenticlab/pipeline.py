"""The AgenticLab closed-loop pipeline (paper Algorithm 1, section IV).

parse the task (VLM -> PDDL, validated, errors fed back) -> plan (Fast Downward) -> for each
action: check preconditions -> detect the target -> grasp candidates -> VLM grasp evaluation
(on reject: wrist view, detect and plan again) -> execute -> check effects (retry the action, or
replan from a fresh observation) -> goal check at the end (replan if unmet).

Verification modes (section VI-D): ``full`` checks every action and the goal, ``goal`` checks
only the goal, ``none`` runs the plan open-loop. The agent talks to the robot only through
:class:`~agentic_env.agents.base.RobotIO` (observations and the primitive's own status
report), never to the simulator. :func:`make_agenticlab` builds it from an
:class:`~agentic_env.agents.base.AgentSetup` (registered as ``agenticlab``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.agents import skills
from agentic_env.agents.agenticlab.modules import (
    Detection,
    ModuleContext,
    ParsedTask,
    check_conditions,
    check_goal,
    detect,
    evaluate_grasp,
    parse_task,
)
from agentic_env.agents.base import (
    AgentReport,
    AgentSetup,
    RobotIO,
    RobotStoppedError,
    TaskContext,
)
from agentic_env.agents.models.base import BudgetExceededError
from agentic_env.agents.models.context import ModuleFailedError
from agentic_env.agents.perception import (
    GraspCandidate,
    cluster_near,
    lift_pixel,
    remove_table,
)
from agentic_env.agents.skills import SkillCode, grounding, reorient, turn
from agentic_env.agents.skills.locate import LOOK_HEIGHT, Target, locate, wrist_look_pose
from agentic_env.agents.skills.scene import (
    SceneView,
    at_home,
    kinematics,
)
from agentic_env.contract.actions import (
    home,
    move_to,
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

#: Largest gap (m) between neighbouring points of one board in the thinned shoulder cloud (far
#: from the camera, neighbouring pixels of a flat board lie over 1 cm apart).
BOARD_GAP = 0.02
#: Actions a search for a target leaves of the action budget (a pick and a place).
SEARCH_RESERVE = 2
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

    def _execute(self, step: PlanStep) -> bool:
        """Ground and run ``step``; ``False`` when it could not be done (reported)."""
        name = step.name.lower()
        try:
            if name.startswith("pick"):
                return self._pick(step)
            if name.startswith("place"):
                return self._place(step)
            if name in ("open-drawer", "close-drawer"):
                return self._drawer(step, opening=name == "open-drawer")
        except _GroundingError as exc:
            self._fail_first(exc.source, str(exc))
            self.event("grounding_failed", step=str(step), source=exc.source,
                        detail=str(exc))
            return False
        self._fail_first("parser", f"the plan uses action {step.name!r}, which has no "
                         "primitive")
        self.event("unknown_action", step=str(step))
        return False

    def _describe(self, name: str) -> str:
        return self.objects.get(name, name.replace("-", " "))

    def _detect(self, name: str, camera: str, part: str = "object") -> Target:
        """Locate ``name`` (the skill looks again when the shoulder camera misses it)."""
        found = locate(self, self._detector, name, part, camera,
                       max_moves=self._search_moves())
        if not found.ok:
            raise _GroundingError("detector", found.message)
        return found.data["target"]

    def _search_moves(self) -> int:
        """Arm moves a search for a target may take: what the action budget leaves beyond
        :data:`SEARCH_RESERVE`."""
        return max(self.config.max_actions - self.report.actions - SEARCH_RESERVE, 0)

    def _detector(self, obs: dict[str, np.ndarray], camera: str, name: str,
                  part: str) -> Detection | None:
        return detect(self.ctx, obs, camera, name, self._describe(name), part)

    # -- pick --------------------------------------------------------------------------------

    def _pick(self, step: PlanStep) -> bool:
        """Pick ``step``'s object: grasps planned in the shoulder view, else the wrist view;
        a grasp the arm cannot reach (refused before moving) gives way to the next one. An
        object the plan then places in a pose is picked so the wrist can turn it."""
        target = step.args[0]
        goal = self._pose_goal(step)
        if goal is not None:
            return self._pick_to_turn(step, goal)
        yaw = None
        if step.name.lower() == "pick-from-drawer" and len(step.args) > 1:
            yaw = self._outward_yaw(step.args[1])  # the wrist's bulk away from the carcass
        judge = self._grasp_judge(step) if self.config.grasp_evaluation else None
        return self._picked(skills.pick(
            self, self._detector, target, self._rng, yaw=yaw, judge=judge,
            judged=self.config.grasp_candidates_judged, max_moves=self._search_moves(),
            why=str(step)))

    def _grasp_judge(self, step: PlanStep) -> skills.GraspJudge:
        """The grasp planner's VLM as the pick skill's judgement of ``step``'s grasps."""
        def judge(image: np.ndarray, candidate: GraspCandidate, target: Target
                  ) -> tuple[bool, str]:
            verdict = evaluate_grasp(self.ctx, image, step, target.name,
                                     self._describe(target.name), candidate.pose,
                                     candidate.width)
            return verdict.execute, verdict.reason
        return judge

    def _pose_goal(self, step: PlanStep) -> str | None:
        """The pose a later ``place-in-pose`` of the plan puts ``step``'s object in."""
        later = self.plan[self.plan.index(step) + 1:] if step in self.plan else []
        for other in later:
            if other.name.lower() == "place-in-pose" and other.args[0] == step.args[0]:
                return other.args[1]
        return None

    def _pick_to_turn(self, step: PlanStep, goal: str) -> bool:
        """Pick ``step``'s object with a grasp from which the place can turn it into
        ``goal``, judged by the grasp planner's VLM first."""
        target = self._detect(step.args[0], "shoulder")
        judge = self._grasp_judge(step) if self.config.grasp_evaluation else None
        result = turn.pick_to_turn(self, target, goal, self._reorienter, judge=judge,
                                   judged=self.config.grasp_candidates_judged, why=str(step))
        return self._picked(result)

    def _picked(self, result: skills.SkillResult) -> bool:
        """Book a pick skill's result: its failed attempts, what it holds; raise for a pick
        that could not be grounded."""
        for failure in result.data.get("failures", ()):
            self._fail_first("execution", failure)
        if result.ok:
            self.held, self._turning = result.data["held"], result.data.get("grip")
            return True
        if result.code is SkillCode.NOT_FOUND:
            raise _GroundingError("detector", result.message)
        if result.data.get("rejected"):
            raise _GroundingError("grasp", result.message)
        if result.data.get("look"):
            raise _GroundingError("execution", result.message)
        return False

    def _slot_from_wrist(self, slot: str, point: np.ndarray) -> np.ndarray:
        """The centre (x, y) of ``slot``'s mark seen from straight above with the wrist
        camera (moved over ``point``, the shoulder camera's estimate, base frame): blocks in
        the neighbouring slots hide part of a mark seen at the shoulder camera's slant, and
        the visible part's middle lies off the mark's. ``point[:2]`` when that fails."""
        view = wrist_look_pose(self.obs, np.array([*point[:2], point[2] + LOOK_HEIGHT]))
        status = self.act(move_to(view), f"wrist view of {slot}")
        detection = (detect(self.ctx, self.obs, "wrist", slot, self._describe(slot))
                     if status.get("ok") else None)
        seen = lift_pixel(self.obs, "wrist", detection.point) if detection else None
        self.event("slot_refined", target=slot, seen=seen is not None,
                    shift=None if seen is None else round(float(
                        np.linalg.norm(seen[:2] - point[:2])), 4))
        return point[:2] if seen is None else seen[:2]

    def _place_turned(self, step: PlanStep) -> bool:
        """Set the held object down at its old spot in the pose ``step`` asks for."""
        target, goal = step.args[0], step.args[1]
        if self._turning is None or self._turning.name != target:
            raise _GroundingError("execution", f"{target} was not picked for turning")
        result = turn.place_turned(self, self._turning, goal, self._reorienter, str(step))
        for failure in result.data.get("failures", ()):
            self._fail_first("execution", failure)
        if result.ok:
            self.held, self._turning = None, None
        return result.ok

    # -- place -------------------------------------------------------------------------------

    def _place(self, step: PlanStep) -> bool:
        held = getattr(self, "held", None)
        if held is None or held.name != step.args[0]:
            held = grounding.HeldObject(step.args[0], 0.03, 0.03)
        name = step.name.lower()
        if name == "place-in-pose":
            return self._place_turned(step)
        target = step.args[1] if len(step.args) > 1 else None
        on_table = target is None or name == "place-on-table" or target == "table"
        part = "interior" if name == "place-in-drawer" else "object"
        located = None if on_table else self._detect(target, "shoulder", part)
        # the scene as seen now: locating may have moved the arm out of the view first
        view, why = SceneView(self.obs), str(step)
        if located is None:
            result = skills.place_at(self, held, view=view, why=why)
            if result.code is SkillCode.BLOCKED:
                raise _GroundingError("detector", result.message)
        elif name in ("place-in", "place-in-drawer"):
            yaw = self._outward_yaw(target) if name == "place-in-drawer" else None
            result = skills.place_in(self, held, located, yaw=yaw, view=view, why=why)
        else:
            centre, cloud = None, None
            if name == "place-in-slot":  # a slot is a mark on the board, not a shape
                point = lift_pixel(self.obs, located.camera, located.detection.point)
                if point is not None:  # the whole board shows the slots' axes
                    centre = point[:2]
                    cloud = cluster_near(remove_table(view.cloud("shoulder")), point,
                                         radius=BOARD_GAP)
                    if view.standing_near(point):  # a neighbour may hide part of the mark
                        centre = self._slot_from_wrist(target, point)
            result = skills.place_on(self, held, located, cloud=cloud, centre=centre,
                                     align_faces=name in ("place-on-object", "place-in-slot"),
                                     view=view, why=why)
        if result.ok:
            self.held = None
        else:
            self._fail_first("execution", result.message)
        return result.ok

    # -- drawers -----------------------------------------------------------------------------

    def _handle_pose(self, drawer: str) -> np.ndarray:
        fitted = skills.handle_pose(self, self._detect(drawer, "shoulder", "handle"))
        if not fitted.ok:
            raise _GroundingError("detector", fitted.message)
        return fitted.data["pose"]

    def _outward_yaw(self, drawer: str) -> float:
        """Yaw (rad) that points the tool x axis out of ``drawer``'s cabinet."""
        return skills.outward_yaw(self._handle_pose(drawer))

    def _drawer(self, step: PlanStep, opening: bool) -> bool:
        handle = self._detect(step.args[0], "shoulder", "handle")
        move = skills.open_drawer if opening else skills.close_drawer
        result = move(self, handle, str(step))
        if result.code is SkillCode.NOT_FOUND:
            raise _GroundingError("detector", result.message)
        if not result.ok:
            self._fail_first("execution", f"{step.name} failed: {result.message}")
        return result.ok


class _GroundingError(Exception):
    """A step could not be grounded; ``source`` names the module to blame."""

    def __init__(self, source: str, detail: str) -> None:
        super().__init__(detail)
        self.source = source


def _domain_changed_actions(original: str, updated: str) -> bool:
    """Whether ``updated`` differs from ``original`` beyond its ``:types`` section (the
    parser may add types; a changed action or predicate could smuggle in new behaviour)."""
    def body(text: str) -> str:
        lowered = " ".join(line.split(";")[0] for line in text.lower().splitlines())
        start = lowered.find("(:predicates")
        return " ".join(lowered[start:].split()) if start >= 0 else ""
    return body(original) != body(updated)

