"""The reorientation turn as skills: pick an object so the wrist can turn it into a named
pose, then set it down in that pose at its old spot (geometry in :mod:`reorient`, shared
with the scripted expert through :mod:`agentic_env.robot.reorienting`); and a turn about the
vertical: set a top-down-picked object back down where it was taken from, the wrist turned.
Base frame (z up, table top z = 0), metres and radians.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentic_env.agents.perception import GraspCandidate, camera_cloud, render_grasp
from agentic_env.agents.skills import clearance, holding, spots
from agentic_env.agents.skills.holding import HeldObject
from agentic_env.agents.skills.io import SkillIO
from agentic_env.agents.skills.locate import Target
from agentic_env.agents.skills.pick import GraspJudge
from agentic_env.agents.skills.reorient import ObjectEstimate, Reorienter, estimate_object
from agentic_env.agents.skills.result import SkillCode, SkillResult
from agentic_env.agents.skills.scene import SceneView
from agentic_env.contract.actions import pick, place, vector_to_pose
from agentic_env.geometry.rotations import wrap_angle

#: A turned place blocked on its way down (the object met the table early) is tried again
#: this much higher (m), at most this many times.
TURNED_PLACE_RAISE = 0.012
TURNED_PLACE_RAISES = 2
#: Turned places tried (the best reachable first).
TURNED_PLACES = 3


@dataclass(frozen=True)
class TurningGrip:
    """How a turning pick holds its object: the estimate it was planned from and the TCP
    grasp pose (4x4)."""

    name: str
    estimate: ObjectEstimate
    grasp: np.ndarray


def pick_to_turn(io: SkillIO, target: Target, goal: str, reorienter: Reorienter, *,
                 judge: GraspJudge | None = None, judged: int = 3,
                 why: str = "") -> SkillResult:
    """Pick the located ``target`` with a grasp from which a place can turn it into ``goal``
    (``upright``, ``upside-down``, ``on-side``, ``handle-<direction>``).

    Returns:
        ``OK`` with ``data["held"]`` and ``data["grip"]`` (a :class:`TurningGrip` for
        :func:`place_turned`); ``GRASP_FAILED`` with ``data["rejected"]`` when no grasp was
        accepted and reachable; the pick's code otherwise. ``data["failures"]`` lists every
        failed pick.
    """
    estimate = estimate_object(target.cloud.points)
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
