"""``locate``: a named target as a 3D cloud, looking again when the first view fails.

The shoulder camera is asked first. When it does not find the target, or the arm hides much
of the view around it, the skill clears the view: the arm goes home, then, if that is not
enough, to a parking pose that keeps it out of the shoulder camera's view of the target (of
the workspace when the target is not seen at all). Still not found, it surveys with the
wrist camera from a bounded set of look poses chosen to see the table the shoulder camera
could not (behind tall objects, inside containers and open drawers), and only then reports
``NOT_FOUND`` with every view it tried. A glimpse at the edge of a view is looked at again
from straight above. Base frame throughout (z up, table top z = 0), metres and radians.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agentic_env.agents.perception import PointCloud, lift_pixel, target_cloud
from agentic_env.agents.skills.holding import tcp_yaw
from agentic_env.agents.skills.io import SkillIO
from agentic_env.agents.skills.result import SkillCode, SkillResult
from agentic_env.agents.skills.scene import SceneView, at_home, kinematics
from agentic_env.agents.skills.spots import top_of
from agentic_env.contract.actions import home, move_to, top_down_pose, vector_to_pose
from agentic_env.contract.spaces import Workspace

#: Share of the shoulder view around a detection that may be the arm before the view is
#: cleared and the target detected again.
ROBOT_IN_VIEW = 0.2
#: Fewest 3D points of a located target.
MIN_TARGET_POINTS = 10
#: Height (m) above a target's top from which the wrist camera takes a close look at it.
LOOK_HEIGHT = 0.22
#: Height (m) of the wrist camera above the table on a survey look.
SURVEY_HEIGHT = 0.42
#: Most wrist-camera looks of one survey.
MAX_LOOKS = 6
#: Pixels from the wrist image's edge within which a detection's box counts as cut off.
EDGE_PX = 2
#: Spacing (m) of the grid of table points a survey tries to see (and of its look spots),
#: and their height (m) above the table (a small object's middle).
SURVEY_GRID = 0.03
SURVEY_POINT_HEIGHT = 0.02
#: Weight of a table point the shoulder camera saw (an unseen one weighs 1) in choosing looks.
SEEN_WEIGHT = 0.1
#: Least weight of table points a survey look must newly cover.
MIN_LOOK_WEIGHT = 3.0
#: Parking spots for clearing the shoulder camera's view: TCP (x, y, z) in the base frame.
PARKING_SPOTS: tuple[tuple[float, float, float], ...] = (
    (0.2, 0.5, 0.5), (0.2, -0.55, 0.5), (0.3, 0.6, 0.6), (0.15, 0.3, 0.6))
#: Grid of ray samples (per axis over the workspace, and along each ray) that estimates how
#: much of the workspace an arm configuration hides from the shoulder camera.
VIEW_GRID = 8
RAY_SAMPLES = 12


@dataclass(frozen=True)
class Detection:
    """Where a detector saw a target: a pixel ``point`` (u, v) and an optional ``box``
    (x0, y0, x1, y1), in the image of the camera it was asked about."""

    point: tuple[int, int]
    box: tuple[int, int, int, int] | None = None

    @classmethod
    def from_answer(cls, point: Sequence[float] | None, box: Sequence[float] | None,
                    height: int, width: int) -> Detection | None:
        """A detection from a model's raw pixel answer, clipped to a ``height`` x ``width``
        image; ``None`` without a two-number point; a box of fewer than 2 pixels a side, or
        not of four numbers, is dropped."""
        if point is None or len(point) != 2:
            return None
        u = int(np.clip(round(point[0]), 0, width - 1))
        v = int(np.clip(round(point[1]), 0, height - 1))
        if box is None or len(box) != 4:
            return cls((u, v), None)
        x0, y0, x1, y1 = (int(round(b)) for b in box)
        clipped = (max(min(x0, x1), 0), max(min(y0, y1), 0), min(max(x0, x1), width),
                   min(max(y0, y1), height))
        if clipped[2] - clipped[0] < 2 or clipped[3] - clipped[1] < 2:
            return cls((u, v), None)
        return cls((u, v), clipped)


#: ``detector(obs, camera, name, part) -> Detection | None``: the model judgement that points
#: at ``name`` (``part``: ``object``, ``handle`` or ``interior``) in ``camera``'s image.
Detector = Callable[[Mapping[str, np.ndarray], str, str, str], "Detection | None"]


@dataclass(frozen=True)
class Target:
    """A located target.

    Attributes:
        name: what was asked for.
        part: ``object``, ``handle`` or ``interior``.
        camera: the camera that found it (its view is in the caller's observation now).
        detection: where in that camera's image.
        cloud: its points, base frame.
    """

    name: str
    part: str
    camera: str
    detection: Detection
    cloud: PointCloud


def locate(io: SkillIO, detector: Detector, name: str, part: str = "object",
           camera: str = "shoulder", search: bool = True, max_moves: int = MAX_LOOKS + 1,
           clear_view: bool = True) -> SkillResult:
    """Find ``name`` and return it as ``data["target"]`` (a :class:`Target`).

    Args:
        io: the caller's robot access.
        detector: the injected detection judgement.
        part: ``object``, or for drawers ``handle`` / ``interior``.
        camera: the camera to ask; only a ``shoulder`` request clears the view and surveys.
        search: look again (clear the view, survey with the wrist) when not found.
        max_moves: most arm moves of the search (parking and looks; going home is not
            counted), e.g. what the caller's action budget leaves.
        clear_view: send the arm home when it hides the target (or the target is not
            found); ``False`` (with ``search`` false) asks the current view only, moving
            nothing.

    Returns:
        ``OK`` with the target; ``NOT_FOUND`` naming every view tried. A target seen where
        the shoulder camera has no depth (the image's edge) is looked at again from the
        wrist above where its pixel's ray meets the table.
    """
    tried = [f"the {camera} view"]
    detection = detector(io.obs, camera, name, part)
    if camera != "shoulder":
        return _result(io, name, part, camera, detection, tried)
    # an open drawer's inside is used whole (where in it things go): the arm, near the
    # drawer after opening it or picking, must not hide its front part
    if clear_view and not at_home(io.obs) and (detection is None or part == "interior"
                                               or _hidden(io.obs, detection)):
        io.act(home(), f"clear the shoulder camera's view of {name}")
        detection = detector(io.obs, camera, name, part)
        tried.append("the shoulder view with the arm home")
    moves = max_moves if search else 0
    if moves > 0 and (detection is None or _hidden(io.obs, detection)):
        parking = clear_view_pose(io.obs, io.workspace, detection)
        if parking is not None:
            moves -= 1
            if io.act(move_to(parking), f"park the arm out of view of {name}").get("ok"):
                tried.append("the shoulder view with the arm parked aside")
                detection = detector(io.obs, camera, name, part) or detection
    if detection is not None and moves > 0 and partial_view(io.obs, camera, detection):
        # seen, but with no depth there (the image's edge, beyond the camera's range): look
        # from the wrist straight above where the pixel's ray meets the table
        moves -= 1
        seen = _look_where_seen(io, detector, camera, detection, name, part, tried)
        if seen is not None:
            return _result(io, name, part, "wrist", seen, tried)
    if detection is None and moves > 0:
        for look in survey_poses(SceneView(io.obs), io.obs, io.workspace)[:moves]:
            moves -= 1
            if not io.act(move_to(look), f"wrist survey for {name}").get("ok"):
                continue
            tried.append(f"the wrist view from ({look[0, 3]:.2f}, {look[1, 3]:.2f})")
            detection = detector(io.obs, "wrist", name, part)
            if detection is None:
                continue
            if moves > 0 and partial_view(io.obs, "wrist", detection):
                # a glimpse at the view's edge (or into a container from the side): look
                # again from straight above where it was glimpsed
                seen = _look_where_seen(io, detector, "wrist", detection, name, part, tried)
                detection = seen or detection
            return _result(io, name, part, "wrist", detection, tried)
    return _result(io, name, part, camera, detection, tried)


def _result(io: SkillIO, name: str, part: str, camera: str, detection: Detection | None,
            tried: list[str]) -> SkillResult:
    what = name if part == "object" else f"{name} ({part})"
    if detection is None:
        return SkillResult(SkillCode.NOT_FOUND, f"{what} was not found in "
                           f"{', '.join(tried)}", {"tried": tried})
    cloud = target_cloud(io.obs, camera, detection.point, detection.box)
    io.event("detection", target=name, part=part, camera=camera, point=list(detection.point),
             box=detection.box and list(detection.box), points=len(cloud), views=len(tried))
    if len(cloud) < MIN_TARGET_POINTS:
        return SkillResult(SkillCode.NOT_FOUND, f"no 3D points of {what} at the detected "
                           f"pixel {detection.point} in the {camera} view", {"tried": tried})
    return SkillResult(SkillCode.OK, f"{what} found in the {camera} view",
                       {"target": Target(name, part, camera, detection, cloud),
                        "tried": tried})


def partial_view(obs: Mapping[str, np.ndarray], camera: str, detection: Detection) -> bool:
    """Whether ``camera`` sees too little of a detection to ground it: fewer than
    :data:`MIN_TARGET_POINTS` 3D points there, or (the wrist camera) its box touches the
    image's edge."""
    if len(target_cloud(obs, camera, detection.point, detection.box)) < MIN_TARGET_POINTS:
        return True
    if camera == "shoulder":
        return False
    height, width = np.asarray(obs[f"{camera}_rgb"]).shape[:2]
    u0, v0, u1, v1 = detection.box or (*detection.point, *detection.point)
    return min(u0, v0) <= EDGE_PX or u1 >= width - 1 - EDGE_PX or v1 >= height - 1 - EDGE_PX


def _look_where_seen(io: SkillIO, detector: Detector, camera: str, detection: Detection,
                     name: str, part: str, tried: list[str]) -> Detection | None:
    """One wrist look from :data:`SURVEY_HEIGHT` straight above where ``detection``'s pixel
    ray (in ``camera``) meets the table; the wrist's detection there, ``None`` when the
    spot is out of reach or the look shows nothing."""
    spot = ray_on_table(io.obs, camera, detection.point)
    if spot is None or not io.workspace.contains(np.array([*spot, SURVEY_HEIGHT])):
        return None
    look = wrist_look_pose(io.obs, np.array([*spot, SURVEY_HEIGHT]))
    if not io.act(move_to(look), f"wrist view of {name}").get("ok"):
        return None
    tried.append(f"the wrist view from ({spot[0]:.2f}, {spot[1]:.2f})")
    return detector(io.obs, "wrist", name, part)


def _hidden(obs: Mapping[str, np.ndarray], detection: Detection) -> bool:
    """Whether the arm covers over :data:`ROBOT_IN_VIEW` of the shoulder image around
    ``detection``'s box (grown by its size on each side)."""
    u0, v0, u1, v1 = detection.box or (*detection.point, *detection.point)
    pad_u, pad_v = max(u1 - u0, 10), max(v1 - v0, 10)
    region = (u0 - pad_u, v0 - pad_v, u1 + pad_u, v1 + pad_v)
    return SceneView(obs).robot_share("shoulder", region) > ROBOT_IN_VIEW


def hidden_share(obs: Mapping[str, np.ndarray], q: np.ndarray, workspace: Workspace) -> float:
    """Share (0..1) of a grid over the workspace's table area that the arm at joint
    positions ``q`` (6,) rad hides from the shoulder camera (rays sampled against the arm's
    model)."""
    xs = np.linspace(workspace.low[0], workspace.high[0], VIEW_GRID)
    ys = np.linspace(workspace.low[1], workspace.high[1], VIEW_GRID)
    return blocked_share(obs, q, np.array([[x, y, 0.03] for x in xs for y in ys]))


def blocked_share(obs: Mapping[str, np.ndarray], q: np.ndarray, ends: np.ndarray) -> float:
    """Share (0..1) of the rays from the shoulder camera to ``ends`` (N, 3; base frame, m)
    that the arm at joint positions ``q`` (6,) rad blocks (each ray sampled at
    :data:`RAY_SAMPLES` points against the arm's model, short of its end)."""
    camera = np.asarray(obs["shoulder_extrinsics"], float)[:3, 3]
    steps = np.linspace(0.05, 0.98, RAY_SAMPLES)[:, None, None]
    samples = camera + steps * (np.asarray(ends, float) - camera)  # (samples, rays, 3)
    on_robot = kinematics().robot_points(samples.reshape(-1, 3), q)
    return float(np.mean(on_robot.reshape(RAY_SAMPLES, -1).any(axis=0)))


def detection_rays(obs: Mapping[str, np.ndarray], detection: Detection) -> np.ndarray | None:
    """Ends (N, 3; base frame, m) of rays from the shoulder camera through a
    :data:`VIEW_GRID` x :data:`VIEW_GRID` grid over ``detection``'s box (its point without
    one), each as far as the target's seen points lie (their median distance from the
    camera): what the arm must not stand in for the camera to see the whole target. ``None``
    when no point of the target is seen."""
    seen = target_cloud(obs, "shoulder", detection.point, detection.box)
    if len(seen) == 0:
        return None
    intrinsics = np.asarray(obs["shoulder_intrinsics"], float)
    extrinsics = np.asarray(obs["shoulder_extrinsics"], float)
    u0, v0, u1, v1 = detection.box or (*detection.point, *detection.point)
    u, v = np.meshgrid(np.linspace(u0, u1, VIEW_GRID), np.linspace(v0, v1, VIEW_GRID))
    rays = np.stack([(u.ravel() + 0.5 - intrinsics[0, 2]) / intrinsics[0, 0],
                     (v.ravel() + 0.5 - intrinsics[1, 2]) / intrinsics[1, 1],
                     np.ones(u.size)], axis=1) @ extrinsics[:3, :3].T
    rays /= np.linalg.norm(rays, axis=1, keepdims=True)
    distance = float(np.median(np.linalg.norm(seen.points - extrinsics[:3, 3], axis=1)))
    return extrinsics[:3, 3] + distance * rays


def clear_view_pose(obs: Mapping[str, np.ndarray], workspace: Workspace,
                    detection: Detection | None = None) -> np.ndarray | None:
    """A top-down TCP pose (4x4) from :data:`PARKING_SPOTS` whose arm configuration hides
    less from the shoulder camera than the arm does now: of the target ``detection`` shows
    (the rays through its box, :func:`detection_rays`) when given and seen, else of the
    workspace; the best such, ``None`` when none is better (or none is reachable)."""
    q_now = np.asarray(obs["joint_positions"], float)
    ends = None if detection is None else detection_rays(obs, detection)

    def share(q: np.ndarray) -> float:
        return hidden_share(obs, q, workspace) if ends is None else blocked_share(obs, q, ends)

    best, best_share = None, share(q_now)
    yaw = tcp_yaw(obs["tcp_pose"])
    for spot in PARKING_SPOTS:
        pose = top_down_pose(np.array(spot), yaw)
        solution = kinematics().solve(pose, q_now)
        if not solution.converged:
            continue
        parked = share(solution.q)
        if parked < best_share - 0.02:
            best, best_share = pose, parked
    return best


def wrist_look_pose(obs: Mapping[str, np.ndarray], point: np.ndarray,
                    camera_over: bool = True) -> np.ndarray:
    """A top-down TCP pose (4x4) from which the wrist camera looks down at ``point`` (3,):
    the camera (or, ``camera_over`` false, the TCP) straight above it, at ``point``'s
    height; the hand keeps its current yaw."""
    view = top_down_pose(np.asarray(point, float), tcp_yaw(obs["tcp_pose"]))
    if camera_over:
        tcp = vector_to_pose(np.asarray(obs["tcp_pose"], float))
        camera = np.asarray(obs["wrist_extrinsics"], float)[:3, 3]
        offset = tcp[:3, :3].T @ (camera - tcp[:3, 3])  # the camera in the tool frame
        view[:3, 3] -= view[:3, :3] @ np.array([offset[0], offset[1], 0.0])
    return view


def look_from_above(io: SkillIO, detector: Detector, target: Target) -> SkillResult:
    """Locate ``target`` again with the wrist camera from :data:`LOOK_HEIGHT` straight above
    its top (the hand over it): the close, unslanted view shows its whole top where the
    shoulder camera's grazing view misplaced it. ``OK`` with the target as the wrist camera
    sees it; the failed move (``data["look"]``) or ``NOT_FOUND`` otherwise."""
    centre, top = top_of(target.cloud)
    look = wrist_look_pose(io.obs, np.array([*centre, top + LOOK_HEIGHT]), camera_over=False)
    status = io.act(move_to(look), f"wrist view of {target.name}")
    if not status.get("ok"):
        return SkillResult.from_status(status, f"the wrist view of {target.name}", look=True)
    return locate(io, detector, target.name, target.part, camera="wrist")


def wrist_point(io: SkillIO, detector: Detector, name: str, point: np.ndarray,
                part: str = "object") -> np.ndarray | None:
    """``name``'s detected point (3,) as the wrist camera sees it from :data:`LOOK_HEIGHT`
    straight above ``point`` (3,), e.g. to centre on a mark that neighbours hide part of in
    the shoulder camera's slanted view; ``None`` when the arm cannot get there or the wrist
    view does not show it."""
    view = wrist_look_pose(io.obs, np.array([*point[:2], point[2] + LOOK_HEIGHT]))
    status = io.act(move_to(view), f"wrist view of {name}")
    detection = detector(io.obs, "wrist", name, part) if status.get("ok") else None
    return None if detection is None else lift_pixel(io.obs, "wrist", detection.point)


def ray_on_table(obs: Mapping[str, np.ndarray], camera: str, pixel: tuple[int, int],
                 height: float = 0.03) -> np.ndarray | None:
    """Where (x, y; base frame, m) the ray through ``pixel`` (u, v) of ``camera`` meets the
    plane ``height`` m above the table: about where a detected object stands when its
    pixels have no depth. ``None`` for a ray that does not come down to it."""
    intrinsics = np.asarray(obs[f"{camera}_intrinsics"], float)
    extrinsics = np.asarray(obs[f"{camera}_extrinsics"], float)
    u, v = pixel
    ray_cam = np.array([(u + 0.5 - intrinsics[0, 2]) / intrinsics[0, 0],
                        (v + 0.5 - intrinsics[1, 2]) / intrinsics[1, 1], 1.0])
    ray = extrinsics[:3, :3] @ ray_cam
    origin = extrinsics[:3, 3]
    if ray[2] >= -1e-6 or origin[2] <= height:
        return None
    return (origin + (height - origin[2]) / ray[2] * ray)[:2]


def survey_poses(scene: SceneView, obs: Mapping[str, np.ndarray], workspace: Workspace
                 ) -> list[np.ndarray]:
    """At most :data:`MAX_LOOKS` wrist look poses from :data:`SURVEY_HEIGHT`, chosen to see
    most of the table the shoulder camera could not: a grid of points just above the table
    over the workspace, each weighted 1 when the shoulder camera did not see it (behind a
    tall object, a container's wall, an open drawer, the arm; no depth) and
    :data:`SEEN_WEIGHT` when it did (a second, closer look at what a detector may have
    missed); looks are added greedily by the weight they newly cover within the wrist
    camera's footprint, while one covers at least :data:`MIN_LOOK_WEIGHT` and the arm
    reaches it."""
    low, high = np.asarray(workspace.low, float), np.asarray(workspace.high, float)
    xs = np.arange(low[0] + SURVEY_GRID / 2, high[0], SURVEY_GRID)
    ys = np.arange(low[1] + SURVEY_GRID / 2, high[1], SURVEY_GRID)
    grid = np.array([[x, y, SURVEY_POINT_HEIGHT] for x in xs for y in ys])
    weight = np.where(scene.unseen(grid), 1.0, SEEN_WEIGHT)
    radius = wrist_footprint(obs, SURVEY_HEIGHT - SURVEY_POINT_HEIGHT)
    covers = np.linalg.norm(grid[:, None, :2] - grid[None, :, :2], axis=2) < radius
    q_now = np.asarray(obs["joint_positions"], float)
    looks: list[np.ndarray] = []
    candidates = np.ones(len(grid), bool)
    while len(looks) < MAX_LOOKS and candidates.any():
        gain = np.where(candidates, covers @ weight, -1.0)
        best = int(np.argmax(gain))
        if gain[best] < MIN_LOOK_WEIGHT:
            break
        candidates[best] = False
        look = wrist_look_pose(obs, np.array([*grid[best, :2], SURVEY_HEIGHT]))
        if not kinematics().solve(look, q_now).converged:
            continue
        looks.append(look)
        weight = np.where(covers[best], 0.0, weight)
    return looks


def wrist_footprint(obs: Mapping[str, np.ndarray], distance: float) -> float:
    """Radius (m) of the disc the wrist camera sees whole, looking straight down from
    ``distance`` m: the half-width of the image's narrower side at that distance."""
    intrinsics = np.asarray(obs["wrist_intrinsics"], float)
    height, width = np.asarray(obs["wrist_depth"]).shape[:2]
    return distance * min(width / 2 / intrinsics[0, 0], height / 2 / intrinsics[1, 1])
