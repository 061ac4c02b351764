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

What a named thing is comes from the detector's typed scene listing
(:func:`~agentic_env.agents.runtime.listing.list_scene`), asked when the table is perceived
or a name no listing gave is used, together with the planner's typed choice of action
(``insert`` = into, ``place`` = onto): a slot gets the slot placement, a drawer the drawer
handling, the table a free table spot, whatever the names are.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.planner_executor.snapshot import SemanticSnapshot
from agentic_env.agents.runtime import Manipulator, Place, detect, grasp_judge, words_for
from agentic_env.agents.runtime.listing import Kind, list_scene, place_mode
from agentic_env.agents.skills import Detection, GraspJudge, SkillCode, SkillResult
from agentic_env.agents.skills.locate import MAX_LOOKS
from agentic_env.agents.skills.result import code_for_reason, fail, ok
from agentic_env.agents.skills.scene import at_home
from agentic_env.agents.tools.registry import ToolFunction, register_tool_set
from agentic_env.agents.tools.robot import ToolContext
from agentic_env.contract.actions import home
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
#: Kinds a perception of the table locates (drawers are perceived by their own target).
_LOCATED = (Kind.OBJECT, Kind.CONTAINER, Kind.SURFACE, Kind.SLOT)


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


class PlannerTools:
    """The ``planner`` tool set over one tool context: perception writes the snapshot,
    manipulation goes through the named-object manipulator (which remembers what the robot
    believes it holds; the gripper's contents are not sensed) and makes the snapshot's facts
    about what it moved stale.

    Args:
        context: the episode's tool context (a :class:`PlannerToolContext` carries the
            agent's state; any other context gets a fresh state whose perception is the
            context's ``models``, e.g. ``serve --tools planner --perception sim-oracle``).
    """

    def __init__(self, context: ToolContext) -> None:
        self.context = context
        self.state = getattr(context, "planner", None) or PlannerState(models=context.models)
        self.snapshot = self.state.snapshot
        self.episode = context.episode
        self.hands = Manipulator(self.episode, self.detector, self.state.rng,
                                 judge_for=self._judge, search_cap=PERCEIVE_MOVES)

    def detector(self, obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> Detection | None:
        """The ``detector`` module as the skills' detector, told the listing's words for
        ``name`` (the name's own words for a name no listing gave)."""
        if self.state.models is None:
            return None
        return detect(self.state.models, obs, camera, name, self._words(name), part)

    def _words(self, name: str) -> str:
        entry = self.snapshot.entry(name)
        return entry.description if entry is not None else words_for(name)

    def _judge(self, name: str, action: str) -> GraspJudge:
        assert self.state.models is not None
        return grasp_judge(self.state.models, action, self._words(name))

    def functions(self) -> Sequence[ToolFunction]:
        """The four tools, as the registry takes them."""
        return (self.reflect, self.act, self.get_state_snapshot, self.check_events)

    # -- helpers of the actions -----------------------------------------------------------

    @staticmethod
    def _diagnose(result: SkillResult, what: str) -> SkillResult:
        if result.ok:
            return result
        return fail(result.code, f"{what}: {_DIAGNOSES.get(result.code, 'failed')} "
                    f"({result.message})")

    def _after_motion(self, changed: Sequence[str]) -> None:
        self.snapshot.changed(changed)
        self.snapshot.posture("observe" if at_home(self.episode.obs) else "away")

    def _list_scene(self) -> None:
        """Ask the detector for the typed listing of the shoulder camera's view."""
        assert self.state.models is not None
        listed = list_scene(self.state.models, self.episode.obs)
        self.snapshot.listed(listed)
        self.episode.event("listing", listed=", ".join(f"{e.name} ({e.kind.value})"
                                                        for e in listed))

    def _kind(self, name: str) -> Kind | None:
        """What ``name`` is, as a listing typed it (a name no listing gave first asks for a
        new listing); ``None`` when no listing names it."""
        if self.snapshot.kind(name) is None:
            self._list_scene()
        return self.snapshot.kind(name)

    def perceive_scene(self) -> SkillResult:
        """List the scene afresh and locate everything listed or perceived before from where
        the arm is (no search moves): ``perceive`` of the table."""
        self._list_scene()
        return self._perceive_table(self.snapshot.table)

    def _perceive(self, target: str) -> SkillResult:
        """Perceive ``target``: a drawer's state; the table afresh
        (:meth:`perceive_scene`); else the target, searched for, and what else the snapshot
        holds as the view now shows it."""
        listed = self.snapshot.kind(target) is None  # a listing is asked for it just now
        kind = self._kind(target)
        if kind is Kind.DRAWER:
            inside = self.hands.locate(target, "interior", search=False)
            self.snapshot.drawer(target, inside.ok)
            return ok(f"{target} is {'open' if inside.ok else 'closed'}; snapshot updated")
        if kind is Kind.TABLE:
            return self._perceive_table(target) if listed else self.perceive_scene()
        seen = self._locate_all([target, *self._others(target)], target)
        if target not in seen:
            return fail(SkillCode.NOT_FOUND, f"perceive: {target} was not seen from the "
                        "observation posture or the wrist survey")
        return ok(f"perceived {target}; snapshot updated ({len(seen)} objects seen)")

    def _perceive_table(self, table: str) -> SkillResult:
        listed = set(self.snapshot.of_kind(*_LOCATED))
        seen = self._locate_all(sorted(listed | set(self._others(table))), table)
        return ok(f"perceived {table}; snapshot updated ({len(seen)} objects seen)")

    def _others(self, target: str) -> list[str]:
        """What the snapshot located before, ``target``, tables and drawers aside."""
        return sorted(n for n in self.snapshot.perceived_names() - {target}
                      if self.snapshot.kind(n) not in (Kind.TABLE, Kind.DRAWER))

    def _locate_all(self, wanted: Sequence[str], surface: str) -> set[str]:
        """Locate ``wanted`` (``surface``, if among them, searched for: the arm moves out of
        the way only if it hides it; the rest as the view shows them), record what was and
        was not seen and that ``surface`` was looked at; the names seen."""
        clouds, missing = {}, []
        for name in wanted:
            found = self.hands.locate(name) if name == surface else self.hands.locate(
                name, search=False, clear_view=False)
            if found.ok:
                clouds[name] = found.data["target"].cloud.points
            else:
                missing.append(name)
        self.snapshot.perceived(clouds, missing)
        self.snapshot.surface_perceived(surface)
        self._after_motion([])
        return set(clouds)

    def _pick(self, obj: str, extra: str = "") -> SkillResult:
        """Pick ``obj`` top-down (from the drawer ``extra`` names), or, ``extra`` a pose,
        with a grasp from which the wrist can turn it into that pose."""
        if extra in TURN_GOALS:
            result = self.hands.pick_to_turn(obj, extra, why=f"pick {obj} to turn it {extra}")
            done = f"picked {obj} to turn it {extra}"
        else:
            drawer = extra or None
            kind = self._kind(extra) if drawer is not None else None
            if kind not in (None, Kind.DRAWER):
                return fail(SkillCode.BAD_ARGS, f"pick {obj} from {extra}: {extra} is a "
                            f"{kind}, not a drawer or a pose; pick [{obj}] alone")
            result = self.hands.pick(obj, from_drawer=drawer, why=f"pick {obj}")
            done = f"picked {obj}"
        self._after_motion([obj])
        if result.ok:
            return ok(f"{done} (the gripper's contents are not sensed)")
        return self._diagnose(result, f"pick {obj}")

    def _put(self, obj: str, where: str, into: bool) -> SkillResult:
        if where in TURN_GOALS and not into:
            if not self.hands.holding(obj):
                return fail(SkillCode.BAD_ARGS, f"place {obj} {where}: pick {obj} first")
            placed = self.hands.place_turned(obj, where, f"turn {obj} {where}")
            self._after_motion([obj])
            return ok(f"placed {obj} {where}") if placed.ok else self._diagnose(
                placed, f"place {obj} {where}")
        blind = not self.snapshot.fresh(where)
        self.state.stale_places += int(blind)
        mode = place_mode(self._kind(where), into)
        verb = "insert" if into else "place"
        result = self.hands.place(obj, mode, None if mode is Place.TABLE else where,
                                  why=f"{verb} {obj} {'in' if into else 'on'} {where}")
        self._after_motion([obj, where] if result.code is not SkillCode.NOT_FOUND else [])
        note = " (the surface was not perceived since it last changed)" if blind else ""
        if result.ok:
            done = f"inserted {obj} in" if into else f"placed {obj} on"
            return ok(f"{done} {where}{note}")
        if result.code not in (SkillCode.ESTOP, SkillCode.BLOCKED, SkillCode.TIMEOUT):
            self.snapshot.doubt(where)  # what it is is asked again on its next use
        return self._diagnose(result, f"{verb} {obj}{note}")

    def _drawer_motion(self, drawer: str, opening: bool) -> SkillResult:
        verb = "open" if opening else "close"
        result = self.hands.move_drawer(drawer, opening, why=f"{verb} {drawer}")
        if result.data.get("blame") != "detector":  # the handle was found: the arm moved
            self._after_motion([drawer])
        if result.ok:
            self.snapshot.drawer(drawer, opening)
            return ok(f"{drawer} {verb}ed" if opening else f"{drawer} closed")
        return self._diagnose(result, f"{verb}_drawer {drawer}")

    def _run_action(self, action: Action, params: list[str]) -> SkillResult:
        state = self.state
        if action is Action.SPEAK:
            state.spoken.append(params[0])
            return ok("completed speech")
        if action is Action.LISTEN:
            state.wait(LISTEN_S)
            heard = state.poll_events()
            if any("person" in e for e in heard):
                self.snapshot.invalidate()
            return ok("; ".join(heard) if heard else "nothing heard")
        refusal = self.context.action_refusal()
        if refusal is not None:
            return refusal
        if state.models is None and action is not Action.MOVE_ARM:
            return fail(SkillCode.BLOCKED, f"{action.value} needs perception, and no "
                        "detector model is wired to these tools")
        if action is Action.MOVE_ARM:
            if params[0] not in POSTURES:
                return fail(SkillCode.BAD_ARGS, f"unknown posture {params[0]!r}; valid: "
                            f"{', '.join(POSTURES)}")
            status = self.episode.act(home(), "observation posture")
            self._after_motion([])
            return self._diagnose(SkillResult.from_status(status, "move_arm"), "move_arm")
        if action is Action.PERCEIVE:
            return self._perceive(params[0])
        state.substantive += 1
        if action is Action.PICK:
            return self._pick(params[0], params[1] if len(params) > 1 else "")
        if action in (Action.PLACE, Action.INSERT):
            return self._put(params[0], params[1], into=action is Action.INSERT)
        return self._drawer_motion(params[0], opening=action is Action.OPEN_DRAWER)

    # -- the tools ----------------------------------------------------------------------------

    def reflect(self, text: str) -> SkillResult:
        """Write down your reasoning (plan, what you observed, what you will do next and why);
        changes nothing in the world.

        Args:
            text: the reflection, a few structured sentences.
        """
        self.state.reflections.append(text)
        self.snapshot.tick()
        return ok("reflection noted")

    def act(self, action: Action, params: list[str]) -> SkillResult:
        """Execute exactly one action on the robot; returns a status or a concise diagnostic.

        Args:
            action: move_arm [posture: home|observe], perceive [target: an object, a
                container, a drawer or the table; perceiving the table lists everything
                in view with its kind], pick [object, optional: the drawer it lies in, or the
                pose it will be turned into], place [object, surface: the table, an object,
                a board slot, or a pose to turn the object into on the table: upright,
                upside-down, on-side, handle-<left|right|toward-robot|away-from-robot>],
                insert [object, container or drawer], open_drawer [drawer], close_drawer
                [drawer], speak [text], listen [] (waits a moment without moving and
                reports what happened: the operator's words, the e-stop, a person changing
                things). Name things as the snapshot's kind(...) facts do.

            params: the action's parameters in order, as strings.
        """
        self.snapshot.tick()
        layout = ACTIONS[action]
        need = [p for p in layout if not p.endswith("?")]
        if not len(need) <= len(params) <= len(layout) or not all(
                isinstance(p, str) and p.strip() for p in params):
            shown = ", ".join(layout) or "no parameters"
            return fail(SkillCode.BAD_ARGS, f"act {action.value} was not run: it takes "
                        f"[{shown}] (non-empty strings), got {params!r}")
        result = self._run_action(action, [p.strip() for p in params])
        stopped = self.episode.stopped
        if result.ok and stopped is not None:  # e.g. a perception whose look was refused
            return fail(code_for_reason(str(stopped.get("reason", ""))),
                        f"{action.value}: {_DIAGNOSES[SkillCode.ESTOP]} "
                        f"({stopped.get('message', '')})")
        return result

    def get_state_snapshot(self) -> SkillResult:
        """The perceived semantic state: facts with the step each was last seen at and
        whether it is stale; refreshed only by act perceive."""
        self.snapshot.tick()
        return ok(self.snapshot.render())

    def check_events(self) -> SkillResult:
        """Exogenous events since the last check (operator utterances, e-stop, a person
        changing the scene), as text."""
        self.snapshot.tick()
        self.state.event_checks += 1
        events = self.state.poll_events()
        if any("person" in e for e in events):
            self.snapshot.invalidate()
        return ok("; ".join(events) if events else "no events")


def planner_tools(context: ToolContext) -> Sequence[ToolFunction]:
    """The ``planner`` tool set over ``context`` (see :class:`PlannerTools`)."""
    return PlannerTools(context).functions()


register_tool_set("planner", planner_tools)
