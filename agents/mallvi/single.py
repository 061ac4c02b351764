"""The single-agent baseline of the MALLVI paper (Fig. 2, Table 1 "Single-Agent").

One model call plans every move of the episode, with pick and place pixels in the first
shoulder image; the moves then run open-loop from that first view (its depth lifts the
pixels to 3D clouds), with no Localizer, no Thinker and no Reflector. Nothing is looked at
again, but the executor keeps track of what its own moves did (:class:`FirstView`): an
object a move set down is where the hand put it (its first points moved as the hand moved
it) and counts as part of what it was set down on or in, and its first points no longer count
for the things it stood on or beside. Base frame, metres.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from agentic_env.agents.mallvi import roles
from agentic_env.agents.mallvi.roles import PlannedMove
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.perception import PointCloud, target_cloud
from agentic_env.agents.runtime import Manipulator, Place
from agentic_env.agents.skills import Detection, SkillCode, SkillResult
from agentic_env.agents.skills.holding import HeldObject
from agentic_env.agents.skills.locate import MIN_TARGET_POINTS, Target

#: Grasp candidates tried per pick (the next only when the arm cannot reach one).
GRASPS_TRIED = 3
#: A picked object's first points are those of its target cloud within its measured radius
#: of the grasp axis plus this (m) and at least this high (m) above its measured bottom:
#: what it stood on (a plate's top, a cube's) stays behind.
HELD_MARGIN = 0.005
SUPPORT_CLEARANCE = 0.003


class FirstView:
    """The first shoulder view as the plan's own moves changed it (open loop: what the
    executor did, never what a camera saw since).

    Args:
        obs: the first observation, the one the plan was made from.

    Attributes:
        seen: that observation without the objects the moves took away (their first pixels
            hold no depth return, 0).
        moved: each object a move picked, by the plan's name: its first points, carried to
            where the hand set it down (base frame, m; the pixels stay those of the first
            image).
        in_hand: those of them picked and not set down as planned since: where they are is
            not known.
        onto: what the moves set down on or in each object, by name (it is part of that
            object's target now: a bin's contents, a plate's cube).
    """

    def __init__(self, obs: Mapping[str, np.ndarray]) -> None:
        self.obs = obs
        self.seen: dict[str, np.ndarray] = dict(obs)
        self.moved: dict[str, PointCloud] = {}
        self.in_hand: set[str] = set()
        self.onto: dict[str, list[str]] = {}

    def target(self, name: str, seen: Detection | None, whole: bool) -> Target | None:
        """``name`` as the plan's moves left it: where a move set it down, else as the first
        image showed it (``seen``) without the points of what the moves took away and with
        those of what they set down on or in it; ``whole``: the box's cloud as one target.
        ``None`` when there is nothing to act on (a moved target's detection is where the
        first image showed it, with no box)."""
        if name in self.in_hand:
            return None
        if name in self.moved:
            cloud = self.moved[name]
            if len(cloud) < MIN_TARGET_POINTS:
                return None
            u, v = np.median(cloud.pixels, axis=0)
            return Target(name, "object", "shoulder", Detection((int(u), int(v)), None), cloud)
        if seen is None:
            return None
        cloud = target_cloud(self.seen, "shoulder", seen.point, seen.box)
        cloud = PointCloud.concatenate([cloud, *(self.moved[n] for n in self.onto.get(name, ()))])
        if len(cloud) < MIN_TARGET_POINTS:
            return None
        detection = Detection(seen.point, None) if whole else seen
        return Target(name, "object", "shoulder", detection, cloud)

    def picked(self, source: Target, grasp: np.ndarray, held: HeldObject) -> None:
        """Record that ``source`` is in the hand, picked with the TCP at ``grasp`` (4x4,
        base frame) and measured as ``held``: its points (those of its cloud within the
        measured object, :data:`HELD_MARGIN`) have left their place."""
        points = source.cloud.points
        axis = np.linalg.norm(points[:, :2] - np.asarray(grasp)[:2, 3], axis=1)
        bottom = float(np.asarray(grasp)[2, 3]) - held.below_tcp
        cloud = source.cloud.select((axis <= held.radius + HELD_MARGIN)
                                    & (points[:, 2] >= bottom + SUPPORT_CLEARANCE))
        self.moved[source.name] = cloud
        self.in_hand.add(source.name)
        depth = np.array(self.seen["shoulder_depth"], copy=True)  # a new image: depth is
        u, v = cloud.pixels.T                                     # filtered once per image
        depth[v, u] = 0.0
        self.seen = {**self.seen, "shoulder_depth": depth}
        for contents in self.onto.values():
            if source.name in contents:
                contents.remove(source.name)

    def set_down(self, name: str, grasp: np.ndarray, release: np.ndarray,
                 onto: str | None) -> None:
        """Record that the picked ``name``, taken with the TCP at ``grasp``, was released
        with it at ``release`` (4x4 base-frame poses) on or in ``onto`` (``None``: on the
        table): its points moved as the hand did."""
        motion = np.asarray(release, float) @ np.linalg.inv(np.asarray(grasp, float))
        cloud = self.moved[name]
        self.moved[name] = PointCloud(cloud.points @ motion[:3, :3].T + motion[:3, 3],
                                      cloud.colors, cloud.pixels)
        self.in_hand.discard(name)
        if onto is not None:
            self.onto.setdefault(onto, []).append(name)


def run_single_agent(hands: Manipulator, ctx: ModuleContext, instruction: str) -> bool:
    """Plan once and run every move; whether every move's primitives ran.

    Raises:
        ModuleFailedError: the planning call failed after its re-asks.
        RoleAnswerError: the plan cannot be used.
    """
    episode = hands.episode
    view = FirstView(episode.obs)
    plan = roles.plan_single(ctx, view.obs, instruction)
    episode.event("single_agent_plan", moves=[str(p.move) for p in plan])
    all_ok = True
    for index, planned in enumerate(plan):
        result = _run_move(hands, view, planned)
        episode.event("actor", index=index, subtask=str(planned.move), ok=result.ok,
                      report=result.render()[:500])
        if not result.ok:
            all_ok = False
            episode.fail_first("execution", result.message)
    return all_ok


def _run_move(hands: Manipulator, view: FirstView, planned: PlannedMove) -> SkillResult:
    move = planned.move
    source = view.target(move.source, planned.pick, whole=False)
    if source is None:
        return SkillResult(SkillCode.NOT_FOUND, f"no points at the planned pick of "
                           f"{move.source}")
    picked = hands.pick_target(source, lambda offered, slab, scene: range(len(offered)),
                               shown=GRASPS_TRIED, why=str(move))
    if not picked.ok:
        return picked
    view.picked(source, picked.data["grasp"], picked.data["held"])
    result = _place(hands, view, planned)
    if result.ok:
        onto = None if planned.place_mode == "table" else move.destination
        view.set_down(source.name, picked.data["grasp"], result.data["pose"], onto)
    return result


def _place(hands: Manipulator, view: FirstView, planned: PlannedMove) -> SkillResult:
    """Set the held source of ``planned`` down where the plan says."""
    move = planned.move
    if planned.place_mode == "table":
        return hands.place(move.source, Place.TABLE, why=str(move))
    destination = view.target(move.destination, planned.place, whole=True)
    if destination is None:
        return SkillResult(SkillCode.NOT_FOUND, f"no points at the planned place on "
                           f"{move.destination}")
    mode = Place.IN if planned.place_mode in ("in", "drawer") else Place.ON
    return hands.place(move.source, mode, destination, why=str(move))
