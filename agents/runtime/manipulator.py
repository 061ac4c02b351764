"""One :class:`Manipulator` for everything an agent does to a thing *by its name*: locate it
(active search included), pick it (with the agent's grasp judgement), place it on, in or at
something or into a board slot or a drawer, turn it into a pose or about the vertical, open
and close drawers; with one rule for what the hand holds after a failure.

Every agent calls it; an agent's own package decides *what* to do (which object, which place
mode, which grasp its model prefers) and maps a failed result's ``blame`` onto its own
failure sources. Results are :class:`~agentic_env.agents.skills.SkillResult` s; a failed one
carries ``data["blame"]``: ``detector`` (the target was not found), ``grasp`` (the grasp
judgement accepted nothing) or ``execution`` (the robot could not do it), and
``data["failures"]`` lists failed attempts that were recovered from. Base frame (z up, table
top z = 0), metres, radians.

The rule for what is held: a pick that succeeds holds its object; a place that succeeds
holds nothing; after a failed place the object counts as still held while the pads are
neither shut (it slipped out) nor opened past half the release opening beyond their
distance right after the pick (it was let go): a blocked descent that squeezed the pads a
few millimetres still holds it. A pick of the object the pads still grip by that rule (a
step retried after a checker judged a good pick failed) moves nothing and succeeds: the
object hangs in the hand, where no camera sees it as it lies on the table, and grasping
again would only drop it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any

import numpy as np

from agentic_env.agents import skills
from agentic_env.agents.perception import GraspCandidate, PointCloud
from agentic_env.agents.runtime.episode import Episode
from agentic_env.agents.skills import SkillCode, SkillResult, holding, turn
from agentic_env.agents.skills.locate import Detector, Target
from agentic_env.agents.skills.pick import LOOK_AGAIN, LOOKED_ABOVE
from agentic_env.agents.skills.reorient import Reorienter
from agentic_env.agents.skills.result import after_retry
from agentic_env.agents.skills.scene import SceneView, at_home, kinematics
from agentic_env.contract.actions import home
from agentic_env.primitives.types import RELEASE_OPENING, PrimitiveConfig

#: After a failed place the object counts as held while the pads are no more than this
#: wider than right after the pick, m (a release opens them by :data:`RELEASE_OPENING`).
HOLD_TOLERANCE = RELEASE_OPENING / 2
#: ... and not closed below this, m (nothing between them).
SHUT = PrimitiveConfig().min_grasp_width
#: Size assumed for an object the agent believes it holds but did not pick here:
#: (below the TCP, radius), m.
UNKNOWN_HELD = (0.03, 0.03)

#: ``judge_for(name, action) -> judge``: the agent's grasp judgement of candidates for
#: ``name`` in the step ``action`` (a few words, e.g. ``(pick red-cube-1)``).
JudgeFactory = Callable[[str, str], skills.GraspJudge]
#: ``rank(candidates, slab, scene) -> order``: indices of ``candidates`` to try, best first
#: (a model that chooses among several grasps at once, e.g. MALLVI's Thinker, which is shown
#: each drawn over ``slab``, the grasped part of the target's cloud, and ``scene``, the cloud
#: they were planned in); empty = none acceptable.
GraspRanker = Callable[[Sequence[GraspCandidate], PointCloud, PointCloud], Sequence[int]]


class Place(StrEnum):
    """How a held object is put down.

    ``table``: on a free table spot (or at a given point); ``on``: on top of a located
    object, faces aligned; ``on_loose``: on top, as it hangs; ``in``: into a container;
    ``slot``: into a board slot; ``drawer``: into an open drawer, wrist out of the cabinet.
    """

    TABLE = "table"
    ON = "on"
    ON_LOOSE = "on_loose"
    IN = "in"
    SLOT = "slot"
    DRAWER = "drawer"


def _blamed(result: SkillResult, blame: str, **data: Any) -> SkillResult:
    return SkillResult(result.code, result.message, {**result.data, **data, "blame": blame})


class Manipulator:
    """Named-object manipulation over one episode's robot access (module docstring).

    Args:
        episode: the robot access, its limits and trace.
        detector: the agent's detector (points at a named thing in an image).
        rng: grasp sampling.
        judge_for: the agent's grasp judgement; ``None`` accepts every candidate.
        judged: grasp candidates judged per view.
        search_cap: most arm moves of one search for a target (besides the action budget).

    Attributes:
        held: what the hand holds, as measured at the pick (``None``: nothing).
        grasp: the top-down TCP pose (4x4) it was picked with (``None`` for a turning pick).
        turning: how it is held when it was picked to be turned into a pose.
    """

    def __init__(self, episode: Episode, detector: Detector, rng: np.random.Generator, *,
                 judge_for: JudgeFactory | None = None, judged: int = 3,
                 search_cap: int | None = None) -> None:
        self.episode = episode
        self.detector = detector
        self.rng = rng
        self.judge_for = judge_for
        self.judged = judged
        self.search_cap = search_cap
        self.held: holding.HeldObject | None = None
        self.grasp: np.ndarray | None = None
        self.turning: turn.TurningGrip | None = None
        self._hold_width = 0.0
        self._turn_goal: str | None = None  # the pose a turning pick's grip is for
        self._reorienter: Reorienter | None = None
        #: (x, y) of releases that failed, by container: a retry tries another spot.
        self._failed_spots: dict[str, list[np.ndarray]] = {}

    # -- what is held -------------------------------------------------------------------------

    def holding(self, name: str | None = None) -> bool:
        """Whether the hand holds something (``name``: that thing)."""
        return self.held is not None and (name is None or self.held.name == name)

    def held_as(self, name: str) -> holding.HeldObject:
        """What the hand holds, taken to be ``name`` (an object the agent believes it holds
        but did not pick through this manipulator gets :data:`UNKNOWN_HELD`)."""
        if self.held is not None and self.held.name == name:
            return self.held
        return holding.HeldObject(name, *UNKNOWN_HELD)

    def _picked(self, result: SkillResult, grasp: np.ndarray | None,
                turning: turn.TurningGrip | None = None, goal: str | None = None) -> None:
        self.held, self.grasp, self.turning = result.data["held"], grasp, turning
        self._turn_goal = goal
        self._hold_width = self._width()

    def _released(self, result: SkillResult) -> None:
        """Apply the hold rule after a place."""
        if result.ok or not self._gripped():
            self.held = self.grasp = self.turning = None

    def _gripped(self) -> bool:
        """Whether the pads still grip what was picked (the gripper's own width, no
        camera): neither shut (it slipped out) nor opened past :data:`HOLD_TOLERANCE` beyond
        their distance right after the pick (it was let go)."""
        return SHUT <= self._width() <= self._hold_width + HOLD_TOLERANCE

    def _already_held(self, name: str, goal: str | None = None) -> SkillResult | None:
        """The result of a pick of ``name`` when the hand holds it already (by the hold
        rule, :meth:`_gripped`; ``goal``: held by a turning pick for that pose): ``OK``
        with what is held and nothing sent; ``None`` when it has to be picked. Held
        objects whose pads have shut since are forgotten (they slipped out)."""
        if not self.holding(name):
            return None
        if not self._gripped():
            self.held = self.grasp = self.turning = None
            return None
        if goal is not None and (self.turning is None or self._turn_goal != goal):
            return None
        width = self._width()
        self.episode.event("already_held", target=name, gripper_width=round(width, 4))
        return SkillResult(SkillCode.OK, f"{name} is already in the gripper (pads "
                           f"{width * 1000:.0f} mm apart): not picked again",
                           {"held": self.held, "grasp": self.grasp, "already_held": True,
                            **({"grip": self.turning} if self.turning is not None else {})})

    def _width(self) -> float:
        return float(np.asarray(self.episode.obs["gripper_width"]).ravel()[0])

    # -- locating -----------------------------------------------------------------------------

    def locate(self, name: str, part: str = "object", *, camera: str = "shoulder",
               search: bool = True, clear_view: bool = True) -> SkillResult:
        """Find ``name`` (``part``: ``object``, ``handle`` or ``interior``); ``data["target"]``
        is the :class:`Target`. ``search``: look again with the arm moved when the camera
        misses it (within the action budget)."""
        found = skills.locate(self.episode, self.detector, name, part, camera, search=search,
                              clear_view=clear_view,
                              max_moves=self.episode.search_moves(self.search_cap))
        return found if found.ok else _blamed(found, "detector")

    def outward_yaw(self, drawer: str, *, search: bool = True) -> SkillResult:
        """The yaw (rad, ``data["yaw"]``) that points the tool x axis out of ``drawer``'s
        cabinet, from its handle."""
        handle = self.locate(drawer, "handle", search=search)
        if not handle.ok:
            return handle
        fitted = skills.handle_pose(self.episode, handle.data["target"])
        if not fitted.ok:
            return _blamed(fitted, "detector")
        yaw = skills.outward_yaw(fitted.data["pose"])
        return SkillResult(SkillCode.OK, f"{drawer} faces yaw {yaw:.2f} rad", {"yaw": yaw})

    # -- picking ------------------------------------------------------------------------------

    def pick(self, name: str, *, yaw: float | None = None, from_drawer: str | None = None,
             why: str = "") -> SkillResult:
        """Locate and pick ``name`` top-down, judged by the agent's grasp judgement; a grasp
        the arm cannot reach gives way to the next; grasps are planned again from the wrist
        camera when the shoulder view gives none. ``from_drawer``: it lies in that drawer (the
        wrist's bulk is turned out of the cabinet). ``name`` already in the gripper is not
        picked again (:meth:`_already_held`)."""
        held = self._already_held(name)
        if held is not None:
            return held
        if from_drawer is not None:
            outward = self.outward_yaw(from_drawer)
            if not outward.ok:
                return outward
            yaw = outward.data["yaw"]
        why = why or f"pick {name}"
        judge = self.judge_for(name, why) if self.judge_for is not None else None
        result = skills.pick(self.episode, self.detector, name, self.rng, yaw=yaw, judge=judge,
                             judged=self.judged,
                             max_moves=self.episode.search_moves(self.search_cap), why=why)
        if result.ok:
            self._picked(result, result.data["grasp"])
            return result
        if result.code is SkillCode.NOT_FOUND:
            return _blamed(result, "detector")
        return _blamed(result, "grasp" if result.data.get("rejected") else "execution")

    def pick_ranked(self, name: str, rank: GraspRanker, *, yaw: float | None = None,
                    shown: int = 5, why: str = "") -> SkillResult:
        """Locate ``name``, plan its grasps (from the wrist camera above it when the shoulder
        view gives none) and try the best ``shown`` in the order ``rank`` gives; a grasp the
        arm cannot reach gives way to the next. ``name`` already in the gripper is not
        picked again (:meth:`_already_held`)."""
        held = self._already_held(name)
        if held is not None:
            return held
        found = self.locate(name)
        if not found.ok:
            return found
        return self.pick_target(found.data["target"], rank, yaw=yaw, shown=shown, why=why,
                                look_closer=True)

    def pick_target(self, target: Target, rank: GraspRanker, *, yaw: float | None = None,
                    shown: int = 5, why: str = "", look_closer: bool = False) -> SkillResult:
        """Pick the already located ``target`` with its best ``shown`` grasps in the order
        ``rank`` gives (``look_closer``: plan again from the wrist camera above it when its
        view gives none, or when the hand was blocked on its way down or closed on nothing,
        as :func:`~agentic_env.agents.skills.pick` does: a grazing view misplaced it; a
        retry that fails too is reported by the failure before the look, its own sentence
        appended)."""
        name = target.name
        yaw = holding.tcp_yaw(self.episode.obs["tcp_pose"]) if yaw is None else yaw
        candidates, slab, scene = skills.plan_grasps(self.episode, target, yaw, self.rng)
        if not candidates and look_closer:
            closer = skills.look_from_above(self.episode, self.detector, target)
            if closer.ok:
                target = closer.data["target"]
                candidates, slab, scene = skills.plan_grasps(self.episode, target, yaw,
                                                             self.rng)
        offered = candidates[:shown]
        order = [i for i in rank(offered, slab, scene) if 0 <= i < len(offered)]
        if not order:
            return SkillResult(SkillCode.GRASP_FAILED, f"none of {len(offered)} grasp "
                               f"candidates for {name} was chosen", {"blame": "grasp",
                                                                     "rejected": True})
        result = SkillResult(SkillCode.GRASP_FAILED, f"no grasp of {name} was tried")
        for index in order:
            result = skills.execute_grasp(self.episode,
                                          skills.Grasp(offered[index], target, scene),
                                          why or f"pick {name}")
            if result.ok or result.code is not SkillCode.UNREACHABLE:
                break
        if not result.ok and look_closer and result.code in LOOK_AGAIN:
            closer = skills.look_from_above(self.episode, self.detector, target)
            if closer.ok:
                retried = self.pick_target(closer.data["target"], rank, yaw=yaw, shown=shown,
                                           why=why)
                failures = [result.message, *retried.data.get("failures", ())]
                if not retried.ok:  # reported by its cause, the failure before the look
                    failures.append(retried.message)
                    retried = after_retry(_blamed(result, "execution"), retried, LOOKED_ABOVE)
                return SkillResult(retried.code, retried.message,
                                   {**retried.data, "failures": failures})
        if not result.ok:
            return _blamed(result, "execution")
        self._picked(result, result.data["grasp"])
        return result

    def pick_to_turn(self, name: str, pose: str, *, judge: skills.GraspJudge | None = None,
                     why: str = "") -> SkillResult:
        """Locate and pick ``name`` with a grasp from which a place can turn it into
        ``pose`` (``upright``, ``on-side``, ``handle-left``...); ``judge`` overrides the
        agent's grasp judgement. ``name`` already held by a turning pick for ``pose`` is
        not picked again (:meth:`_already_held`)."""
        held = self._already_held(name, pose)
        if held is not None:
            return held
        why = why or f"pick {name} to turn it {pose}"
        if judge is None and self.judge_for is not None:
            judge = self.judge_for(name, why)

        def attempt() -> SkillResult:
            found = self.locate(name)
            if not found.ok:
                return found
            return turn.pick_to_turn(self.episode, found.data["target"], pose,
                                     self.reorienter, judge=judge, judged=self.judged,
                                     why=why, detector=self.detector)

        # no turning grasp accepted and reachable from this arm pose (the arm's configuration
        # after a turn): from home the turn's poses may be reached
        result = self._again_from_home(attempt, SkillCode.GRASP_FAILED,
                                       f"go home to reach a turning grasp of {name}")
        if "blame" in result.data:  # the target was not found
            return result
        if result.ok:
            self._picked(result, None, result.data["grip"], pose)
            return result
        rejected = result.data.get("rejected") and not result.data.get("failures")
        return _blamed(result, "grasp" if rejected else "execution")

    def _again_from_home(self, attempt: Callable[[], SkillResult], code: SkillCode,
                         why: str) -> SkillResult:
        """``attempt()``, and once more from home when it failed with ``code`` away from
        home."""
        result = attempt()
        if result.code is code and not at_home(self.episode.obs):
            self.episode.act(home(), why)
            result = attempt()
        return result

    # -- placing ------------------------------------------------------------------------------

    def place(self, name: str, mode: Place, where: str | Target | None = None, *,
              position: np.ndarray | None = None, why: str = "") -> SkillResult:
        """Put the held ``name`` down: ``where`` is the destination (a container, an object,
        a slot, a drawer), by name or as already located (not for a drawer, whose inside is
        located here); ``None`` for the table; ``position`` an (x, y) point on the table
        for :attr:`Place.TABLE`."""
        held, why = self.held_as(name), why or f"place {name}"
        if mode is Place.TABLE or where is None:
            result = skills.place_at(self.episode, held, position=position,
                                     view=SceneView(self.episode.obs), why=why)
            blame = "detector" if result.code is SkillCode.BLOCKED else "execution"
            return self._after_place(result, blame)
        if isinstance(where, Target):
            target = where
        else:
            found = self.locate(where, "interior" if mode is Place.DRAWER else "object")
            if not found.ok:
                return found
            target = found.data["target"]
        view = SceneView(self.episode.obs)  # as seen now: locating may have moved the arm
        if mode in (Place.IN, Place.DRAWER):
            yaw = None
            if mode is Place.DRAWER:
                outward = self.outward_yaw(target.name)
                if not outward.ok:
                    return outward
                yaw = outward.data["yaw"]
            failed = self._failed_spots.setdefault(target.name, [])
            result = skills.place_in(self.episode, held, target, yaw=yaw, view=view,
                                     avoid=np.array(failed) if failed else None, why=why)
            if not result.ok and "pose" in result.data:
                failed.append(np.asarray(result.data["pose"])[:2, 3])
        elif mode is Place.SLOT:
            result = skills.place_in_slot(self.episode, self.detector, held, target,
                                          view=view, why=why)
        else:
            result = skills.place_on(self.episode, held, target, align_faces=mode is Place.ON,
                                     view=view, why=why)
        # a container with no point in its box: the detector's box held none of it
        return self._after_place(
            result, "detector" if result.code is SkillCode.NOT_FOUND else "execution")

    def _after_place(self, result: SkillResult, blame: str) -> SkillResult:
        self._released(result)
        return result if result.ok else _blamed(result, blame, still_held=self.held is not None)

    def set_down(self, keep: str | None = None) -> SkillResult | None:
        """Put whatever the hand holds (unless it is ``keep``) on a free table spot; ``None``
        when there was nothing to put down."""
        if self.held is None or self.held.name == keep:
            return None
        return self.place(self.held.name, Place.TABLE, why=f"set down {self.held.name}")

    # -- turning ------------------------------------------------------------------------------

    @property
    def reorienter(self) -> Reorienter:
        """The turn geometry, checked against the arm's reach (made on first use)."""
        if self._reorienter is None:
            self._reorienter = Reorienter(self.episode.workspace, kinematics=kinematics())
        return self._reorienter

    def place_turned(self, name: str, pose: str, why: str = "") -> SkillResult:
        """Set the held ``name`` down at its old spot turned into ``pose``: at once when it
        was picked for that turn, else after setting it back down where it was taken from
        and picking it again with a grasp from which the wrist can turn it."""
        if self.turning is None or self.turning.name != name:
            if not self.holding(name) or self.grasp is None:
                return SkillResult(SkillCode.BAD_ARGS, f"{name} was not picked for turning",
                                   {"blame": "execution"})
            down = self.turn_in_place(name, 0.0, f"set {name} down to take it again")
            if not down.ok:
                return down
            picked = self.pick_to_turn(name, pose)
            if not picked.ok:
                return picked
        assert self.turning is not None
        result = turn.place_turned(self.episode, self.turning, pose, self.reorienter,
                                   why or f"turn {name} {pose}")
        return self._after_place(result, "execution")

    def turn_in_place(self, name: str, angle: float, why: str = "") -> SkillResult:
        """Set the held ``name`` back down where it was picked from, turned ``angle`` rad
        about the vertical (counter-clockwise seen from above)."""
        if not self.holding(name) or self.grasp is None:
            return SkillResult(SkillCode.BAD_ARGS, f"{name} is not held from a top-down pick",
                               {"blame": "execution"})
        result = turn.place_turned_in_place(self.episode, self.held_as(name), self.grasp,
                                            angle, why or f"turn {name}")
        return self._after_place(result, "execution")

    # -- drawers ------------------------------------------------------------------------------

    def move_drawer(self, drawer: str, opening: bool, *, search: bool = True,
                    why: str = "") -> SkillResult:
        """Open or close ``drawer`` by its handle; a motion that collided on its way from
        away from home is tried once more from home."""
        move = skills.open_drawer if opening else skills.close_drawer
        why = why or f"{'open' if opening else 'close'} {drawer}"

        def attempt() -> SkillResult:
            handle = self.locate(drawer, "handle", search=search)
            if not handle.ok:
                return handle
            return move(self.episode, handle.data["target"], why)

        # the arm met something on its way from where it was (inside an open drawer after a
        # failed place): from home the motion comes the planned way
        result = self._again_from_home(attempt, SkillCode.COLLISION, f"go home to {why}")
        if result.ok:
            return result
        return _blamed(result, "detector" if result.code is SkillCode.NOT_FOUND else "execution")
