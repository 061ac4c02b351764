"""MALLVI's Localizer -> Thinker -> Actor chain for one move (paper section 3).

The Localizer finds the source (and the destination) with the shared ``locate`` skill, active
search included; the Thinker chooses among the localised grasp candidates and the place mode;
the Actor runs them through the skills (``execute_grasp``, ``place_on`` / ``place_in`` /
``place_at``) and reports only what its primitives said: never the task's reward or
predicates. An in-place turn into a named pose runs through the turn skills
(``pick_to_turn`` with the Thinker judging each turning grasp, then ``place_turned``); a turn
about the vertical is a pick and a place at the same spot with the wrist turned; a drawer
move locates the drawer's handle and opens or closes it with the drawer skills. Base frame
(z up, table top z = 0), metres, angles in radians unless named ``_deg``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.agents.mallvi import roles
from agentic_env.agents.mallvi.memory import SceneMemory
from agentic_env.agents.mallvi.roles import Move, RoleAnswerError
from agentic_env.agents.models.context import ModuleContext, ModuleFailedError
from agentic_env.agents.perception import (
    GraspCandidate,
)
from agentic_env.agents.skills import SkillCode, SkillIO, SkillResult, grounding, locate, turn
from agentic_env.agents.skills.drawers import close_drawer, handle_pose, open_drawer, outward_yaw
from agentic_env.agents.skills.locate import Target, look_from_above
from agentic_env.agents.skills.pick import Grasp, execute_grasp, plan_grasps
from agentic_env.agents.skills.place import place_at, place_in, place_in_slot, place_on
from agentic_env.agents.skills.reorient import Reorienter
from agentic_env.agents.skills.scene import SceneView, kinematics

#: Grasp candidates shown to the Thinker.
CANDIDATES_SHOWN = 5
#: A gripper opening (m) below this after a failed place means the object is still held.
HOLDING_WIDTH = 0.08


@dataclass(frozen=True)
class ActorReport:
    """What the Actor says about one attempt: primitive status only.

    Attributes:
        ok: every primitive of the attempt ran.
        text: its account, for the Reflector.
        blame: the role at fault when the attempt stopped early (``localizer``,
            ``thinker``, ``execution``), else ``None``.
        place_point: where a ``point`` place set the source down (x, y), m.
    """

    ok: bool
    text: str
    blame: str | None = None
    place_point: tuple[float, float] | None = None


class MoveRunner:
    """Runs one move's Localizer -> Thinker -> Actor chain over the agent's robot access.

    Args:
        io: the agent (its ``obs``, ``act`` within its limits, ``event``).
        ctx: how the roles reach their models.
        rng: grasp sampling.
        search_moves: arm moves a search for a target may take now.
    """

    def __init__(self, io: SkillIO, ctx: ModuleContext, rng: np.random.Generator,
                 search_moves: Callable[[], int]) -> None:
        self.io, self.ctx, self.rng = io, ctx, rng
        self._search_moves = search_moves
        self.held: grounding.HeldObject | None = None
        #: The TCP pose (4x4) that picked what the hand holds (``None`` for a turning pick).
        self.grasp: np.ndarray | None = None
        self._reorienter: Reorienter | None = None

    def detector(self, obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> roles.Detection | None:
        """The Localizer as the ``locate`` skill's detector."""
        return roles.localize(self.ctx, obs, camera, name, part)

    def run(self, move: Move, memory: SceneMemory) -> ActorReport:
        """One attempt at ``move``; model failures of a role end it, blamed on the role."""
        try:
            if move.drawer_state is not None:
                return self._drawer(move)
            if move.is_turn:
                return self._turn(move) if move.pose else self._yaw_turn(move)
            if self.held is None or self.held.name != move.source:
                report = self._pick(move)
                if report is not None:
                    return report
            return self._place(move, memory)
        except ModuleFailedError as exc:
            return ActorReport(False, f"the {exc.module} failed: {exc}", exc.module)
        except RoleAnswerError as exc:
            return ActorReport(False, str(exc), exc.role)

    def _locate(self, name: str, part: str = "object") -> Target | str:
        found = locate(self.io, self.detector, name, part, max_moves=self._search_moves())
        return found.data["target"] if found.ok else found.render()

    def _free_hand(self, keep: str | None = None) -> None:
        """Set down whatever the hand holds (unless it is ``keep``) on a free spot."""
        if self.held is not None and self.held.name != keep:
            result = place_at(self.io, self.held, why=f"set down {self.held.name}")
            self._after_place(result)

    def _outward_yaw(self, drawer: str) -> float | str:
        """Yaw that points the tool x axis out of ``drawer``'s cabinet (from its handle),
        or why it could not be found."""
        handle = self._locate(drawer, "handle")
        if isinstance(handle, str):
            return handle
        fitted = handle_pose(self.io, handle)
        return outward_yaw(fitted.data["pose"]) if fitted.ok else fitted.render()

    def _pick(self, move: Move) -> ActorReport | None:
        """Pick ``move``'s source (``None`` when it is held now)."""
        self._free_hand()
        yaw: float | str = grounding.tcp_yaw(self.io.obs["tcp_pose"])
        if move.from_drawer:  # the wrist's bulk away from the cabinet
            yaw = self._outward_yaw(move.from_drawer)
            if isinstance(yaw, str):
                return ActorReport(False, f"pick of {move.source} out of "
                                   f"{move.from_drawer}: {yaw}", "localizer")
        target = self._locate(move.source)
        if isinstance(target, str):
            return ActorReport(False, f"pick of {move.source}: {target}", "localizer")
        candidates, _slab, scene = plan_grasps(self.io, target, yaw, self.rng)
        if not candidates:  # nothing graspable in that view: look straight down with the wrist
            closer = self._wrist_view(target)
            if closer is not None:
                target = closer
                candidates, _slab, scene = plan_grasps(self.io, target, yaw, self.rng)
        shown = candidates[:CANDIDATES_SHOWN]
        choice = roles.think_pick(self.ctx, self.io.obs, move, [
            {"pose": c.pose, "width": c.width, "score": c.score} for c in shown])
        self.io.event("thinker", phase="pick", subtask=str(move), order=list(choice.order),
                      candidates=len(shown), reasoning=choice.reasoning)
        if not choice.order:
            return ActorReport(False, f"GRASP_FAILED: the Thinker chose none of "
                               f"{len(shown)} grasp candidates for {move.source}", "thinker")
        result = SkillResult(SkillCode.GRASP_FAILED, "no grasp tried")
        for index in choice.order:
            result = execute_grasp(self.io, Grasp(shown[index], target, scene), str(move))
            if result.ok or result.code is not SkillCode.UNREACHABLE:
                break
        if not result.ok:
            return ActorReport(False, result.render(), "execution")
        self.held, self.grasp = result.data["held"], result.data["grasp"]
        return None

    def _wrist_view(self, target: Target) -> Target | None:
        """``target`` located again by the wrist camera from straight above it (``None``
        when the arm cannot get there or the wrist camera does not find it)."""
        found = look_from_above(self.io, self.detector, target)
        return found.data["target"] if found.ok else None

    def _place(self, move: Move, memory: SceneMemory) -> ActorReport:
        """Set the held source down at ``move``'s destination."""
        assert self.held is not None
        point = memory.resolve(move.destination, move.source) if move.from_memory else None
        if move.from_memory and point is None:
            return ActorReport(False, f"NOT_FOUND: the Descriptor remembers no "
                               f"{move.destination!r} for {move.source}", "localizer")
        target: Target | None = None
        if move.from_memory:
            described = f"remembered point (x, y) = {np.round(point, 3).tolist()}"
        elif move.destination == "table":
            described = "the table (free spots)"
        else:
            found = self._locate(move.destination)
            if isinstance(found, str):
                return ActorReport(False, f"place of {move.source}: {found}", "localizer")
            target = found
            centre, top = grounding.top_of(target.cloud)
            described = (f"{move.destination}: top centre ({centre[0]:.3f}, {centre[1]:.3f}),"
                         f" top z {top:.3f}, seen by the {target.camera} camera")
        choice = roles.think_place(self.ctx, self.io.obs, move, described, point)
        self.io.event("thinker", phase="place", subtask=str(move), mode=choice.mode,
                      point=choice.point, reasoning=choice.reasoning)
        if choice.mode is None:
            return ActorReport(False, f"the Thinker found no way to place {move.source}",
                               "thinker")
        result = self._release(move, choice.mode, choice.point, target)
        self._after_place(result)
        return ActorReport(result.ok, f"{result.code.value}: {result.message}",
                           None if result.ok else "execution",
                           choice.point)

    def _release(self, move: Move, mode: str, point: tuple[float, float] | None,
                 target: Target | None) -> SkillResult:
        assert self.held is not None
        view, why = SceneView(self.io.obs), str(move)
        if mode == "table":
            return place_at(self.io, self.held, view=view, why=why)
        if mode == "point":
            return place_at(self.io, self.held, position=np.asarray(point), view=view, why=why)
        if target is None:
            return SkillResult(SkillCode.BAD_ARGS, f"place mode {mode!r} needs a located "
                               f"destination, not {move.destination!r}")
        if mode == "drawer":
            return self._into_drawer(move.destination, why)
        if mode == "in":
            return place_in(self.io, self.held, target, view=view, why=why)
        if mode == "slot":
            return place_in_slot(self.io, self.detector, self.held, target, view=view, why=why)
        return place_on(self.io, self.held, target, align_faces=True, view=view, why=why)

    def _into_drawer(self, drawer: str, why: str) -> SkillResult:
        """Drop the held object into the open ``drawer``, the wrist turned out of the
        cabinet."""
        assert self.held is not None
        yaw = self._outward_yaw(drawer)
        inside = self._locate(drawer, "interior")
        if isinstance(yaw, str) or isinstance(inside, str):
            why_not = yaw if isinstance(yaw, str) else inside
            return SkillResult(SkillCode.NOT_FOUND, f"the inside of {drawer}: {why_not}")
        # the scene as seen now: locating may have moved the arm out of the view first
        return place_in(self.io, self.held, inside, yaw=yaw, view=SceneView(self.io.obs),
                        why=why)

    # -- turns and drawers ---------------------------------------------------------------

    @property
    def reorienter(self) -> Reorienter:
        """The turn geometry, checked against the arm's reach (made on first use)."""
        if self._reorienter is None:
            self._reorienter = Reorienter(self.io.workspace, kinematics=kinematics())
        return self._reorienter

    def _turn(self, move: Move) -> ActorReport:
        """Turn the source into ``move.pose`` at its spot: a grasp from which the wrist can
        turn it (each judged by the Thinker), then the turned place."""
        assert move.pose is not None
        self._free_hand()
        target = self._locate(move.source)
        if isinstance(target, str):
            return ActorReport(False, f"turn of {move.source}: {target}", "localizer")

        def judge(image: np.ndarray, candidate: GraspCandidate, seen: Target) -> tuple[bool, str]:
            choice = roles.think_pick(self.ctx, self.io.obs, move, [
                {"pose": candidate.pose, "width": candidate.width, "score": candidate.score}])
            self.io.event("thinker", phase="pick", subtask=str(move),
                          order=list(choice.order), candidates=1, reasoning=choice.reasoning)
            return bool(choice.order), choice.reasoning

        picked = turn.pick_to_turn(self.io, target, move.pose, self.reorienter, judge=judge,
                                   why=str(move))
        if not picked.ok:
            blame = "thinker" if picked.data.get("rejected") and not picked.data.get(
                "failures") else "execution"
            return ActorReport(False, picked.render(), blame)
        self.held, self.grasp = picked.data["held"], None
        placed = turn.place_turned(self.io, picked.data["grip"], move.pose, self.reorienter,
                                   str(move))
        self._after_place(placed)
        return ActorReport(placed.ok, f"{placed.code.value}: {placed.message}",
                           None if placed.ok else "execution")

    def _yaw_turn(self, move: Move) -> ActorReport:
        """Turn the source ``move.rotation_deg`` about the vertical (clockwise from above)
        where it stands: the Thinker's pick, then the turned place on the same spot."""
        if self.held is None or self.held.name != move.source or self.grasp is None:
            report = self._pick(move)
            if report is not None:
                return report
        assert self.held is not None and self.grasp is not None
        result = turn.place_turned_in_place(self.io, self.held, self.grasp,
                                            -np.radians(move.rotation_deg), str(move))
        self._after_place(result)
        return ActorReport(result.ok, f"{result.code.value}: {result.message}",
                           None if result.ok else "execution")

    def _drawer(self, move: Move) -> ActorReport:
        """Open or close the drawer ``move.source`` by its handle."""
        self._free_hand()
        handle = self._locate(move.source, "handle")
        if isinstance(handle, str):
            return ActorReport(False, f"handle of {move.source}: {handle}", "localizer")
        skill = open_drawer if move.drawer_state == "open" else close_drawer
        result = skill(self.io, handle, str(move))
        blame = None if result.ok else (
            "localizer" if result.code is SkillCode.NOT_FOUND else "execution")
        return ActorReport(result.ok, f"{result.code.value}: {result.message}", blame)

    def _after_place(self, result: SkillResult) -> None:
        width = float(np.asarray(self.io.obs["gripper_width"]).ravel()[0])
        if result.ok or width >= HOLDING_WIDTH:
            self.held, self.grasp = None, None

    def state(self) -> dict[str, Any]:
        """What the hand holds, for the trace."""
        return {"held": None if self.held is None else self.held.name}
