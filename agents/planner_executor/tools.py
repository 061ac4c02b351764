"""The planner-executor's four tools (tool set ``planner``): ``reflect``, ``act``,
``get_state_snapshot`` and ``check_events`` (paper section 5).

``act(action, params)`` is the only environment-changing tool: one action of
:data:`ACTIONS` with its parameters as a positional list of strings, checked against
:data:`ACTIONS` before anything moves (``BAD_ARGS`` names the expected parameters and valid
values). Each action is built on the shared skills (:mod:`agentic_env.agents.skills`) with
the detector as the injected model judgement, and returns ``OK`` or a concise diagnostic
(infeasible grasp, unreachable pose, e-stop active...). Perception writes the
:class:`~agentic_env.agents.planner_executor.snapshot.SemanticSnapshot`; manipulation makes
its facts stale.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentic_env.agents import skills
from agentic_env.agents.agenticlab.modules import detect, evaluate_grasp
from agentic_env.agents.base import RobotStoppedError
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.planner_executor.snapshot import TABLE, SemanticSnapshot
from agentic_env.agents.skills import SkillCode, SkillResult, grounding, turn
from agentic_env.agents.skills.locate import MAX_LOOKS, Target, locate
from agentic_env.agents.skills.reorient import Reorienter
from agentic_env.agents.skills.result import code_for_reason, fail, ok
from agentic_env.agents.skills.scene import at_home, kinematics
from agentic_env.agents.tools.registry import ToolFunction, register_tool_set
from agentic_env.agents.tools.robot import ToolContext
from agentic_env.contract.actions import home
from agentic_env.contract.spaces import Workspace
from agentic_env.pddl.planning import PlanStep
from agentic_env.robot.reorienting import TURN_GOALS


class Action(enum.StrEnum):
    """The actions of ``act``."""

    MOVE_ARM = "move_arm"
    PERCEIVE = "perceive"
    PICK = "pick"
    PLACE = "place"
    INSERT = "insert"
    OPEN_DRAWER = "open_drawer"
    CLOSE_DRAWER = "close_drawer"
    SPEAK = "speak"
    LISTEN = "listen"


#: Each action's positional parameters (a trailing ``?`` marks an optional one).
ACTIONS: dict[Action, tuple[str, ...]] = {
    Action.MOVE_ARM: ("posture",),
    Action.PERCEIVE: ("target",),
    Action.PICK: ("object", "drawer_or_pose?"),
    Action.PLACE: ("object", "surface"),
    Action.INSERT: ("object", "container"),
    Action.OPEN_DRAWER: ("drawer",),
    Action.CLOSE_DRAWER: ("drawer",),
    Action.SPEAK: ("text",),
    Action.LISTEN: (),
}
#: Arm postures of ``move_arm`` (``observe`` = home, out of the shoulder camera's view).
POSTURES = ("home", "observe")
#: Diagnostic prefix of each failure code.
_DIAGNOSES = {SkillCode.GRASP_FAILED: "infeasible grasp", SkillCode.UNREACHABLE:
              "unreachable pose", SkillCode.ESTOP: "e-stop active", SkillCode.NOT_FOUND:
              "not found", SkillCode.COLLISION: "collision", SkillCode.BLOCKED: "blocked",
              SkillCode.TIMEOUT: "timed out", SkillCode.BAD_ARGS: "invalid request"}
#: Arm moves a perception's search may take (parking aside, then the wrist survey's looks).
PERCEIVE_MOVES = MAX_LOOKS + 1
#: How long ``listen`` waits for the operator, seconds.
LISTEN_S = 2.0
#: Primitive failure reasons after which a tool call sends nothing more (the robot stopped).
_STOPPED = ("estop", "safety_fault", "operator_declined")


def describe(name: str) -> str:
    """Words for an identifier: ``red-cube-1`` -> ``red cube``."""
    return re.sub(r"-\d+$", "", name).replace("-", " ").replace("_", " ")


def is_slot(name: str) -> bool:
    """Whether an identifier names a board slot (a flat mark; canonical ids contain
    ``slot``)."""
    return "slot" in name.lower()


def is_drawer(name: str) -> bool:
    """Whether an identifier names a drawer (canonical drawer ids contain ``drawer``)."""
    return "drawer" in name.lower()


@dataclass
class PlannerState:
    """What the tools keep across calls in one episode.

    Attributes:
        models: how the detector and the grasp judgement reach their models; ``None``
            (a bare tool server) = no perception: perceive and manipulation answer
            ``BLOCKED``.
        snapshot: the perceived state.
        rng: grasp sampling.
        poll_events: returns the events since the last poll (text), or none.
        wait: lets the given seconds pass without moving (``listen`` waits for the operator).
        held: what the robot believes it holds (not sensed).
        grasp: the top-down TCP pose (4x4) it was picked with, base frame.
        turning: how it holds an object picked to be turned into a pose.
        reflections: every ``reflect`` text.
        spoken: every ``speak`` text.
        event_checks: ``check_events`` calls.
        stale_places: places and inserts onto a surface not freshly perceived.
        substantive: ``act`` calls that change the environment (not speak/listen/perceive).
    """

    models: ModuleContext | None = None
    snapshot: SemanticSnapshot = field(default_factory=SemanticSnapshot)
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    poll_events: Callable[[], list[str]] = list
    wait: Callable[[float], None] = lambda _seconds: None
    held: grounding.HeldObject | None = None
    grasp: np.ndarray | None = None
    turning: turn.TurningGrip | None = None
    reflections: list[str] = field(default_factory=list)
    spoken: list[str] = field(default_factory=list)
    event_checks: int = 0
    stale_places: int = 0
    substantive: int = 0


@dataclass
class PlannerToolContext(ToolContext):
    """A :class:`ToolContext` with the planner tools' state (``None``: a fresh state
    without models)."""

    planner: PlannerState | None = None


class _Arm:
    """The :class:`~agentic_env.agents.skills.SkillIO` the skills act through: counts
    actions in the tool log; a robot stop comes back as a failed status (``safety_fault``).
    Once the robot refused a motion for the e-stop (or stopped), the rest of the same tool
    call sends nothing and gets the same refusal (:meth:`new_call` starts the next call)."""

    def __init__(self, context: ToolContext) -> None:
        self._context = context
        self._obs: dict[str, np.ndarray] | None = None
        self._stopped: dict[str, Any] | None = None

    def new_call(self) -> None:
        """A new ``act`` call: the robot may be asked to move again."""
        self._stopped = None

    @property
    def stopped(self) -> dict[str, Any] | None:
        """The refusal that stopped this call's motions, or ``None``."""
        return self._stopped

    @property
    def workspace(self) -> Workspace:
        """The robot's primitive workspace."""
        return self._context.io.workspace

    @property
    def obs(self) -> dict[str, np.ndarray]:
        """The latest observation (taken on first use)."""
        if self._obs is None:
            self._obs = self._context.io.observe()
        return self._obs

    def act(self, action: dict[str, Any], why: str) -> dict[str, Any]:
        if self._context.action_refusal() is not None:
            return {"ok": False, "reason": "timeout", "message": "the action budget is spent"}
        if self._stopped is not None:
            return self._stopped
        self._context.log.actions += 1
        try:
            self._obs, status = self._context.io.act(action)
        except RobotStoppedError as error:
            status = {"ok": False, "reason": "safety_fault", "message": str(error)}
        if not status.get("ok") and status.get("reason") in _STOPPED:
            self._stopped = status
        return status

    def event(self, kind: str, **details: Any) -> None:
        """Skills' trace events are not kept (the tool log has every call)."""


