"""``plan_grasps`` and ``pick``: grasp candidates on a located target, judged by an injected
callable, executed best first with fallbacks. Base frame (z up, table top z = 0), metres and
radians.

``pick`` plans in the view that located the target; when every judged candidate is
rejected, or the first grasp fails (blocked on its way down, or closed on nothing: the
shoulder camera's grazing view misplaced it), it looks from the wrist camera straight above
the target and plans again, once; when that fails too, the first failure is reported as the
cause, the retry's sentence appended. A grasp the arm cannot reach (refused before moving) gives
way to the next one, and when those run out with the wrist turned away from the hand's yaw,
planning starts again at the hand's yaw.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from agentic_env.agents.perception import (
    GraspCandidate,
    PointCloud,
    camera_cloud,
    grasp_candidates,
    render_grasp,
)
from agentic_env.agents.skills import clearance, holding
from agentic_env.agents.skills.io import SkillIO
from agentic_env.agents.skills.locate import (
    MAX_LOOKS,
    Detector,
    Target,
    locate,
    look_from_above,
)
from agentic_env.agents.skills.result import SkillCode, SkillResult, after_retry
from agentic_env.agents.skills.scene import near_box, without_robot
from agentic_env.contract.actions import pick as pick_action
from agentic_env.geometry.rotations import wrap_angle

#: ``judge(image, candidate, target) -> (execute, reason)``: the injected judgement of one
#: candidate drawn over its local cloud (``image`` (H, W, 3) uint8).
GraspJudge = Callable[[np.ndarray, GraspCandidate, Target], tuple[bool, str]]
#: Candidates within this yaw (rad) of the preferred one are tried first.
YAW_PREFERENCE = np.pi / 6
#: Failed picks after which the target is looked at again from the wrist camera: the hand
#: was blocked on its way down, or closed on nothing.
LOOK_AGAIN = frozenset({SkillCode.TIMEOUT, SkillCode.GRASP_FAILED, SkillCode.COLLISION})
#: How a pick retried after one of those is named in its failure's sentence.
LOOKED_ABOVE = "from the wrist view above it"


@dataclass(frozen=True)
class Grasp:
    """An accepted grasp: the candidate, the target it grasps and the scene it was planned in
    (the target's camera's cloud)."""

    candidate: GraspCandidate
    target: Target
    scene: PointCloud


def plan_grasps(io: SkillIO, target: Target, yaw: float,
                rng: np.random.Generator) -> tuple[list[GraspCandidate], PointCloud, PointCloud]:
    """Grasp candidates on the top of ``target`` (within :data:`holding.GRASP_SLAB`), each
    turned to the equivalent yaw nearest ``yaw``, those within :data:`YAW_PREFERENCE` of it
    first; with the grasped slab and the scene they were planned in."""
    slab = holding.top_slab(target.cloud)
    scene = camera_cloud(io.obs, target.camera, stride=2)
    candidates = [holding.fold_grasp(c, yaw) for c in grasp_candidates(slab, scene, rng=rng)]
    candidates.sort(key=lambda c: abs(holding.yaw_offset(c.pose, yaw)) > YAW_PREFERENCE)
    io.event("grasp_candidates", target=target.name, camera=target.camera,
             count=len(candidates))
    return candidates, slab, scene


def accepted_grasps(io: SkillIO, target: Target, yaw: float, rng: np.random.Generator,
                    judge: GraspJudge | None = None, judged: int = 3) -> Iterator[Grasp]:
    """The candidates of :func:`plan_grasps` that ``judge`` accepts (at most ``judged`` are
    judged; without a judge, the first ``judged`` candidates)."""
    candidates, slab, scene = plan_grasps(io, target, yaw, rng)
    for candidate in candidates[:judged]:
        if judge is not None:
            execute, reason = judge(render_grasp(slab, scene, candidate), candidate, target)
            io.event("grasp_evaluation", target=target.name, camera=target.camera,
                     execute=execute, reason=reason, score=round(candidate.score, 3))
            if not execute:
                continue
        yield Grasp(candidate, target, scene)


def pick(io: SkillIO, detector: Detector, name: str, rng: np.random.Generator, *,
         yaw: float | None = None, judge: GraspJudge | None = None, judged: int = 3,
         max_moves: int = MAX_LOOKS + 1, why: str = "") -> SkillResult:
    """Locate ``name`` and pick it (module docstring).

    Args:
        yaw: preferred wrist yaw (rad); default the hand's.
        judge: the grasp judgement; ``None`` accepts every candidate.
        judged: candidates judged per view.
        max_moves: most arm moves of each search for the target (see :func:`locate`).

    Returns:
        ``OK`` with ``data["held"]`` (a :class:`holding.HeldObject`); ``NOT_FOUND``;
        ``GRASP_FAILED`` with ``data["rejected"]`` when the judge accepted nothing; the
        code of the look or the pick that failed otherwise (``data["look"]`` for the look).
        A pick that failed again after the wrist's look from above is reported by its
        cause, the pick that led to the look: its code and sentence, the retry's appended
        (:func:`~agentic_env.agents.skills.result.after_retry`). ``data["failures"]`` lists
        every failed pick attempt.
    """
    hand_yaw = holding.tcp_yaw(io.obs["tcp_pose"])
    yaw = hand_yaw if yaw is None else yaw
    found = locate(io, detector, name, max_moves=max_moves)
    if not found.ok:
        return found
    target: Target = found.data["target"]
    grasps = accepted_grasps(io, target, yaw, rng, judge, judged)
    grasp = next(grasps, None)
    from_wrist = False
    if grasp is None:
        looked = _wrist_grasps(io, detector, target, yaw, rng, judge, judged)
        if isinstance(looked, SkillResult):
            return looked
        grasps, grasp, from_wrist = looked, next(looked, None), True
    if grasp is None:
        return SkillResult(SkillCode.GRASP_FAILED, f"every grasp candidate for {name} was "
                           "rejected in the shoulder and the wrist views", {"rejected": True})
    failures: list[str] = []
    first: SkillResult | None = None  # the failed pick that sent the wrist to look above
    result = SkillResult(SkillCode.GRASP_FAILED, f"no grasp of {name} was tried")
    while grasp is not None:
        result = execute_grasp(io, grasp, why or f"pick {name}")
        if result.ok:
            return SkillResult(SkillCode.OK, result.message, {**result.data,
                                                              "failures": failures})
        failures.append(result.message)
        if result.code is not SkillCode.UNREACHABLE:
            if from_wrist or result.code not in LOOK_AGAIN:
                break
            # blocked or empty-handed: the shoulder camera's view of the target was wrong
            # (a grazing view at the edge of the table); look again from straight above
            looked = _wrist_grasps(io, detector, grasp.target, yaw, rng, judge, judged)
            if isinstance(looked, SkillResult):
                break
            first = result
            grasps, grasp, from_wrist = looked, next(looked, None), True
            continue
        grasp = next(grasps, None)
        hand_yaw = holding.tcp_yaw(io.obs["tcp_pose"])
        if grasp is None and abs(wrap_angle(yaw - hand_yaw)) > YAW_PREFERENCE:
            yaw = hand_yaw  # the preferred wrist turn is out of reach here: try without
            found = locate(io, detector, name, max_moves=max_moves)
            if not found.ok:
                result = found
                break
            grasps = accepted_grasps(io, found.data["target"], yaw, rng, judge, judged)
            grasp = next(grasps, None)
    if first is not None and result is not first:
        result = after_retry(first, result, LOOKED_ABOVE)  # reported by its cause
    return SkillResult(result.code, result.message, {**result.data, "failures": failures})


def _wrist_grasps(io: SkillIO, detector: Detector, target: Target, yaw: float,
                  rng: np.random.Generator, judge: GraspJudge | None,
                  judged: int) -> Iterator[Grasp] | SkillResult:
    """Look at ``target`` from the wrist camera straight above it and plan its grasps
    there; the failed look or locate as a result otherwise."""
    found = look_from_above(io, detector, target)
    if not found.ok:
        return found
    return accepted_grasps(io, found.data["target"], yaw, rng, judge, judged)


def execute_grasp(io: SkillIO, grasp: Grasp, why: str) -> SkillResult:
    """Run one accepted grasp (e.g. one a model chose from :func:`plan_grasps`), coming down
    above the obstacles around it; measure what the gripper holds on success."""
    candidate, cloud, scene = grasp.candidate, grasp.target.cloud, grasp.scene
    obstacles = without_robot(scene.select(~near_box(scene, cloud)), io.obs)
    approach = clearance.approach_over(obstacles, candidate.pose[:2, 3], candidate.pose[2, 3],
                                       start=np.asarray(io.obs["tcp_pose"][:2], float))
    status = io.act(pick_action(candidate.pose, candidate.width, approach), why)
    name = grasp.target.name
    result = SkillResult.from_status(status, f"pick of {name}")
    if not result.ok:
        return result
    held = holding.measure_held(
        name, camera_cloud(io.obs, "shoulder", stride=2, keep_gripper=True),
        io.obs["tcp_pose"], fallback=(cloud, candidate.pose))
    io.event("held_object", target=name, below_tcp=round(held.below_tcp, 4),
             radius=round(held.radius, 4))
    return SkillResult(SkillCode.OK, result.message, {"held": held, "grasp": candidate.pose})
