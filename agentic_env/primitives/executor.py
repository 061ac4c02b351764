"""Primitive skills executed through the low-level control loop.

Each primitive plans in Cartesian space (see :mod:`agentic_env.robot.motion`) *before* moving, so an
unreachable or colliding request fails with the robot untouched, then streams joint targets
through :meth:`LowLevelRobot.send` one control period at a time. The same code drives the
simulated and the real robot.

Outcomes are reported as :class:`PrimitiveOutcome`; failure reasons are the values of
:class:`FailureReason`. A failed primitive stops the arm where it is (references set to the
measured state); a pick that closed on nothing reopens and backs off along its approach; a
primitive stopped by a contact then backs out the way it came, :data:`BACK_OUT_DISTANCE` of
its TCP path (:meth:`PrimitiveExecutor._back_out`), so that the next primitive does not start
in the contact (every one of its moves would stop at its first control period). The real
robot reports no contact: its protective stop is a latched fault that ends the episode.

``open_drawer`` / ``close_drawer`` grasp a drawer handle at the given TCP grasp pose (z into
the cabinet, the closing axis across the bar) and move it straight along the pose's z axis:

1. plan everything first: the move to a pre-grasp pose ``approach_distance`` in front of the
   handle, the approach, the stroke (``distance`` along -z to open, +z to close) and the
   retreat ``approach_distance`` back from the stroke's end;
2. open fully, approach, settle, close on the bar (``nothing_grasped`` if the gripper shuts on
   nothing: it reopens and backs off, like a pick);
3. stroke at the reduced speed cap :attr:`PrimitiveConfig.drawer_speed`, compliantly: the TCP
   may lag the plan (the drawer drags on the hand), and the stroke stops early where the arm
   stalls (lags its reference by :attr:`PrimitiveConfig.stall_lag`) or the handle slips out
   of the fingers. The check comes afterwards: an ``open_drawer`` whose hand moved the handle
   less than :attr:`PrimitiveConfig.drawer_min_fraction` of ``distance`` fails with
   ``timeout`` (the drawer is blocked or at the end of its travel). A ``close_drawer`` that
   stalls has pushed the drawer against its closed end and succeeds: the robot cannot tell a
   closed drawer from a blocked one by feel, and pushing an already closed drawer is harmless.
   ``close_drawer`` grasps the handle too (rather than pushing the front with closed
   fingers): the bar between the open fingers tolerates +-3 cm of height error, the hand
   drives the drawer by exactly ``distance``, and the path is the same as ``open_drawer``'s;
4. release and retreat along -z.

Both open the gripper fully first (anything held is dropped) and ignore ``width``. The
stroke is compliant sideways (see :meth:`PrimitiveExecutor._follow_stroke`): with the bar
handle of :mod:`agentic_env.sim.cabinet`, grasp poses off by up to 3 cm vertically or along the
bar, 1.5 cm in depth, or 0.1 rad about any axis still open and close the drawer.

The robot learns the drawer's motion only through its own joints and gripper reading, so the
same code runs on the real robot.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from agentic_env.contract.actions import vector_to_pose
from agentic_env.errors import InvalidActionError, MotionPlanningError
from agentic_env.primitives.paths import offset_along_approach, transit_poses
from agentic_env.primitives.types import (
    RELEASE_OPENING,
    FailureReason,
    PrimitiveCommand,
    PrimitiveConfig,
    PrimitiveOutcome,
    parse_primitive_action,
)
from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE, HOME_JOINT_POSITIONS
from agentic_env.robot.interface import LowLevelRobot, StepStatus
from agentic_env.robot.kinematics import pose_error
from agentic_env.robot.motion import (
    JointPath,
    plan_cartesian_path,
    plan_joint_path,
    time_parameterize,
)

#: Joint speed below which the arm counts as stopped, rad/s.
STOPPED_SPEED = 0.01
#: How far (m) below the home TCP height the TCP may be and still go home without first
#: rising straight up; how far (m) a hand not pointing down backs away first, and the
#: least downward component of the tool's z axis that counts as pointing down.
HOME_HEIGHT_TOLERANCE = 0.02
HOME_BACK_OFF = 0.1
POINTING_DOWN = 0.9
#: How far back along its own path a primitive stopped by a contact backs out: TCP travel,
#: metres, or the largest joint's travel, radians, whichever comes first (a few times the
#: millimetres an arm stopping at its first contact goes on into it).
BACK_OUT_DISTANCE = 0.02
BACK_OUT_ROTATION = 0.05
#: Primitives that grasp a drawer handle and pull or push it.
DRAWER_PRIMITIVES: tuple[str, ...] = ("open_drawer", "close_drawer")
#: Sideways TCP error ignored by the compliant drawer stroke, metres.
_COMPLIANCE_DEADBAND = 0.001
#: Largest sideways shift of a compliant drawer stroke, metres.
_MAX_COMPLIANT_SHIFT = 0.03


class PrimitiveError(Exception):
    """Raised inside a primitive to abort it with a :class:`FailureReason`."""

    def __init__(self, reason: FailureReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason


StepCallback = Callable[[np.ndarray, float, StepStatus], None]


class PrimitiveExecutor:
    """Runs primitive actions on a :class:`LowLevelRobot`.

    Args:
        robot: the low-level robot (sim or real).
        config: primitive tunables.
        on_step: called after every control period with (joint target, width target,
            status); the env uses it to record rollouts.
    """

    def __init__(
        self,
        robot: LowLevelRobot,
        config: PrimitiveConfig,
        on_step: StepCallback | None = None,
    ) -> None:
        self.robot = robot
        self.config = config
        self.on_step = on_step
        self._deadline = np.inf
        #: joint targets sent in the current primitive, oldest first (for :meth:`_back_out`)
        self._trail: list[np.ndarray] = []
        self._handlers: dict[str, Callable[[np.ndarray | None, float, float], None]] = {
            "home": self._home,
            "move_to": self._move_to,
            "pick": self._pick,
            "place": self._place,
            "open_gripper": self._open_gripper,
            "close_gripper": self._close_gripper,
            "open_drawer": self._open_drawer,
            "close_drawer": self._close_drawer,
        }

    def execute(self, action: dict | PrimitiveCommand) -> PrimitiveOutcome:
        """Validate and run one primitive action dict (see :mod:`agentic_env.contract.spaces`),
        or a command already parsed from one.

        Raises:
            InvalidActionError: if the action does not match the primitive action space.
        """
        command = parse_primitive_action(action)
        name, pose_vector, width, distance = (command.name, command.pose, command.width,
                                              command.distance)
        try:
            pose = self._validate(name, pose_vector, width, distance)
        except PrimitiveError as rejected:  # nothing moved, no time passed
            return PrimitiveOutcome(name, False, rejected.reason.value, str(rejected), 0.0)
        start = self.robot.time
        self._deadline = start + self.config.timeout
        self._trail = [np.array(self.robot.joint_positions())]
        default_distance = (self.config.drawer_distance if name in DRAWER_PRIMITIVES
                            else self.config.approach_distance)
        try:
            self._handlers[name](pose, width, distance or default_distance)
        except PrimitiveError as failure:
            if failure.reason != FailureReason.SIM_DIVERGED:
                self._hold()
            if failure.reason == FailureReason.COLLISION:
                self._back_out()
            return PrimitiveOutcome(
                name, False, failure.reason.value, str(failure), self.robot.time - start
            )
        return PrimitiveOutcome(name, True, "", "", self.robot.time - start)

    # -- validation -------------------------------------------------------------------------

    def _validate(
        self, name: str, pose_vector: np.ndarray, width: float, distance: float
    ) -> np.ndarray | None:
        invalid = FailureReason.INVALID_PARAMETERS
        if not np.all(np.isfinite(pose_vector)) or not np.isfinite(width) or not np.isfinite(
            distance
        ):
            raise PrimitiveError(invalid, "pose, width and distance must be finite numbers")
        # float32 actions may read 0.08500001 for the full opening
        if not GRIPPER_WIDTH_RANGE[0] <= width <= GRIPPER_WIDTH_RANGE[1] + 1e-6:
            raise PrimitiveError(
                invalid, f"width {width:.4f} m is outside [0, {GRIPPER_WIDTH_RANGE[1]}] m"
            )
        if not 0.0 <= distance <= 0.3 + 1e-6:  # float32 actions may read 0.30000001
            raise PrimitiveError(invalid, f"distance {distance:.3f} m is outside [0, 0.3] m")
        if name not in ("move_to", "pick", "place", *DRAWER_PRIMITIVES):
            return None
        workspace = self.config.workspace
        if not workspace.contains(pose_vector[:3]):
            raise PrimitiveError(
                invalid,
                f"pose position {np.round(pose_vector[:3], 3).tolist()} is outside the "
                f"workspace: {workspace.describe()}",
            )
        try:
            return vector_to_pose(pose_vector)
        except InvalidActionError as error:
            raise PrimitiveError(invalid, str(error)) from None

    # -- primitives -------------------------------------------------------------------------

    def _home(self, _pose: np.ndarray | None, _width: float, _distance: float) -> None:
        q = self.robot.joint_positions()
        clear = self._clear_for_home(q)
        start = clear[-1].waypoints[-1] if clear else q
        path = self._plan(lambda: plan_joint_path(
            self.robot.kinematics, start, HOME_JOINT_POSITIONS, self.config.motion))
        for segment in (*clear, path):
            self._follow(segment, self.robot.gripper_reference())
        self._settle_joints(HOME_JOINT_POSITIONS)

    def _move_to(self, pose: np.ndarray, _width: float, _distance: float) -> None:
        path = self._plan_cartesian(self.robot.joint_positions(), pose)
        self._follow(path, self.robot.gripper_reference())
        self._settle_pose(pose, path.waypoints[-1])

    def _pick(self, grasp: np.ndarray, width: float, distance: float) -> None:
        pre_grasp = offset_along_approach(grasp, -distance)
        lifted = grasp.copy()
        lifted[2, 3] += self.config.lift_height
        to_pre = self._plan_transit(self.robot.joint_positions(), pre_grasp)
        descend = self._plan_cartesian(to_pre[-1].waypoints[-1], grasp, start=pre_grasp)
        lift = self._plan_cartesian(descend.waypoints[-1], lifted, start=grasp)
        opening = min(width + self.config.open_margin, GRIPPER_WIDTH_RANGE[1])
        for segment in to_pre:
            self._follow(segment, opening)
        self._set_gripper(opening)
        self._follow(descend, opening)
        self._settle_pose(grasp, descend.waypoints[-1], touchdown=self.config.grasp_touchdown)
        held = self._set_gripper(GRIPPER_WIDTH_RANGE[0])
        if held < self.config.min_grasp_width:
            self._set_gripper(opening)
            self._follow(self._reverse(descend), opening)
            raise PrimitiveError(
                FailureReason.NOTHING_GRASPED,
                f"the gripper closed to {held * 1000:.1f} mm: nothing between the fingers",
            )
        self._follow(lift, GRIPPER_WIDTH_RANGE[0])
        if self.robot.gripper_width() < self.config.min_grasp_width:
            raise PrimitiveError(
                FailureReason.NOTHING_GRASPED, "the object slipped out of the gripper while lifting"
            )

    def _place(self, pose: np.ndarray, _width: float, distance: float) -> None:
        held = self.robot.gripper_width()
        # Holding means the servo is blocked open: commanded tighter than where it stopped.
        if self.robot.gripper_reference() > held - self.config.min_grasp_width:
            raise PrimitiveError(
                FailureReason.NOTHING_GRASPED,
                f"nothing to place: the gripper reads {held * 1000:.1f} mm and is not blocked "
                "by an object",
            )
        pre_place = offset_along_approach(pose, -distance)
        to_pre = self._plan_transit(self.robot.joint_positions(), pre_place)
        descend = self._plan_cartesian(to_pre[-1].waypoints[-1], pose, start=pre_place)
        grip = self.robot.gripper_reference()
        for segment in to_pre:
            self._follow(segment, grip)
        self._follow(descend, grip)
        self._settle_pose(pose, descend.waypoints[-1], touchdown=self.config.place_touchdown)
        release = min(held + RELEASE_OPENING, GRIPPER_WIDTH_RANGE[1])
        self._set_gripper(release)
        self._follow(self._reverse(descend), release)

    def _open_drawer(self, handle: np.ndarray, _width: float, distance: float) -> None:
        self._operate_drawer(handle, -distance)

    def _close_drawer(self, handle: np.ndarray, _width: float, distance: float) -> None:
        self._operate_drawer(handle, distance)

    def _operate_drawer(self, handle: np.ndarray, travel: float) -> None:
        """Grasp the handle at ``handle``, move it ``travel`` m along its z axis (negative =
        pull = open), release, retreat. See the module docstring."""
        cfg = self.config
        pulling = travel < 0.0
        pre_grasp = offset_along_approach(handle, -cfg.approach_distance)
        stroke_end = offset_along_approach(handle, travel)
        retreat_end = offset_along_approach(stroke_end, -cfg.approach_distance)
        to_pre = self._plan_cartesian(self.robot.joint_positions(), pre_grasp)
        reach = self._plan_cartesian(to_pre.waypoints[-1], handle, start=pre_grasp)
        stroke = self._plan_cartesian(reach.waypoints[-1], stroke_end, start=handle)
        retreat = self._plan_cartesian(stroke.waypoints[-1], retreat_end, start=stroke_end)
        opening = GRIPPER_WIDTH_RANGE[1]
        self._follow(to_pre, opening)
        self._set_gripper(opening)
        self._follow(reach, opening)
        self._settle_pose(handle, reach.waypoints[-1])
        held = self._set_gripper(GRIPPER_WIDTH_RANGE[0])
        if held < cfg.min_grasp_width:
            self._set_gripper(opening)
            self._follow(self._reverse(reach), opening)
            raise PrimitiveError(
                FailureReason.NOTHING_GRASPED,
                f"the gripper closed to {held * 1000:.1f} mm at "
                f"{np.round(handle[:3, 3], 3).tolist()} m: no handle between the fingers",
            )
        ending, shift = self._follow_stroke(stroke, handle[:3, 2] * np.sign(travel))
        tcp = self.robot.kinematics.forward(self.robot.joint_positions())
        moved = float(np.dot(tcp[:3, 3] - handle[:3, 3], handle[:3, 2])) * np.sign(travel)
        wanted = abs(travel)
        verb = "pulled" if pulling else "pushed"
        if ending == "slipped" or (pulling and moved < cfg.drawer_min_fraction * wanted):
            self._let_go(tcp, opening)
            cause = ("the handle slipped out of the gripper" if ending == "slipped"
                     else "the arm stalled" if ending == "stalled" else "the hand lagged")
            raise PrimitiveError(
                FailureReason.TIMEOUT,
                f"the drawer handle was {verb} {moved * 100:.1f} cm of the requested "
                f"{wanted * 100:.1f} cm ({cause}): the drawer is blocked or at the end of its "
                "travel",
            )
        self._set_gripper(opening)
        if ending == "done" and shift < _COMPLIANCE_DEADBAND:
            self._follow(retreat, opening)
        else:  # stopped where the drawer stopped, or shifted: back off from where it is
            self._follow(self._plan_cartesian(
                self.robot.joint_positions(),
                offset_along_approach(tcp, -cfg.approach_distance), start=tcp), opening)

    def _follow_stroke(self, path: JointPath, direction: np.ndarray) -> tuple[str, float]:
        """Follow a drawer stroke holding the handle, at the drawer speed cap, compliantly.

        Compliance across the stroke: where the measured TCP is held off the commanded one
        sideways (perpendicular to ``direction``, by more than 1 mm), the rest of the stroke
        shifts towards it by half that error per control period (at most 3 cm in all, targets
        solved by IK), so an off-centre grasp or a stroke a few degrees off the slide does not
        strain the arm against the drawer. Along the stroke the hand may trail.

        Returns:
            (ending, shift): ending is ``"done"``, or ``"stalled"`` / ``"slipped"`` when it
            stopped early because the measured TCP trailed the commanded one along the stroke
            by more than ``stall_lag``, or the gripper closed to less than ``min_grasp_width``
            (the handle is gone); shift is the sideways correction applied, metres. An early
            stop holds the arm where it is, which releases the force on the drawer.
        """
        cfg = self.config
        kinematics = self.robot.kinematics
        limits = replace(cfg.motion, max_linear_speed=cfg.drawer_speed)
        grip = GRIPPER_WIDTH_RANGE[0]
        shift = np.zeros(3)
        correction = np.zeros(6)  # joint offset of the shifted path from the planned one
        for planned in time_parameterize(path, self.robot.control_dt, limits):
            joint_target = planned
            if np.any(shift):
                goal = kinematics.forward(planned)
                goal[:3, 3] += shift
                solution = kinematics.solve(goal, planned + correction, max_iterations=20)
                if solution.converged:
                    joint_target = solution.q
                    correction = solution.q - planned
                else:
                    joint_target = planned + correction
            self._send(joint_target, grip)
            if self.robot.gripper_width() < cfg.min_grasp_width:
                self._hold()
                return "slipped", float(np.linalg.norm(shift))
            commanded = kinematics.forward(self.robot.joint_reference())[:3, 3]
            error = kinematics.forward(self.robot.joint_positions())[:3, 3] - commanded
            along = float(np.dot(error, direction))
            if -along > cfg.stall_lag:
                self._hold()
                return "stalled", float(np.linalg.norm(shift))
            sideways = error - along * direction
            size = float(np.linalg.norm(sideways))
            if size > _COMPLIANCE_DEADBAND:
                shift += 0.5 * sideways * (size - _COMPLIANCE_DEADBAND) / size
                norm = float(np.linalg.norm(shift))
                if norm > _MAX_COMPLIANT_SHIFT:
                    shift *= _MAX_COMPLIANT_SHIFT / norm
        return "done", float(np.linalg.norm(shift))

    def _let_go(self, tcp: np.ndarray, opening: float) -> None:
        """After a failed stroke: open and back off along -z if that path can be planned."""
        self._set_gripper(opening)
        try:
            back_off = plan_cartesian_path(
                self.robot.kinematics, self.robot.joint_positions(),
                offset_along_approach(tcp, -self.config.approach_distance), self.config.motion,
                start=tcp)
        except MotionPlanningError:
            return
        self._follow(back_off, opening)

    def _open_gripper(self, _pose: np.ndarray | None, _width: float, _distance: float) -> None:
        self._set_gripper(GRIPPER_WIDTH_RANGE[1])

    def _close_gripper(self, _pose: np.ndarray | None, _width: float, _distance: float) -> None:
        self._set_gripper(GRIPPER_WIDTH_RANGE[0])

    # -- building blocks --------------------------------------------------------------------

    def _plan(self, planner: Callable[[], JointPath]) -> JointPath:
        try:
            return planner()
        except MotionPlanningError as error:
            raise PrimitiveError(FailureReason(error.reason), str(error)) from None

    def _plan_cartesian(
        self, q_start: np.ndarray, goal: np.ndarray, start: np.ndarray | None = None
    ) -> JointPath:
        kinematics, motion = self.robot.kinematics, self.config.motion
        return self._plan(lambda: plan_cartesian_path(kinematics, q_start, goal, motion,
                                                      start=start))

    def _plan_transit(self, q_start: np.ndarray, goal: np.ndarray) -> list[JointPath]:
        """Straight segments from the current TCP pose to ``goal`` via the transit height.

        Rises vertically to :attr:`PrimitiveConfig.transit_height` (if lower), crosses at that
        height to above ``goal`` and descends to it, so carried objects clear stacks and
        containers. Each segment stops at its end.
        """
        pose = self.robot.kinematics.forward(q_start)
        via = transit_poses(pose, goal, self.config.transit_height)
        segments: list[JointPath] = []
        q = q_start
        for target in via:
            segment = self._plan_cartesian(q, target, start=pose)
            segments.append(segment)
            q, pose = segment.waypoints[-1], target
        return segments

    def _clear_for_home(self, q: np.ndarray) -> list[JointPath]:
        """Straight moves before the joint-space move home: a hand not pointing down (after a
        drawer stroke) first backs away along its approach axis by :data:`HOME_BACK_OFF`; the
        TCP rises straight up to the height it has at home; a hand not pointing down then
        goes home along a straight TCP line, turning down on the way. A joint-space arc from
        lower down, turning the wrist on the way, can sweep through what stands beside the
        hand (an open drawer's front right after opening it)."""
        tcp = self.robot.kinematics.forward(q)
        home = self.robot.kinematics.forward(HOME_JOINT_POSITIONS)
        segments: list[JointPath] = []
        turned = tcp[2, 2] > -POINTING_DOWN
        if turned:
            backed = offset_along_approach(tcp, -HOME_BACK_OFF)
            segments.append(self._plan_cartesian(q, backed, start=tcp))
            q, tcp = segments[-1].waypoints[-1], backed
        if tcp[2, 3] < home[2, 3] - HOME_HEIGHT_TOLERANCE:
            above = tcp.copy()
            above[2, 3] = home[2, 3]
            segments.append(self._plan_cartesian(q, above, start=tcp))
            q, tcp = segments[-1].waypoints[-1], above
        if turned:  # a straight TCP line home, turning down on the way: the fingers stay at
            # the TCP's height and the hand's body behind or above them
            with contextlib.suppress(PrimitiveError):  # out of reach: the arc home as is
                segments.append(self._plan_cartesian(q, home, start=tcp))
        return segments

    @staticmethod
    def _reverse(path: JointPath) -> JointPath:
        return JointPath(path.waypoints[::-1], path.poses[::-1], path.linear_length,
                         path.angular_length)

    def _step(self, joint_target: np.ndarray, width_target: float) -> StepStatus:
        """One control period towards the targets, reported to ``on_step``; nothing checked."""
        status = self.robot.send(joint_target, width_target)
        if self.on_step is not None:
            self.on_step(joint_target, width_target, status)
        return status

    def _send(self, joint_target: np.ndarray, width_target: float) -> StepStatus:
        status = self._step(joint_target, width_target)
        self._trail.append(np.array(joint_target))
        if status.diverged:
            raise PrimitiveError(FailureReason.SIM_DIVERGED, "the simulation diverged")
        collision = self.robot.unexpected_contact()
        if collision is not None:
            raise PrimitiveError(FailureReason.COLLISION, collision)
        if self.robot.time > self._deadline:
            raise PrimitiveError(
                FailureReason.TIMEOUT,
                f"the primitive ran longer than its {self.config.timeout:.1f} s limit",
            )
        return status

    def _follow(self, path: JointPath, width_target: float) -> None:
        for joint_target in time_parameterize(path, self.robot.control_dt, self.config.motion):
            self._send(joint_target, width_target)

    def _settle_pose(self, pose: np.ndarray, q_goal: np.ndarray, touchdown: float = 0.0) -> None:
        """Hold ``q_goal`` until the TCP is within tolerance of ``pose``; with ``touchdown``
        > 0, also stop once the arm stalls (moves under 0.5 mm in 0.2 s) at most
        ``touchdown`` m short of ``pose`` along its approach axis (a held object resting on
        its support). ``timeout`` after :attr:`PrimitiveConfig.settle_time`."""
        cfg = self.config
        steps = int(np.ceil(cfg.settle_time / self.robot.control_dt))
        window = max(1, int(round(0.2 / self.robot.control_dt)))
        history: list[np.ndarray] = []
        for _ in range(steps):
            tcp = self.robot.kinematics.forward(self.robot.joint_positions())
            position_error, rotation_error = pose_error(tcp, pose)
            if position_error < cfg.position_tolerance and rotation_error < cfg.rotation_tolerance:
                return
            history.append(tcp[:3, 3])
            if (touchdown > 0.0 and len(history) > window
                    and np.linalg.norm(history[-1] - history[-1 - window]) < 5e-4
                    and _short_along_approach(tcp, pose, touchdown, cfg)):
                return
            self._send(q_goal, self.robot.gripper_reference())
        raise PrimitiveError(
            FailureReason.TIMEOUT,
            f"the TCP did not settle within {cfg.position_tolerance * 1000:.0f} mm of "
            f"{np.round(pose[:3, 3], 3).tolist()} m in {cfg.settle_time:.1f} s "
            f"(off by {position_error * 1000:.1f} mm) - blocked?",
        )

    def _settle_joints(self, q_goal: np.ndarray) -> None:
        steps = int(np.ceil(self.config.settle_time / self.robot.control_dt))
        for _ in range(steps):
            if np.max(np.abs(self.robot.joint_positions() - q_goal)) < 0.01:
                return
            self._send(q_goal, self.robot.gripper_reference())
        raise PrimitiveError(FailureReason.TIMEOUT, "the arm did not settle at home")

    def _set_gripper(self, width: float) -> float:
        """Drive the gripper to ``width`` until it stops moving; return the width reading."""
        q_hold = self.robot.joint_reference()
        dt = self.robot.control_dt
        stroke_time = abs(width - self.robot.gripper_width()) / 0.1
        steps = int(np.ceil((stroke_time + self.config.settle_time) / dt))
        previous = self.robot.gripper_width()
        still = 0
        for _ in range(steps):
            self._send(q_hold, width)
            reading = self.robot.gripper_width()
            reached = abs(self.robot.gripper_reference() - width) < 1e-6
            still = still + 1 if reached and abs(reading - previous) < 2e-4 else 0
            previous = reading
            if still >= 3:
                break
        return self.robot.gripper_width()

    def _back_out(self) -> None:
        """After a contact stopped the arm: go back to the newest joint target this primitive
        sent at least :data:`BACK_OUT_DISTANCE` m of TCP travel (or
        :data:`BACK_OUT_ROTATION` rad of any joint) from where the arm stopped, else to where
        the primitive began, on a straight joint-space line at the motion limits; contacts do
        not stop it (it starts in one; the arm came that way clear of them). Nothing happens
        when that line would dip below the table clearance; the gripper keeps its
        reference."""
        kinematics = self.robot.kinematics
        q = self.robot.joint_positions()
        tcp = kinematics.forward(q)[:3, 3]
        target = self._trail[0]
        for previous in reversed(self._trail):
            if (np.max(np.abs(previous - q)) >= BACK_OUT_ROTATION
                    or np.linalg.norm(kinematics.forward(previous)[:3, 3] - tcp)
                    >= BACK_OUT_DISTANCE):
                target = previous
                break
        try:
            path = plan_joint_path(kinematics, q, target, self.config.motion)
        except MotionPlanningError:
            return
        width_target = self.robot.gripper_reference()
        for joint_target in time_parameterize(path, self.robot.control_dt, self.config.motion):
            if self._step(joint_target, width_target).diverged:
                return
        self._hold()

    def _hold(self) -> None:
        """Stop where the arm is: hold the joints measured now until they stop moving.

        The gripper keeps its reference. Holds at most ``settle_time``.
        """
        joint_target, width_target = self.robot.joint_positions(), self.robot.gripper_reference()
        for _ in range(int(np.ceil(self.config.settle_time / self.robot.control_dt))):
            status = self._step(joint_target, width_target)
            if status.diverged or np.max(np.abs(self.robot.joint_velocities())) < STOPPED_SPEED:
                return


def _short_along_approach(tcp: np.ndarray, pose: np.ndarray, limit: float,
                          config: PrimitiveConfig) -> bool:
    """Whether ``tcp`` (4x4) stopped 0..``limit`` m short of ``pose`` (4x4) along the pose's
    approach (z) axis, at most ``limit / 2`` off it sideways (a held object meeting a bowl's
    slope is nudged) and within the rotation tolerance."""
    offset = pose[:3, 3] - tcp[:3, 3]
    short = float(offset @ pose[:3, 2])
    sideways = float(np.linalg.norm(offset - short * pose[:3, 2]))
    _position_error, rotation_error = pose_error(tcp, pose)
    return (0.0 <= short <= limit and sideways <= limit / 2
            and rotation_error < config.rotation_tolerance)
