"""The reorientation turn as skills: pick an object so the wrist can turn it into a named
pose, then set it down in that pose at its old spot (geometry in :mod:`reorient`, shared
with the scripted expert through :mod:`agentic_env.robot.reorienting`); and a turn about the
vertical: set a top-down-picked object back down where it was taken from, the wrist turned.
Base frame (z up, table top z = 0), metres and radians.

A handle pose (``handle-<direction>``) needs to know where the handle points now: a handle
turned away from the shoulder camera hides behind the object's body, and the estimate's x
axis is then only the top face's longer side (any direction, for a round mug), so the turn
would be a guess. The pick then looks at the object from the wrist camera straight above
it, which sees a handle whichever way it points, and plans from that view (its cloud
clustered wide enough to keep the handle, :data:`HANDLE_CLUSTER_RADIUS`). A turning pick
blocked on its way down, or closed on nothing, looks from above too and tries once more:
the shoulder camera's view misplaced the object (its calibration error moves a cloud by
a centimetre, enough to put a finger on a mug's rim).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from agentic_env.agents.perception import (
    GraspCandidate,
    camera_cloud,
    render_grasp,
    target_cloud,
)
from agentic_env.agents.skills import clearance, holding, spots
from agentic_env.agents.skills.holding import HeldObject
from agentic_env.agents.skills.io import SkillIO
from agentic_env.agents.skills.locate import Detector, Target, look_from_above
from agentic_env.agents.skills.pick import LOOK_AGAIN, LOOKED_ABOVE, GraspJudge
from agentic_env.agents.skills.reorient import ObjectEstimate, Reorienter, estimate_object
from agentic_env.agents.skills.result import SkillCode, SkillResult, after_retry
from agentic_env.agents.skills.scene import SceneView
from agentic_env.contract.actions import pick, place, vector_to_pose
from agentic_env.geometry.rotations import wrap_angle

#: A turned place blocked on its way down (the object met the table early) is tried again
#: this much higher (m), at most this many times.
TURNED_PLACE_RAISE = 0.012
TURNED_PLACE_RAISES = 2
#: Turned places tried (the best reachable first).
TURNED_PLACES = 3
#: Cluster radius (m) of the wrist's view from above of an object whose handle is sought.
#: From straight above, a mug's handle lies about 2 cm below its rim with the body's wall
#: between them unseen, so the usual 1 cm cluster of a located target leaves the handle out;
#: objects on the table stand farther apart than this.
HANDLE_CLUSTER_RADIUS = 0.02


@dataclass(frozen=True)
class TurningGrip:
    """How a turning pick holds its object: the estimate it was planned from and the TCP
    grasp pose (4x4)."""

    name: str
    estimate: ObjectEstimate
    grasp: np.ndarray


def pick_to_turn(io: SkillIO, target: Target, goal: str, reorienter: Reorienter, *,
                 judge: GraspJudge | None = None, judged: int = 3, why: str = "",
                 detector: Detector | None = None) -> SkillResult:
    """Pick the located ``target`` with a grasp from which a place can turn it into ``goal``
    (``upright``, ``upside-down``, ``on-side``, ``handle-<direction>``).

    Args:
        detector: looks again from the wrist camera straight above the target, and plans
            from that view: before the pick, for a handle goal whose handle ``target``'s
            view does not show (:func:`handle_view`); after a pick from another camera's
            view that was blocked on its way down or closed on nothing (that view misplaced
            the object: the shoulder camera's calibration, a grazing view), once, as
            :func:`~agentic_env.agents.skills.pick.pick` does. ``None``: no look.

    Returns:
        ``OK`` with ``data["held"]`` and ``data["grip"]`` (a :class:`TurningGrip` for
        :func:`place_turned`); ``GRASP_FAILED`` with ``data["rejected"]`` when no grasp was
        accepted and reachable; the pick's code otherwise (a retry from above that failed
        too is reported by the failure before it, its sentence appended). ``data["failures"]``
        lists every failed pick.
    """
    estimate = estimate_object(target.cloud.points)
    if detector is not None and goal.startswith("handle-") and not estimate.handled:
        target, estimate = handle_view(io, detector, target, estimate)
    result = _turning_pick(io, target, estimate, goal, reorienter, judge, judged, why)
    if (result.ok or detector is None or target.camera == "wrist"
            or result.code not in LOOK_AGAIN or result.data.get("rejected")):
        return result
    seen = view_from_above(io, detector, target, wide=goal.startswith("handle-"))
    if seen is None:
        return result
    retry = _turning_pick(io, seen, estimate_object(seen.cloud.points), goal, reorienter,
                          judge, judged, why)
    failures = [*result.data["failures"], *retry.data["failures"]]
    retried = after_retry(result, retry, LOOKED_ABOVE)
    return SkillResult(retried.code, retried.message, {**retried.data, "failures": failures})


def _turning_pick(io: SkillIO, target: Target, estimate: ObjectEstimate, goal: str,
                  reorienter: Reorienter, judge: GraspJudge | None, judged: int,
                  why: str) -> SkillResult:
    """The turning grasps of ``estimate`` (``target`` as seen), judged, tried in turn until
    one is not refused as unreachable (:func:`pick_to_turn`'s results)."""
    io.event("object_estimate", target=target.name, lying=estimate.lying,
             handled=estimate.handled, axis=np.round(estimate.axis, 3).tolist(),
             centre=np.round(estimate.pose[:3, 3], 3).tolist())
    scene = camera_cloud(io.obs, target.camera, stride=2)
    failures: list[str] = []
    for grasp in reorienter.grasps(estimate, goal, io.obs["joint_positions"])[: judged + 1]:
        if judge is not None:
            candidate = GraspCandidate(grasp.pose, grasp.width, 1.0)
            execute, reason = judge(render_grasp(target.cloud, scene, candidate), candidate,
                                    target)
            io.event("grasp_evaluation", target=target.name, camera=target.camera,
                     execute=execute, reason=reason, score=1.0)
            if not execute:
                continue
        result = SkillResult.from_status(io.act(pick(grasp.pose, grasp.width),
                                                why or f"pick {target.name} to turn it"),
                                         f"pick of {target.name}")
        if result.ok:
            held = HeldObject(target.name, estimate.half_extents[2],
                              float(np.max(estimate.half_extents[:2])))
            return SkillResult(SkillCode.OK, result.message, {
                "held": held, "grip": TurningGrip(target.name, estimate, grasp.pose),
                "failures": failures})
        failures.append(result.message)
        if result.code is not SkillCode.UNREACHABLE:
            return SkillResult(result.code, result.message, {"failures": failures})
    return SkillResult(SkillCode.GRASP_FAILED, f"no grasp of {target.name} that can turn it "
                       f"{goal} was accepted and reachable", {"rejected": True,
                                                              "failures": failures})


def view_from_above(io: SkillIO, detector: Detector, target: Target, *,
                    wide: bool = False) -> Target | None:
    """``target`` as the wrist camera sees it from straight above
    (:func:`~agentic_env.agents.skills.locate.look_from_above`); ``wide``: its cloud
    clustered with :data:`HANDLE_CLUSTER_RADIUS`, to keep a handle. ``None`` when the look
    fails."""
    closer = look_from_above(io, detector, target)
    if not closer.ok:
        return None
    seen: Target = closer.data["target"]
    if wide:
        cloud = target_cloud(io.obs, seen.camera, seen.detection.point, seen.detection.box,
                             radius=HANDLE_CLUSTER_RADIUS)
        if len(cloud) > len(seen.cloud):
            seen = replace(seen, cloud=cloud)
    return seen


def handle_view(io: SkillIO, detector: Detector, target: Target,
                estimate: ObjectEstimate) -> tuple[Target, ObjectEstimate]:
    """``target`` and its ``estimate`` as the wrist camera sees them from straight above
    (:func:`view_from_above`, clustered wide): the view that shows a handle the shoulder
    camera's view hid behind the body. The given ones when the look fails or that view
    shows no handle either."""
    io.event("handle_hidden", target=target.name, camera=target.camera)
    seen = view_from_above(io, detector, target, wide=True)
    if seen is None:
        return target, estimate
    above = estimate_object(seen.cloud.points)
    return (seen, above) if above.handled else (target, estimate)


def place_turned(io: SkillIO, grip: TurningGrip, goal: str, reorienter: Reorienter,
                 why: str = "") -> SkillResult:
    """Set the object held by ``grip`` down at its old spot in the pose ``goal``: the best
    reachable turned places in turn; one that meets the table early is raised a little.
    ``data["failures"]`` lists every failed place."""
    tcp = vector_to_pose(np.asarray(io.obs["tcp_pose"], float))
    poses = reorienter.places(grip.estimate, grip.grasp, tcp, goal, io.obs["joint_positions"])
    tries = iter(poses[:TURNED_PLACES])
    pose = next(tries, None)
    raised = 0
    failures: list[str] = []
    result = SkillResult(SkillCode.UNREACHABLE, f"no turned place of {grip.name} is reachable")
    while pose is not None:
        result = SkillResult.from_status(io.act(place(pose), why or f"turn {grip.name}"),
                                         f"place of {grip.name}")
        if result.ok:
            break
        failures.append(result.message)
        if result.code is SkillCode.TIMEOUT and raised < TURNED_PLACE_RAISES:
            # set down on the table early: the estimated box sat higher in the hand
            pose, raised = pose.copy(), raised + 1
            pose[2, 3] += TURNED_PLACE_RAISE
        elif result.code is SkillCode.UNREACHABLE:
            pose = next(tries, None)
        else:
            break
    return SkillResult(result.code, result.message, {"failures": failures})


def place_turned_in_place(io: SkillIO, held: HeldObject, grasp: np.ndarray, angle: float,
                          why: str = "") -> SkillResult:
    """Set ``held`` back down where the top-down ``grasp`` (4x4 TCP pose it was picked with)
    took it from, on whatever it stood on, turned ``angle`` rad about the vertical
    (counter-clockwise seen from above): the grasp pose turned about its own vertical axis,
    :data:`spots.RELEASE_GAP` higher, coming down above the obstacles around it."""
    yaw = wrap_angle(float(np.arctan2(grasp[1, 0], grasp[0, 0])) + angle)
    pose = holding.with_yaw(grasp, yaw)
    pose[2, 3] += spots.RELEASE_GAP
    approach = clearance.approach_over(SceneView(io.obs).obstacles(), pose[:2, 3],
                                       pose[2, 3], hanging=held.below_tcp)
    status = io.act(place(pose, approach), why or f"turn {held.name}")
    return SkillResult.from_status(status, f"place of {held.name}", pose=pose)
