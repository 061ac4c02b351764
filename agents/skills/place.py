"""Place skills: set the held object on a target, into a container, or at a spot on the
table. Base frame (z up, table top z = 0), metres and radians.

Every place comes down from above the obstacles around its path (the shoulder camera's view
without the robot, :meth:`SceneView.obstacles`); a caller that looked around since may pass
the view it planned with.
"""

from __future__ import annotations

import numpy as np

from agentic_env.agents.perception import (
    PointCloud,
    box_cloud,
    cluster_near,
    lift_pixel,
    remove_table,
    seen_table_height,
    table_height,
)
from agentic_env.agents.skills import clearance, holding, spots
from agentic_env.agents.skills.holding import HeldObject
from agentic_env.agents.skills.io import SkillIO
from agentic_env.agents.skills.locate import Detector, Target, wrist_point
from agentic_env.agents.skills.result import SkillCode, SkillResult
from agentic_env.agents.skills.scene import SceneView, at_home
from agentic_env.contract.actions import home, place, top_down_pose
from agentic_env.geometry.rotations import yaw_of

#: Largest gap (m) between neighbouring points of one board in the thinned shoulder cloud (far
#: from the camera, neighbouring pixels of a flat board lie over 1 cm apart).
BOARD_GAP = 0.02
#: Points of an open drawer's box more than this (m) below its detected floor lie under it.
BELOW_CLUSTER = 0.01
#: How far (m) beyond the held object's radius a slot's mark may reach from its middle.
MARK_MARGIN = 0.01


def place_on(io: SkillIO, held: HeldObject, target: Target, *, align_faces: bool = False,
             centre: np.ndarray | None = None, cloud: PointCloud | None = None,
             view: SceneView | None = None, why: str = "") -> SkillResult:
    """Set ``held`` centred on top of ``target`` (a cube, a plate, a board slot).

    Args:
        align_faces: turn the wrist so the held box's faces line up with the target's.
        centre: (x, y) to place at instead of the target's top centre.
        cloud: the target's points to use instead of ``target.cloud`` (e.g. a whole board).
        view: the scene the place was planned in (default: the current observation).
    """
    view = view or SceneView(io.obs)
    tcp = io.obs["tcp_pose"]
    pose, approach = spots.place_on(target.cloud if cloud is None else cloud,
                                        view.obstacles(), held, tcp, align_faces=align_faces,
                                        centre=centre)
    return _release(io, held, pose, approach, view, why)


def place_in_slot(io: SkillIO, detector: Detector, held: HeldObject, target: Target, *,
                  view: SceneView | None = None, why: str = "") -> SkillResult:
    """Set ``held`` into the board slot ``target`` (a flat mark, not a shape): centred on the
    mark's middle, its faces lined up with the whole board's. When something standing by the
    mark hides part of it from the shoulder camera (a block in a neighbouring slot, at the
    camera's slant: :meth:`SceneView.hides` within the held object's radius plus
    :data:`MARK_MARGIN`, the mark being the block's size), so that the visible part's middle
    lies off the mark's, the wrist camera looks at the mark from straight above first
    (``detector`` finds it there)."""
    view = view or SceneView(io.obs)
    point = lift_pixel(io.obs, target.camera, target.detection.point)
    if point is None:
        return place_on(io, held, target, align_faces=True, view=view, why=why)
    board = cluster_near(remove_table(view.cloud("shoulder"),
                                      seen_table_height(io.obs, "shoulder")),
                         point, radius=BOARD_GAP)
    centre = point[:2]
    if view.hides(point, held.radius + MARK_MARGIN):
        seen = wrist_point(io, detector, target.name, point)
        io.event("slot_refined", target=target.name, seen=seen is not None,
                 shift=None if seen is None else round(float(
                     np.linalg.norm(seen[:2] - point[:2])), 4))
        centre = centre if seen is None else seen[:2]
    return place_on(io, held, target, cloud=board, centre=centre, align_faces=True,
                    view=view, why=why)