def planner_tools(context: ToolContext) -> Sequence[ToolFunction]:
    """The ``planner`` tool set over ``context`` (a :class:`PlannerToolContext` carries the
    agent's state; any other context gets a fresh state without models)."""
    state = getattr(context, "planner", None) or PlannerState()
    arm = _Arm(context)
    snapshot = state.snapshot

    @functools.cache
    def reorienter() -> Reorienter:  # made on first use
        return Reorienter(arm.workspace, kinematics=kinematics())

    def detector(obs: Any, camera: str, name: str, part: str) -> Any:
        return detect(state.models, obs, camera, name, describe(name), part)

    def budget_moves() -> int:
        return max(min(PERCEIVE_MOVES, context.max_actions - context.log.actions), 0)

    def find(name: str, part: str = "object", search: bool = True) -> SkillResult:
        return locate(arm, detector, name, part, search=search, max_moves=budget_moves())

    def diagnose(result: SkillResult, what: str) -> SkillResult:
        if result.ok:
            return result
        return fail(result.code, f"{what}: {_DIAGNOSES.get(result.code, 'failed')} "
                    f"({result.message})")

    def after_motion(changed: Sequence[str]) -> None:
        snapshot.changed(changed)
        snapshot.posture("observe" if at_home(arm.obs) else "away")

    def perceive(target: str) -> SkillResult:
        names = {f.text.split("(")[1].split(",")[0].rstrip(")") for f in snapshot.facts()
                 if not f.text.startswith(("arm_posture", "drawer_"))}
        if is_drawer(target):
            inside = find(target, "interior", search=False)
            snapshot.drawer(target, inside.ok)
            return ok(f"{target} is {'open' if inside.ok else 'closed'}; snapshot updated")
        # the target first (the arm moves out of the way only if it hides the target),
        # then what else the snapshot holds, as the view now shows it
        others = sorted(n for n in names - {target} if n != TABLE and not is_drawer(n))
        wanted = [target, *others] if target != TABLE else others
        clouds, missing = {}, []
        for name in wanted:
            found = find(name) if name == target else locate(
                arm, detector, name, search=False, clear_view=False)
            if found.ok:
                clouds[name] = found.data["target"].cloud.points
            else:
                missing.append(name)
        snapshot.perceived(clouds, missing)
        snapshot.surface_perceived(target)
        after_motion([])
        if target != TABLE and target in missing:
            return fail(SkillCode.NOT_FOUND, f"perceive: {target} was not seen from the "
                        "observation posture or the wrist survey")
        return ok(f"perceived {target}; snapshot updated ({len(clouds)} objects seen)")

    def grasp_judge(obj: str) -> skills.GraspJudge:
        step = PlanStep("pick", (obj,))

        def judge(image: np.ndarray, candidate: Any, target: Target) -> tuple[bool, str]:
            verdict = evaluate_grasp(state.models, image, step, obj, describe(obj),
                                     candidate.pose, candidate.width)
            return verdict.execute, verdict.reason
        return judge

    def outward_yaw(drawer: str) -> float | None:
        handle = find(drawer, "handle", search=False)
        if not handle.ok:
            return None
        fitted = skills.handle_pose(arm, handle.data["target"])
        return skills.outward_yaw(fitted.data["pose"]) if fitted.ok else None

    def pick(obj: str, extra: str = "") -> SkillResult:
        """Pick ``obj`` top-down (from the drawer ``extra`` names), or, ``extra`` a pose,
        with a grasp from which the wrist can turn it into that pose."""
        if extra in TURN_GOALS:
            return pick_for_turn(obj, extra)
        yaw = outward_yaw(extra) if extra and is_drawer(extra) else None
        result = skills.pick(arm, detector, obj, state.rng, yaw=yaw, why=f"pick {obj}",
                             judge=grasp_judge(obj), max_moves=budget_moves())
        after_motion([obj])
        if result.ok:
            state.held, state.grasp = result.data["held"], result.data["grasp"]
            state.turning = None
            return ok(f"picked {obj} (the gripper's contents are not sensed)")
        return diagnose(result, f"pick {obj}")

    def pick_for_turn(obj: str, goal: str) -> SkillResult:
        found = find(obj)
        if not found.ok:
            return diagnose(found, f"pick {obj}")
        picked = turn.pick_to_turn(arm, found.data["target"], goal, reorienter(),
                                   judge=grasp_judge(obj), why=f"pick {obj} to turn it {goal}")
        after_motion([obj])
        if not picked.ok:
            return diagnose(picked, f"pick {obj}")
        state.held, state.grasp, state.turning = picked.data["held"], None, picked.data["grip"]
        return ok(f"picked {obj} to turn it {goal} (the gripper's contents are not sensed)")

    def turn_into(obj: str, goal: str) -> SkillResult:
        """Set the held ``obj`` down turned into ``goal``: at once when it was picked for
        that turn, else after setting it back down where it was taken from and taking it
        again with a grasp from which the wrist can turn it."""
        held_for_turn = state.turning is not None and state.turning.name == obj
        if not held_for_turn:
            if state.held is None or state.held.name != obj or state.grasp is None:
                return fail(SkillCode.BAD_ARGS, f"place {obj} {goal}: pick {obj} first")
            down = turn.place_turned_in_place(arm, state.held, state.grasp, 0.0,
                                              f"set {obj} down to take it again")
            after_motion([obj])
            if not down.ok:
                return diagnose(down, f"place {obj} {goal}")
            state.held = state.grasp = None
            picked = pick_for_turn(obj, goal)
            if not picked.ok:
                return picked
        assert state.turning is not None
        placed = turn.place_turned(arm, state.turning, goal, reorienter(),
                                   f"turn {obj} {goal}")
        after_motion([obj])
        if not placed.ok:
            return diagnose(placed, f"place {obj} {goal}")
        state.held = state.turning = None
        return ok(f"placed {obj} {goal}")

    def put(obj: str, where: str, into: bool) -> SkillResult:
        if where in TURN_GOALS and not into:
            return turn_into(obj, where)
        held = state.held if state.held is not None and state.held.name == obj else \
            grounding.HeldObject(obj, 0.03, 0.03)
        blind = not snapshot.fresh(where)
        state.stale_places += int(blind)
        if where == TABLE and not into:
            result = skills.place_at(arm, held, why=f"place {obj} on the table")
        else:
            drawer = into and is_drawer(where)
            found = find(where, "interior" if drawer else "object")
            if not found.ok:
                after_motion([])
                return diagnose(found, f"place {obj}")
            target: Target = found.data["target"]
            if into:
                yaw = outward_yaw(where) if drawer else None
                result = skills.place_in(arm, held, target, yaw=yaw, why=f"insert {obj}")
            elif is_slot(where):
                result = skills.place_in_slot(arm, detector, held, target,
                                              why=f"place {obj} on {where}")
            else:
                result = skills.place_on(arm, held, target, align_faces=True,
                                         why=f"place {obj} on {where}")
        after_motion([obj, where])
        note = " (the surface was not perceived since it last changed)" if blind else ""
        if result.ok:
            state.held = state.grasp = None
            done = f"inserted {obj} in" if into else f"placed {obj} on"
            return ok(f"{done} {where}{note}")
        return diagnose(result, f"{'insert' if into else 'place'} {obj}{note}")

    def drawer_motion(drawer: str, opening: bool) -> SkillResult:
        handle = find(drawer, "handle")
        verb = "open" if opening else "close"
        if not handle.ok:
            return diagnose(handle, f"{verb}_drawer {drawer}")
        move = skills.open_drawer if opening else skills.close_drawer
        result = move(arm, handle.data["target"], f"{verb} {drawer}")
        after_motion([drawer])
        if result.ok:
            snapshot.drawer(drawer, opening)
            return ok(f"{drawer} {verb}ed" if opening else f"{drawer} closed")
        return diagnose(result, f"{verb}_drawer {drawer}")

    def run_action(action: Action, params: list[str]) -> SkillResult:
        if action is Action.SPEAK:
            state.spoken.append(params[0])
            return ok("completed speech")
        if action is Action.LISTEN:
            state.wait(LISTEN_S)
            heard = state.poll_events()
            if any("person" in e for e in heard):
                snapshot.invalidate()
            return ok("; ".join(heard) if heard else "nothing heard")
        refusal = context.action_refusal()
        if refusal is not None:
            return refusal
        if state.models is None and action is not Action.MOVE_ARM:
            return fail(SkillCode.BLOCKED, f"{action.value} needs perception, and no "
                        "detector model is wired to these tools")
        if action is Action.MOVE_ARM:
            if params[0] not in POSTURES:
                return fail(SkillCode.BAD_ARGS, f"unknown posture {params[0]!r}; valid: "
                            f"{', '.join(POSTURES)}")
            status = arm.act(home(), "observation posture")
            after_motion([])
            return diagnose(SkillResult.from_status(status, "move_arm"), "move_arm")
        if action is Action.PERCEIVE:
            return perceive(params[0])
        state.substantive += 1
        if action is Action.PICK:
            return pick(params[0], params[1] if len(params) > 1 else "")
        if action in (Action.PLACE, Action.INSERT):
            return put(params[0], params[1], into=action is Action.INSERT)
        return drawer_motion(params[0], opening=action is Action.OPEN_DRAWER)

    def reflect(text: str) -> SkillResult:
        """Write down your reasoning (plan, what you observed, what you will do next and why);
        changes nothing in the world.

        Args:
            text: the reflection, a few structured sentences.
        """
        state.reflections.append(text)
        snapshot.tick()
        return ok("reflection noted")

    def act(action: Action, params: list[str]) -> SkillResult:
        """Execute exactly one action on the robot; returns a status or a concise diagnostic.

        Args:
            action: move_arm [posture: home|observe], perceive [target: an object, a
                container, a drawer or 'table'], pick [object, optional: the drawer it lies
                in, or the pose it will be turned into],
                place [object, surface: 'table', an object, a board slot, or a pose to turn the
                object into on the table: upright, upside-down, on-side,
                handle-<left|right|toward-robot|away-from-robot>], insert [object, container or
                drawer], open_drawer [drawer], close_drawer [drawer], speak [text], listen []
                (waits a moment without moving and reports what happened: the operator's
                words, the e-stop, a person changing things).

            params: the action's parameters in order, as strings.
        """
        snapshot.tick()
        arm.new_call()
        layout = ACTIONS[action]
        need = [p for p in layout if not p.endswith("?")]
        if not len(need) <= len(params) <= len(layout) or not all(
                isinstance(p, str) and p.strip() for p in params):
            shown = ", ".join(layout) or "no parameters"
            return fail(SkillCode.BAD_ARGS, f"act {action.value} was not run: it takes "
                        f"[{shown}] (non-empty strings), got {params!r}")
        result = run_action(action, [p.strip() for p in params])
        stopped = arm.stopped
        if result.ok and stopped is not None:  # e.g. a perception whose look was refused
            return fail(code_for_reason(str(stopped.get("reason", ""))),
                        f"{action.value}: {_DIAGNOSES[SkillCode.ESTOP]} "
                        f"({stopped.get('message', '')})")
        return result

    def get_state_snapshot() -> SkillResult:
        """The perceived semantic state: facts with the step each was last seen at and
        whether it is stale; refreshed only by act perceive."""
        snapshot.tick()
        return ok(snapshot.render())

    def check_events() -> SkillResult:
        """Exogenous events since the last check (operator utterances, e-stop, a person
        changing the scene), as text."""
        snapshot.tick()
        state.event_checks += 1
        events = state.poll_events()
        if any("person" in e for e in events):
            snapshot.invalidate()
        return ok("; ".join(events) if events else "no events")

    return (reflect, act, get_state_snapshot, check_events)


register_tool_set("planner", planner_tools)
