"""MALLVI's Localizer -> Thinker -> Actor chain for one move (paper section 3).

The Localizer finds the source (and the destination) with the shared ``locate`` skill, active
search included; the Thinker chooses among the localised grasp candidates and the place mode;
the Actor runs them through the skills (``execute_grasp``, ``place_on`` / ``place_in`` /
``place_at``) and reports only what its primitives said: never the task's reward or
predicates. An in-place turn into a named pose runs through the turn skills
(``pick_to_turn`` with the Thinker judging each turning grasp, then ``place_turned``); a turn
about the vertical is a pick and a place at the same spot with the wrist turned; a drawer
move locates the drawer's handle and opens or closes it with the drawer skills. Base frame
(z up, table top z = 0), metres, angles in radians unless named ``_deg``. What a move does is
its typed ``kind`` (:data:`~agentic_env.agents.mallvi.roles.MOVE_KINDS`), never its names'
spelling. The Thinker sees a pick's candidates drawn over the local point cloud, numbered on
one sheet (a turning grasp: the one candidate drawn).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.agents.mallvi import roles
from agentic_env.agents.mallvi.memory import SceneMemory
from agentic_env.agents.mallvi.roles import Move, RoleAnswerError
from agentic_env.agents.models.context import ModuleContext, ModuleFailedError
from agentic_env.agents.perception import GraspCandidate, PointCloud, render_grasp
from agentic_env.agents.runtime import Episode, Manipulator, Place
from agentic_env.agents.runtime.manipulator import GraspRanker
from agentic_env.agents.skills import Detection, SkillResult, Target, holding, spots

#: Grasp candidates shown to the Thinker.
CANDIDATES_SHOWN = 5
#: Place mode of each Thinker answer (``point`` is a table place at the chosen point).
PLACE_MODES = {"table": Place.TABLE, "point": Place.TABLE, "drawer": Place.DRAWER,
               "in": Place.IN, "slot": Place.SLOT}
#: MALLVI's role to blame for each kind of manipulator failure.
BLAME = {"detector": "localizer", "grasp": "thinker", "execution": "execution"}


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

    @classmethod
    def of(cls, result: SkillResult, what: str = "",
           place_point: tuple[float, float] | None = None) -> ActorReport:
        """The Actor's account of a manipulator result (``what``: prefix for a failure)."""
        text = f"{result.code.value}: {result.message}"
        if result.ok:
            return cls(True, text, None, place_point)
        blame = BLAME.get(result.data.get("blame", "execution"), "execution")
        return cls(False, f"{what}: {text}" if what else text, blame, place_point)


