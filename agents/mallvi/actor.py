"""MALLVI's Localizer -> Thinker -> Actor chain for one move (paper section 3).

The Localizer finds the source (and the destination) with the shared ``locate`` skill, active
search included; the Thinker chooses among the localised grasp candidates and the place mode;
the Actor runs them through the skills (``execute_grasp``, ``place_on`` / ``place_in`` /
``place_at``) and reports only what its primitives said: never the task's reward or
predicates. Base frame (z up, table top z = 0), metres.
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
from agentic_env.agents.perception import cluster_near, lift_pixel, remove_table
from agentic_env.agents.skills import SkillCode, SkillIO, SkillResult, grounding, locate
from agentic_env.agents.skills.locate import Target
from agentic_env.agents.skills.pick import Grasp, execute_grasp, plan_grasps
from agentic_env.agents.skills.place import place_at, place_in, place_on
from agentic_env.agents.skills.scene import SceneView

#: Grasp candidates shown to the Thinker.
CANDIDATES_SHOWN = 5
#: Largest gap (m) between neighbouring points of one board in the shoulder cloud.
BOARD_GAP = 0.02
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

    def detector(self, obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> roles.Detection | None:
        """The Localizer as the ``locate`` skill's detector."""
        return roles.localize(self.ctx, obs, camera, name, part)

    def run(self, move: Move, memory: SceneMemory) -> ActorReport:
        """One attempt at ``move``; model failures of a role end it, blamed on the role."""
        if move.rotation_deg:
            return ActorReport(False, f"BAD_ARGS: {move} asks for a turn of "
                               f"{move.rotation_deg:g} degrees, which this Actor cannot do",
                               "execution")
        try:
            if self.held is None or self.held.name != move.source:
                report = self._pick(move)
                if report is not None:
                    return report
            return self._place(move, memory)
        except ModuleFailedError as exc:
            return ActorReport(False, f"the {exc.module} failed: {exc}", exc.module)
        except RoleAnswerError as exc:
            return ActorReport(False, str(exc), exc.role)

    def _locate(self, name: str) -> Target | str:
        found = locate(self.io, self.detector, name, max_moves=self._search_moves())
        return found.data["target"] if found.ok else found.render()

    def _pick(self, move: Move) -> ActorReport | None:
        """Pick ``move``'s source (``None`` when it is held now)."""
        if self.held is not None:  # something else is in the hand: set it down first
            result = place_at(self.io, self.held, why=f"set down {self.held.name}")
            self._after_place(result)
        target = self._locate(move.source)
        if isinstance(target, str):
            return ActorReport(False, f"pick of {move.source}: {target}", "localizer")
        yaw = grounding.tcp_yaw(self.io.obs["tcp_pose"])
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
        self.held = result.data["held"]
        return None

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
        if mode == "in":
            return place_in(self.io, self.held, target, view=view, why=why)
        if mode == "slot":  # a flat mark: centre on its middle, lean on the whole board
            point = lift_pixel(self.io.obs, target.camera, target.detection.point)
            if point is not None:
                board = cluster_near(remove_table(view.cloud("shoulder")), point,
                                     radius=BOARD_GAP)
                return place_on(self.io, self.held, target, cloud=board, centre=point[:2],
                                align_faces=True, view=view, why=why)
        return place_on(self.io, self.held, target, align_faces=True, view=view, why=why)

    def _after_place(self, result: SkillResult) -> None:
        width = float(np.asarray(self.io.obs["gripper_width"]).ravel()[0])
        if result.ok or width >= HOLDING_WIDTH:
            self.held = None

    def state(self) -> dict[str, Any]:
        """What the hand holds, for the trace."""
        return {"held": None if self.held is None else self.held.name}