def place_in(io: SkillIO, held: HeldObject, target: Target, *, yaw: float | None = None,
             view: SceneView | None = None, avoid: np.ndarray | None = None,
             why: str = "") -> SkillResult:
    """Drop ``held`` into the container ``target`` (a bin, a bowl, an open drawer's inside)
    at its emptiest spot; ``yaw`` (rad) turns the wrist (default: the geometry's choice);
    ``avoid``: (x, y) of releases that failed in it before, (M, 2), passed over while another
    spot qualifies. ``data["pose"]`` is the release pose tried. ``NOT_FOUND``, without
    moving, when no point of the container was seen above the table in its detection box
    (a box on bare table, or no depth return there)."""
    view = view or SceneView(io.obs)
    cloud = target.cloud
    if target.detection.box is not None:  # the whole box: floor and walls, not one cluster
        # (below a drawer's detected floor the box shows the table or the cabinet under it)
        cloud = box_cloud(io.obs, target.camera, target.detection.box)
        # points of the box up to the table's band above its seen level are the table
        # around the container, not its floor (which stands a wall's thickness higher)
        floor_min = seen_table_height(io.obs, target.camera) + spots.TABLE_BAND
        if target.part == "interior":
            lowest = float(target.cloud.points[:, 2].min()) if len(target.cloud) else 0.0
            cloud = cloud.select(cloud.points[:, 2] > max(floor_min, lowest - BELOW_CLUSTER))
        else:
            cloud = cloud.select(cloud.points[:, 2] > floor_min)
            seed = lift_pixel(io.obs, target.camera, target.detection.point)
            if seed is not None:
                # a far bin's box also holds what stands in front of it in the image, metres
                # away: keep the container (walls, floor and contents touch one another)
                cloud = cluster_near(cloud, seed, radius=BOARD_GAP)
    spot = spots.place_in(cloud, view.obstacles(), held, io.obs["tcp_pose"],
                              pack=target.part != "interior", avoid=avoid)
    if spot is None:
        return SkillResult(SkillCode.NOT_FOUND, f"no point of {target.name} was seen inside "
                           f"its detection box in the {target.camera} camera's depth, so "
                           f"there is no floor to put {held.name} on")
    pose, approach = spot
    if yaw is not None:
        pose = holding.with_yaw(pose, yaw)
    return _release(io, held, pose, approach, view, why)


def place_at(io: SkillIO, held: HeldObject, position: np.ndarray | None = None,
             yaw: float | None = None, *, view: SceneView | None = None,
             why: str = "") -> SkillResult:
    """Set ``held`` down on the table at ``position`` (x, y; its bottom on the table) turned
    to ``yaw`` (rad; default the hand's), or, without a position, on the free patch nearest
    the workspace's middle (looked for again from home when the arm hid them all).
    ``BLOCKED`` when no free patch is visible, or something stands where the held object
    would go; ``BAD_ARGS`` for a position outside the workspace."""
    view = view or SceneView(io.obs)
    obstacles, tcp = view.obstacles(), io.obs["tcp_pose"]
    if position is None:
        def arm_clear(pose: np.ndarray) -> bool:  # the view as it is when asked
            return view.arm_clear(pose, held.radius)

        spot = spots.table_spot(obstacles, held, tcp, io.workspace, view.seen_free,
                                    arm_clear, view.height_noise(obstacles.points))
        # the arm may hide the free table from the shoulder camera: look again from home
        if spot is None and not at_home(io.obs) and io.act(
                home(), f"clear the view for a spot for {held.name}").get("ok"):
            view = SceneView(io.obs)
            obstacles, tcp = view.obstacles(), io.obs["tcp_pose"]
            spot = spots.table_spot(obstacles, held, tcp, io.workspace, view.seen_free,
                                        arm_clear, view.height_noise(obstacles.points))
        if spot is None:
            return SkillResult(SkillCode.BLOCKED, "no free spot on the table is visible")
        pose, approach = spot
        if yaw is not None:
            pose = holding.with_yaw(pose, yaw)
    else:
        xy = np.asarray(position, float)[:2]
        if not io.workspace.contains(np.array([*xy, held.below_tcp])):
            return SkillResult(SkillCode.BAD_ARGS, f"({xy[0]:.2f}, {xy[1]:.2f}) lies outside "
                               f"the workspace ({io.workspace.describe()})")
        standing = spots.standing_mask(obstacles, table_height(obstacles),
                                           view.height_noise(obstacles.points))
        near = np.linalg.norm(obstacles.points[:, :2] - xy, axis=1) < held.radius + 0.01
        if np.any(standing & near):
            return SkillResult(SkillCode.BLOCKED, f"something stands at ({xy[0]:.2f}, "
                               f"{xy[1]:.2f}) where {held.name} would go")
        hand_yaw = holding.tcp_yaw(tcp) if yaw is None else yaw
        pose = top_down_pose(np.array([*xy, held.below_tcp + spots.RELEASE_GAP]),
                             hand_yaw)
        approach = 0.0
    return _release(io, held, pose, approach, view, why)


def _release(io: SkillIO, held: HeldObject, pose: np.ndarray, approach: float,
             view: SceneView, why: str) -> SkillResult:
    here = np.asarray(io.obs["tcp_pose"][:3], float)
    approach = max(approach, clearance.approach_over(view.obstacles(), pose[:2, 3], pose[2, 3],
                                                     hanging=held.below_tcp, start=here[:2]))
    status = io.act(place(pose, approach), why or f"place {held.name}")
    if status.get("reason") == "unreachable":
        # the two-finger hand is the same turned half a turn: the wrist may reach that one
        pose = holding.with_yaw(pose, yaw_of(pose) + np.pi)
        status = io.act(place(pose, approach), why or f"place {held.name}")
    return SkillResult.from_status(status, f"place of {held.name}", pose=pose)
