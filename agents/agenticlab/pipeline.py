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

import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.agents.agenticlab import grounding, reorient
from agentic_env.agents.agenticlab.modules import (
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
    PointCloud,
    box_cloud,
    camera_cloud,
    cluster_near,
    grasp_candidates,
    lift_pixel,
    remove_table,
    render_grasp,
    target_cloud,
)
from agentic_env.contract.actions import (
    close_drawer,
    home,
    move_to,
    open_drawer,
    pick,
    place,
    top_down_pose,
    vector_to_pose,
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
from agentic_env.robot.constants import HOME_JOINT_POSITIONS
from agentic_env.robot.kinematics import ArmKinematics

#: A turned place blocked on its way down (the object met the table early) is tried again
#: this much higher (m), at most this many times.
TURNED_PLACE_RAISE = 0.012
TURNED_PLACE_RAISES = 2
#: Share of the shoulder view around a detection that may be the arm before the arm is
#: moved home and the target detected again.
ROBOT_IN_VIEW = 0.2
#: Height (m) above a target's top from which the wrist camera looks down at it.
WRIST_VIEW_HEIGHT = 0.22
#: Largest gap (m) between neighbouring points of one board in the thinned shoulder cloud (far
#: from the camera, neighbouring pixels of a flat board lie over 1 cm apart).
BOARD_GAP = 0.02
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
        self._turning: tuple[str, reorient.ObjectEstimate, np.ndarray] | None = None

    # -- bookkeeping -------------------------------------------------------------------------

    def _event(self, kind: str, **details: Any) -> None:
        event = {"kind": kind, "t": round(time.perf_counter() - self._start, 3), **details}
        self.report.events.append(event)
        if self._on_event is not None:
            self._on_event(event)

    def _check_time(self) -> None:
        if time.perf_counter() - self._start > self.config.max_wall_s:
            raise _StopEpisodeError("limits",
                                    f"wall-time limit ({self.config.max_wall_s:g} s) reached")

    def _act(self, action: dict[str, Any], why: str) -> dict[str, Any]:
        self._check_time()
        if self.report.actions >= self.config.max_actions:
            raise _StopEpisodeError("limits",
                                    f"action limit ({self.config.max_actions}) reached")
        self.obs, status = self.robot.act(action)
        self.report.actions += 1
        self._event("primitive", primitive=PRIMITIVES[int(action["primitive"])], why=why,
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
        self._reorienter = reorient.Reorienter(robot.workspace, kinematics=_kinematics())
        self.instruction, self.domain = instruction, context.domain
        self.obs = robot.observe()
        try:
            self._loop()
        except _StopEpisodeError as stop:
            self._fail_first(stop.source, str(stop))
            self._event("stop", source=stop.source, detail=str(stop))
        except BudgetExceededError as exc:
            self._fail_first("limits", str(exc))
            self._event("stop", source="limits", detail=str(exc))
        except RobotStoppedError as exc:
            self._fail_first("execution", str(exc))
            self._event("stop", source="execution", detail=str(exc))
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
                self._event("module_failed", module=exc.module, error=str(exc)[:500])
                self._replan(f"the {exc.module} module failed")
                continue
            if cfg.verification == "none":
                self.report.believes_done = True
                self._event("done", verified=False)
                return
            try:
                verdict = check_goal(self.ctx, self.obs, self.instruction,
                                     goal_literals(parsed.domain, parsed.problem), self.objects)
            except ModuleFailedError as exc:
                self._fail_first("goal", str(exc))
                self._event("module_failed", module="goal", error=str(exc)[:500])
                self._replan("the goal checker failed")
                continue
            self.report.goal_checked = True
            self.report.believes_done = verdict.success
            self._event("goal_check", success=verdict.success, unmet=list(verdict.failed),
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
        self._event("replan", why=why, replans=self.report.replans)
        if self._at_home():
            self.obs = self.robot.observe()
        else:  # look at the scene with the arm out of the shoulder camera's view
            self._act(home(), "clear the view for replanning")

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
                self._event("parser_error", attempt=attempt, error=str(exc)[:500])
                continue
            try:
                if _domain_changed_actions(self.domain, parsed.domain):
                    raise PDDLError("updated_domain changed the domain's actions or "
                                    "predicates; only new :types may be added")
                validate(parsed.domain, parsed.problem)
                plan = solve(parsed.domain, parsed.problem)
            except (PDDLError, PlanNotFoundError) as exc:
                feedback = f"{type(exc).__name__}: {exc}"
                self._event("plan_error", attempt=attempt, error=feedback[:2000])
                continue
            self._event("plan", attempt=attempt, steps=[str(s) for s in plan],
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
                self._event("precondition_check", step=str(step), success=check.success,
                            failed=list(check.failed), reasoning=check.reasoning)
                if not check.success:
                    raise _ReplanError
            self._event("step", step=str(step), attempt=attempt + 1)
            executed = self._execute(step)
            if not full:
                return
            check = check_conditions(self.ctx, self.obs, step, effects, "effects",
                                     self.objects)
            self._event("effect_check", step=str(step), success=check.success,
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
            self._event("grounding_failed", step=str(step), source=exc.source,
                        detail=str(exc))
            return False
        self._fail_first("parser", f"the plan uses action {step.name!r}, which has no "
                         "primitive")
        self._event("unknown_action", step=str(step))
        return False

    def _describe(self, name: str) -> str:
        return self.objects.get(name, name.replace("-", " "))

    def _detect(self, name: str, camera: str, part: str = "object") -> tuple[
            Any, PointCloud]:
        detection = detect(self.ctx, self.obs, camera, name, self._describe(name), part)
        if (camera == "shoulder" and not self._at_home()
                and (detection is None or self._robot_in_view(detection))):
            self._act(home(), f"clear the shoulder camera's view of {name}")
            detection = detect(self.ctx, self.obs, camera, name, self._describe(name), part)
        if detection is None:
            raise _GroundingError("detector", f"the detector did not find {name} ({part}) in "
                                  f"the {camera} image")
        cloud = target_cloud(self.obs, camera, detection.point, detection.box)
        self._event("detection", target=name, part=part, camera=camera,
                    point=list(detection.point), box=detection.box and list(detection.box),
                    points=len(cloud))
        if len(cloud) < 10:
            raise _GroundingError("detector", f"no 3D points of {name} at the detected pixel "
                                  f"{detection.point} in the {camera} view")
        return detection, cloud

    def _robot_in_view(self, detection: Any) -> bool:
        """Whether the arm covers much (over ``ROBOT_IN_VIEW``) of the shoulder image around
        ``detection``'s box (grown by its size on each side): the target may be partly
        hidden behind it, and a box drawn around what is left of it would mislead. The arm
        is its own points (its kinematic model) and the pixels with no depth, which near
        the table are the arm closer to the camera than its minimum range."""
        u0, v0, u1, v1 = detection.box or (*detection.point, *detection.point)
        pad_u, pad_v = max(u1 - u0, 10), max(v1 - v0, 10)
        region = (u0 - pad_u, v0 - pad_v, u1 + pad_u, v1 + pad_v)
        depth = np.asarray(self.obs["shoulder_depth"])
        height, width = depth.shape
        pixels = depth[max(region[1], 0):min(region[3], height),
                       max(region[0], 0):min(region[2], width)]
        if pixels.size == 0:
            return False
        around = box_cloud(self.obs, "shoulder", region)
        on_robot = _kinematics().robot_points(around.points, self.obs["joint_positions"])
        blind = pixels.size - len(around)
        return (blind + int(np.count_nonzero(on_robot))) / pixels.size > ROBOT_IN_VIEW

    def _at_home(self) -> bool:
        return bool(np.max(np.abs(self.obs["joint_positions"] - HOME_JOINT_POSITIONS)) < 0.05)

    # -- pick --------------------------------------------------------------------------------

    def _pick(self, step: PlanStep) -> bool:
        """Pick ``step``'s object: grasps planned in the shoulder view, else the wrist view;
        a grasp the arm cannot reach (refused before moving) gives way to the next one. An
        object the plan then places in a pose is picked so the wrist can turn it."""
        target = step.args[0]
        goal = self._pose_goal(step)
        if goal is not None:
            return self._pick_to_turn(step, goal)
        yaw = grounding.tcp_yaw(self.obs["tcp_pose"])
        if step.name.lower() == "pick-from-drawer" and len(step.args) > 1:
            yaw = self._outward_yaw(step.args[1])  # the wrist's bulk away from the carcass
        grasps = self._accepted_grasps(step, target, "shoulder", yaw)
        grasp = next(grasps, None)
        if grasp is None:
            centre, top = grounding.top_of(self._last_target)
            view = top_down_pose(np.array([*centre, top + WRIST_VIEW_HEIGHT]),
                                 grounding.tcp_yaw(self.obs["tcp_pose"]))
            status = self._act(move_to(view), f"wrist view of {target}")
            if not status.get("ok"):
                raise _GroundingError("execution", f"could not reach the wrist view of "
                                      f"{target}: {status.get('message')}")
            grasps = self._accepted_grasps(step, target, "wrist", yaw)
            grasp = next(grasps, None)
        if grasp is None:
            raise _GroundingError("grasp", f"every grasp candidate for {target} was rejected "
                                  "in the shoulder and the wrist views")
        while grasp is not None:
            candidate, cloud, scene = grasp
            obstacles = _without_robot(scene.select(~_near(scene, cloud)), self.obs)
            approach = grounding.approach_over(obstacles, candidate.pose[:2, 3],
                                               candidate.pose[2, 3])
            status = self._act(pick(candidate.pose, candidate.width, approach), str(step))
            if status.get("ok"):
                self.held = grounding.measure_held(
                    target, camera_cloud(self.obs, "shoulder", stride=2, keep_gripper=True),
                    self.obs["tcp_pose"], fallback=(cloud, candidate.pose))
                self._event("held_object", target=target,
                            below_tcp=round(self.held.below_tcp, 4),
                            radius=round(self.held.radius, 4))
                return True
            self._fail_first("execution", f"pick of {target} failed: {status.get('message')}")
            if status.get("reason") != "unreachable":
                return False
            grasp = next(grasps, None)
            hand_yaw = grounding.tcp_yaw(self.obs["tcp_pose"])
            if grasp is None and abs(grounding.wrap_angle(yaw - hand_yaw)) > np.pi / 6:
                yaw = hand_yaw  # the preferred wrist turn is out of reach here: try without
                grasps = self._accepted_grasps(step, target, "shoulder", yaw)
                grasp = next(grasps, None)
        return False

    def _pose_goal(self, step: PlanStep) -> str | None:
        """The pose a later ``place-in-pose`` of the plan puts ``step``'s object in."""
        later = self.plan[self.plan.index(step) + 1:] if step in self.plan else []
        for other in later:
            if other.name.lower() == "place-in-pose" and other.args[0] == step.args[0]:
                return other.args[1]
        return None

    def _pick_to_turn(self, step: PlanStep, goal: str) -> bool:
        """Pick ``step``'s object with a grasp from which the place can turn it into
        ``goal`` (see :mod:`reorient`), judged by the grasp planner's VLM first."""
        target = step.args[0]
        _, cloud = self._detect(target, "shoulder")
        estimate = reorient.estimate_object(cloud.points)
        self._event("object_estimate", target=target, lying=estimate.lying,
                    handled=estimate.handled, axis=np.round(estimate.axis, 3).tolist(),
                    centre=np.round(estimate.pose[:3, 3], 3).tolist())
        scene = camera_cloud(self.obs, "shoulder", stride=2)
        grasps = self._reorienter.grasps(estimate, goal, self.obs["joint_positions"])
        for grasp in grasps[: self.config.grasp_candidates_judged + 1]:
            if self.config.grasp_evaluation:
                candidate = GraspCandidate(grasp.pose, grasp.width, 1.0)
                verdict = evaluate_grasp(self.ctx, render_grasp(cloud, scene, candidate), step,
                                         target, self._describe(target), grasp.pose,
                                         grasp.width)
                self._event("grasp_evaluation", target=target, camera="shoulder",
                            execute=verdict.execute, reason=verdict.reason, score=1.0)
                if not verdict.execute:
                    continue
            status = self._act(pick(grasp.pose, grasp.width), str(step))
            if status.get("ok"):
                self.held = grounding.HeldObject(target, estimate.half_extents[2],
                                                 float(np.max(estimate.half_extents[:2])))
                self._turning = (target, estimate, grasp.pose)
                return True
            self._fail_first("execution", f"pick of {target} failed: {status.get('message')}")
            if status.get("reason") != "unreachable":
                return False
        raise _GroundingError("grasp", f"no grasp of {target} that can turn it {goal} was "
                              "accepted and reachable")

    def _slot_from_wrist(self, slot: str, point: np.ndarray) -> np.ndarray:
        """The centre (x, y) of ``slot``'s mark seen from straight above with the wrist
        camera (moved over ``point``, the shoulder camera's estimate, base frame): blocks in
        the neighbouring slots hide part of a mark seen at the shoulder camera's slant, and
        the visible part's middle lies off the mark's. ``point[:2]`` when that fails."""
        tcp = vector_to_pose(np.asarray(self.obs["tcp_pose"], float))
        camera = np.asarray(self.obs["wrist_extrinsics"], float)[:3, 3]
        offset = tcp[:3, :3].T @ (camera - tcp[:3, 3])  # the camera in the tool frame
        view = top_down_pose(np.array([*point[:2], point[2] + WRIST_VIEW_HEIGHT]),
                             grounding.tcp_yaw(self.obs["tcp_pose"]))
        view[:3, 3] -= view[:3, :3] @ np.array([offset[0], offset[1], 0.0])
        status = self._act(move_to(view), f"wrist view of {slot}")
        detection = (detect(self.ctx, self.obs, "wrist", slot, self._describe(slot))
                     if status.get("ok") else None)
        seen = lift_pixel(self.obs, "wrist", detection.point) if detection else None
        self._event("slot_refined", target=slot, seen=seen is not None,
                    shift=None if seen is None else round(float(
                        np.linalg.norm(seen[:2] - point[:2])), 4))
        return point[:2] if seen is None else seen[:2]

    def _place_turned(self, step: PlanStep) -> bool:
        """Set the held object down at its old spot in the pose ``step`` asks for."""
        target, goal = step.args[0], step.args[1]
        if self._turning is None or self._turning[0] != target:
            raise _GroundingError("execution", f"{target} was not picked for turning")
        _, estimate, grasp = self._turning
        tcp = vector_to_pose(np.asarray(self.obs["tcp_pose"], float))
        poses = self._reorienter.places(estimate, grasp, tcp, goal, self.obs["joint_positions"])
        tries = iter(poses[:3])
        pose = next(tries, None)
        raised = 0
        while pose is not None:
            status = self._act(place(pose), str(step))
            if status.get("ok"):
                self.held, self._turning = None, None
                return True
            self._fail_first("execution", f"place of {target} failed: {status.get('message')}")
            if status.get("reason") == "timeout" and raised < TURNED_PLACE_RAISES:
                # set down on the table early: the estimated box sat higher in the hand
                pose, raised = pose.copy(), raised + 1
                pose[2, 3] += TURNED_PLACE_RAISE
            elif status.get("reason") == "unreachable":
                pose = next(tries, None)
            else:
                return False
        return False

    def _accepted_grasps(self, step: PlanStep, target: str, camera: str,
                         yaw: float) -> Iterator[tuple[GraspCandidate, PointCloud, PointCloud]]:
        """Grasp candidates on ``target`` in ``camera``'s view that the grasp planner's VLM
        accepts, best first (at most ``grasp_candidates_judged`` are judged), each turned to
        the equivalent yaw nearest ``yaw`` (rad); candidates within 30 degrees of it first."""
        _, detected = self._detect(target, camera)
        self._last_target = detected
        cloud = grounding.top_slab(detected)
        scene = camera_cloud(self.obs, camera, stride=2)
        candidates = [grounding.fold_grasp(c, yaw)
                      for c in grasp_candidates(cloud, scene, rng=self._rng)]
        candidates.sort(key=lambda c: abs(grounding.yaw_offset(c.pose, yaw)) > np.pi / 6)
        self._event("grasp_candidates", target=target, camera=camera, count=len(candidates))
        for candidate in candidates[: self.config.grasp_candidates_judged]:
            if self.config.grasp_evaluation:
                image = render_grasp(cloud, scene, candidate)
                verdict = evaluate_grasp(self.ctx, image, step, target,
                                         self._describe(target), candidate.pose,
                                         candidate.width)
                self._event("grasp_evaluation", target=target, camera=camera,
                            execute=verdict.execute, reason=verdict.reason,
                            score=round(candidate.score, 3))
                if not verdict.execute:
                    continue
            yield candidate, detected, scene

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
        detection, cloud = (None, None) if on_table else self._detect(target, "shoulder", part)
        # the scene as seen now: detecting may have moved the arm out of the view first
        scene = camera_cloud(self.obs, "shoulder", stride=2)
        obstacles = _without_robot(scene, self.obs)
        tcp = self.obs["tcp_pose"]
        if on_table:
            spot = grounding.table_spot(obstacles, held, tcp, self.robot.workspace)
            if spot is None:
                raise _GroundingError("detector", "no free spot on the table is visible")
            pose, approach = spot
        elif name in ("place-in", "place-in-drawer"):
            if detection.box is not None:
                cloud = box_cloud(self.obs, "shoulder", detection.box)
                cloud = cloud.select(cloud.points[:, 2] > 0.002)
            pose, approach = grounding.place_in(cloud, obstacles, held, tcp)
            if name == "place-in-drawer":
                pose = grounding.with_yaw(pose, self._outward_yaw(target))
        else:
            centre = None
            if name == "place-in-slot":  # a slot is a mark on the board, not a shape
                point = lift_pixel(self.obs, "shoulder", detection.point)
                if point is not None:  # the whole board shows the slots' axes
                    centre = point[:2]
                    cloud = cluster_near(remove_table(scene), point, radius=BOARD_GAP)
                    if _crowded(obstacles, point):  # a neighbour may hide part of the mark
                        centre = self._slot_from_wrist(target, point)
                        tcp = self.obs["tcp_pose"]
            pose, approach = grounding.place_on(cloud, obstacles, held, tcp,
                                                align_faces=name in ("place-on-object",
                                                                     "place-in-slot"),
                                                centre=centre)
        here = np.asarray(tcp[:3], float)
        approach = max(approach, grounding.approach_over(obstacles, here[:2], pose[2, 3],
                                                         hanging=held.below_tcp))
        status = self._act(place(pose, approach), str(step))
        if status.get("ok"):
            self.held = None
        else:
            self._fail_first("execution", f"place of {step.args[0]} failed: "
                             f"{status.get('message')}")
        return bool(status.get("ok"))

    # -- drawers -----------------------------------------------------------------------------

    def _handle_pose(self, drawer: str) -> np.ndarray:
        detection, handle = self._detect(drawer, "shoulder", "handle")
        u0, v0, u1, v1 = detection.box or (detection.point[0] - 10, detection.point[1] - 10,
                                           detection.point[0] + 10, detection.point[1] + 10)
        pad_u, pad_v = 2 * (u1 - u0) // 3 + 8, 2 * (v1 - v0) + 12
        surround = box_cloud(self.obs, "shoulder", (u0 - pad_u, v0 - pad_v, u1 + pad_u,
                                                    v1 + pad_v))
        pose = grounding.handle_grasp(handle, _without_robot(surround, self.obs, radius=0.0))
        if pose is None:
            raise _GroundingError("detector", f"could not fit the front of {drawer} around "
                                  "its handle")
        return pose

    def _outward_yaw(self, drawer: str) -> float:
        """Yaw (rad) that points the tool x axis out of ``drawer``'s cabinet: the wrist's
        bulky side then stays clear of the carcass above the drawer."""
        into = self._handle_pose(drawer)[:3, 2]
        return float(np.arctan2(-into[1], -into[0]))

    def _drawer(self, step: PlanStep, opening: bool) -> bool:
        pose = self._handle_pose(step.args[0])
        action = (open_drawer(pose, grounding.DRAWER_PULL) if opening
                  else close_drawer(pose, grounding.DRAWER_PUSH))
        status = self._act(action, str(step))
        if not status.get("ok"):
            self._fail_first("execution", f"{step.name} failed: {status.get('message')}")
        return bool(status.get("ok"))


class _GroundingError(Exception):
    """A step could not be grounded; ``source`` names the module to blame."""

    def __init__(self, source: str, detail: str) -> None:
        super().__init__(detail)
        self.source = source


def _near(scene: PointCloud, cloud: PointCloud, radius: float = 0.01) -> np.ndarray:
    """Mask of the scene points within ``radius`` of the bounding box of ``cloud``."""
    low, high = cloud.points.min(axis=0) - radius, cloud.points.max(axis=0) + radius
    return np.all((scene.points >= low) & (scene.points <= high), axis=1)


def _crowded(scene: PointCloud, point: np.ndarray, radius: float = 0.06,
             height: float = 0.015) -> bool:
    """Whether something stands more than ``height`` m above ``point`` (base frame) within
    ``radius`` m of it (horizontally) in ``scene``."""
    near = np.linalg.norm(scene.points[:, :2] - point[:2], axis=1) < radius
    return bool(np.any(scene.points[near, 2] > point[2] + height))


def _without_robot(scene: PointCloud, obs: dict[str, np.ndarray],
                   radius: float = 0.07) -> PointCloud:
    """The scene without the robot's own points: its links at the observed joint positions
    (self-filtering with the arm's model), and a column around the TCP where the gripper
    holds an object."""
    tcp = np.asarray(obs["tcp_pose"][:3], float)
    in_hand = ((np.linalg.norm(scene.points[:, :2] - tcp[:2], axis=1) < radius)
               & (scene.points[:, 2] > tcp[2] - 0.12))
    on_robot = _kinematics().robot_points(scene.points, obs["joint_positions"])
    return scene.select(~in_hand & ~on_robot)


@functools.cache
def _kinematics() -> ArmKinematics:
    return ArmKinematics()


def _domain_changed_actions(original: str, updated: str) -> bool:
    """Whether ``updated`` differs from ``original`` beyond its ``:types`` section (the
    parser may add types; a changed action or predicate could smuggle in new behaviour)."""
    def body(text: str) -> str:
        lowered = " ".join(line.split(";")[0] for line in text.lower().splitlines())
        start = lowered.find("(:predicates")
        return " ".join(lowered[start:].split()) if start >= 0 else ""
    return body(original) != body(updated)