class MoveRunner:
    """Runs one move's Localizer -> Thinker -> Actor chain through the named-object
    manipulator.

    Args:
        episode: the agent's robot access within its limits.
        ctx: how the roles reach their models.
        rng: grasp sampling.
    """

    def __init__(self, episode: Episode, ctx: ModuleContext, rng: np.random.Generator) -> None:
        self.episode, self.ctx = episode, ctx
        self.hands = Manipulator(episode, self.detector, rng)

    def detector(self, obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> Detection | None:
        """The Localizer as the skills' detector."""
        return roles.localize(self.ctx, obs, camera, name, part)

    def run(self, move: Move, memory: SceneMemory) -> ActorReport:
        """One attempt at ``move``; model failures of a role end it, blamed on the role."""
        try:
            if move.drawer_state is not None:
                self.hands.set_down()
                return ActorReport.of(self.hands.move_drawer(
                    move.source, move.drawer_state == "open", why=str(move)))
            if move.is_turn:
                return self._turn(move) if move.pose else self._yaw_turn(move)
            if not self.hands.holding(move.source):
                report = self._pick(move)
                if report is not None:
                    return report
            return self._place(move, memory)
        except ModuleFailedError as exc:
            return ActorReport(False, f"the {exc.module} failed: {exc}", exc.module)
        except RoleAnswerError as exc:
            return ActorReport(False, str(exc), exc.role)

    def _choose(self, move: Move, candidates: Sequence[GraspCandidate],
                drawings: Sequence[np.ndarray]) -> Sequence[int]:
        """The Thinker's order of ``candidates``, each shown drawn (``drawings``)."""
        choice = roles.think_pick(self.ctx, self.episode.obs, move, [
            {"pose": c.pose, "width": c.width, "score": c.score} for c in candidates],
            drawings)
        self.episode.event("thinker", phase="pick", subtask=str(move),
                           order=list(choice.order), candidates=len(candidates),
                           reasoning=choice.reasoning)
        return choice.order

    def _thinker(self, move: Move) -> GraspRanker:
        """The Thinker as the manipulator's ranking of grasp candidates: each drawn over the
        local point cloud they were planned in, as AgenticLab's grasp judge sees one."""
        def rank(candidates: Sequence[GraspCandidate], slab: PointCloud,
                 scene: PointCloud) -> Sequence[int]:
            return self._choose(move, candidates,
                                [render_grasp(slab, scene, c) for c in candidates])
        return rank

    def _pick(self, move: Move) -> ActorReport | None:
        """Pick ``move``'s source (``None`` when it is held now)."""
        self.hands.set_down()
        yaw = holding.tcp_yaw(self.episode.obs["tcp_pose"])
        if move.from_drawer:  # the wrist's bulk away from the cabinet
            outward = self.hands.outward_yaw(move.from_drawer)
            if not outward.ok:
                return ActorReport.of(outward, f"pick of {move.source} out of "
                                      f"{move.from_drawer}")
            yaw = outward.data["yaw"]
        result = self.hands.pick_ranked(move.source, self._thinker(move), yaw=yaw,
                                        shown=CANDIDATES_SHOWN, why=str(move))
        return None if result.ok else ActorReport.of(result, f"pick of {move.source}")

    def _place(self, move: Move, memory: SceneMemory) -> ActorReport:
        """Set the held source down at ``move``'s destination, as the Thinker chooses."""
        point = memory.resolve(move.remembered) if move.from_memory else None
        if move.from_memory and point is None:
            return ActorReport(False, f"NOT_FOUND: the Descriptor remembers no first "
                               f"position of {move.remembered}", "localizer")
        target: Target | None = None
        if move.from_memory:
            recalled = memory.recall(move.remembered)
            described = (f"the first position of {move.remembered}: (x, y) = "
                         f"{np.round(point, 3).tolist()}"
                         + (f"\nthe Descriptor saw it so:\n{recalled}" if recalled else ""))
        elif move.to_table:
            described = "the table (free spots)"
        else:
            found = self.hands.locate(move.destination)
            if not found.ok:
                return ActorReport.of(found, f"place of {move.source}")
            target = found.data["target"]
            centre, top = spots.top_of(target.cloud)
            described = (f"{move.destination}: top centre ({centre[0]:.3f}, {centre[1]:.3f}),"
                         f" top z {top:.3f}, seen by the {target.camera} camera")
        choice = roles.think_place(self.ctx, self.episode.obs, move, described, point)
        self.episode.event("thinker", phase="place", subtask=str(move), mode=choice.mode,
                           point=choice.point, reasoning=choice.reasoning)
        if choice.mode is None:
            return ActorReport(False, f"the Thinker found no way to place {move.source}",
                               "thinker")
        mode = PLACE_MODES.get(choice.mode, Place.ON)
        if mode is Place.TABLE:
            where: str | Target | None = None
        elif mode is Place.DRAWER:
            where = move.destination  # its inside is located anew
        elif target is None:
            return ActorReport(False, f"BAD_ARGS: place mode {choice.mode!r} needs a located "
                               f"destination, not {move.destination!r}", "execution")
        else:
            where = target
        position = np.asarray(choice.point) if choice.mode == "point" else None
        result = self.hands.place(move.source, mode, where, position=position, why=str(move))
        return ActorReport.of(result, place_point=choice.point)

    def _turn(self, move: Move) -> ActorReport:
        """Turn the source into ``move.pose`` at its spot: a grasp from which the wrist can
        turn it (each judged by the Thinker), then the turned place."""
        assert move.pose is not None
        self.hands.set_down()

        def judge(image: np.ndarray, candidate: GraspCandidate, seen: Target) -> tuple[bool, str]:
            return bool(self._choose(move, [candidate], [image])), "the Thinker's choice"

        picked = self.hands.pick_to_turn(move.source, move.pose, judge=judge, why=str(move))
        if not picked.ok:
            return ActorReport.of(picked, f"turn of {move.source}")
        return ActorReport.of(self.hands.place_turned(move.source, move.pose, str(move)))

    def _yaw_turn(self, move: Move) -> ActorReport:
        """Turn the source ``move.rotation_deg`` about the vertical (clockwise from above)
        where it stands: the Thinker's pick, then the turned place on the same spot."""
        if not self.hands.holding(move.source) or self.hands.grasp is None:
            report = self._pick(move)
            if report is not None:
                return report
        return ActorReport.of(self.hands.turn_in_place(
            move.source, -np.radians(move.rotation_deg), str(move)))

    def state(self) -> dict[str, Any]:
        """What the hand holds, for the trace."""
        held = self.hands.held
        return {"held": None if held is None else held.name}
