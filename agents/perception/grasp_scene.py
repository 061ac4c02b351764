"""What the grasp planner knows of the scene around a target: the target thinned and
completed by symmetry, its normals, support height and centre, the obstacles near it, and the
collision check of the gripper against them (base frame, metres)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentic_env.agents.perception.geometry import (
    estimate_normals,
    flat_keys,
    near_mask,
    voxel_downsample,
)
from agentic_env.agents.perception.gripper import (
    GripperGeometry,
    distance_to_boxes,
    points_in_boxes,
)
from agentic_env.agents.perception.pointcloud import PointCloud

#: Fingertip height above the object's support in a grasp, m (the experts use 8 mm).
FINGERTIP_CLEARANCE = 0.008
#: Inflation of the gripper boxes in the collision check, m.
COLLISION_MARGIN = 0.003
#: Edge of the obstacle heightmap's columns, m.
HEIGHTMAP_CELL = 0.004
#: Where the fingers are probed against the heightmap: a 3 x 3 x 3 grid over each box
#: (as fractions of its half extents).
FINGER_SAMPLES = np.stack(np.meshgrid(*[np.array([-1.0, 0.0, 1.0])] * 3), -1).reshape(-1, 3)
#: Grasps checked at once by :func:`collision_free`.
CHECK_BATCH = 32
#: Clearance from the scene that scores full marks, m.
FULL_CLEARANCE = 0.03
#: Grid of :func:`near_mask` that tells the scene's samples of the target, m (it catches
#: points closer than this, never farther than 3.5 times it).
TARGET_MATCH = 0.002
#: Target and scene are thinned to these voxel sizes, m.
TARGET_VOXEL = 0.003
SCENE_VOXEL = 0.005
#: The target's points are thinned to this voxel size for the collision check, m.
COLLISION_VOXEL = 0.006
#: Depth of the band of highest target points whose middle is taken as the object's
#: vertical axis, m.
TOP_BAND = 0.01
#: Most target points used (larger clouds are thinned with a coarser voxel).
MAX_TARGET_POINTS = 700
#: Scene points farther than this (horizontally) from the target's bounds are ignored, m.
SCENE_RADIUS = 0.15


@dataclass(frozen=True)
class GraspScene:
    """The target and its surroundings as the grasp planner uses them (see
    :func:`prepare_scene`)."""

    target: np.ndarray  # (K, 3)
    normals: np.ndarray  # (K, 3)
    obstacles: np.ndarray  # (M, 3) scene minus target, near the target
    coarse_target: np.ndarray  # (C, 3) the target thinned for the collision check
    ceiling: Heightmap  # highest obstacle point per column
    centre: np.ndarray  # (3,) centre of the target's bounds
    axes: np.ndarray  # (2, 2) horizontal principal axes (major, minor)
    extents: np.ndarray  # (2,) half extents along those axes
    support_z: float


def prepare_scene(target: PointCloud, scene: PointCloud, mirror: bool) -> GraspScene | None:
    """Thin the target (and complete its hidden side by a half turn about its vertical axis
    when ``mirror``), estimate its normals, support height and centre, and collect the scene
    points near it that are neither the target nor the support surface. ``None`` when the
    target has fewer than 8 points after thinning."""
    voxel = TARGET_VOXEL
    small = voxel_downsample(target, voxel)
    while len(small) > MAX_TARGET_POINTS:
        voxel *= 1.4
        small = voxel_downsample(target, voxel)
    points = small.points
    if len(points) < 8:
        return None
    low, high = points.min(axis=0), points.max(axis=0)
    nearby = np.all((scene.points[:, :2] > low[:2] - SCENE_RADIUS)
                    & (scene.points[:, :2] < high[:2] + SCENE_RADIUS), axis=1)
    nearby &= scene.points[:, 2] < high[2] + 0.25
    scene_points = voxel_downsample(scene.select(nearby), SCENE_VOXEL).points
    # the scene's own samples of the target coincide with the target's (same camera pixels);
    # a fine grid keeps the object the target rests on (a lower block of a stack) an obstacle
    scene_points = scene_points[~near_mask(scene_points, target.points, TARGET_MATCH)]
    support_z = _support_height(points, scene_points)
    # the support surface itself is kept clear by the fingertip clearance rule
    obstacles = scene_points[scene_points[:, 2] > support_z + FINGERTIP_CLEARANCE / 2]
    xy = points[:, :2] - points[:, :2].mean(axis=0)
    _, vectors = np.linalg.eigh(xy.T @ xy)
    axes = vectors[:, ::-1].T  # rows: major, minor
    # the top band is seen whole from above: its middle is the object's vertical axis
    top_band = xy[points[:, 2] > high[2] - TOP_BAND] @ axes.T
    mid = (top_band.max(axis=0) + top_band.min(axis=0)) / 2.0
    centre_xy = points[:, :2].mean(axis=0) + mid @ axes
    normals = estimate_normals(points)
    if mirror:
        points, normals = _mirrored(points, normals, centre_xy)
    along = (points[:, :2] - centre_xy) @ axes.T
    extents = np.max(np.abs(along), axis=0)
    centre = np.array([*centre_xy, (support_z + high[2]) / 2.0])
    coarse = voxel_downsample(PointCloud(points, np.zeros((len(points), 3), np.uint8),
                                         np.zeros((len(points), 2), np.int64)),
                              COLLISION_VOXEL).points
    return GraspScene(points, normals, obstacles, coarse, Heightmap.of(obstacles), centre,
                     axes, extents, support_z)


@dataclass(frozen=True)
class Heightmap:
    """Highest obstacle point per ``HEIGHTMAP_CELL`` column (base frame x, y)."""

    origin: np.ndarray  # (2,) x, y of cell (0, 0)'s corner
    top: np.ndarray  # (X, Y) highest z per cell, -inf where empty

    @classmethod
    def of(cls, points: np.ndarray) -> Heightmap:
        if len(points) == 0:
            return cls(np.zeros(2), np.full((1, 1), -np.inf))
        origin = points[:, :2].min(axis=0)
        cells = np.floor((points[:, :2] - origin) / HEIGHTMAP_CELL).astype(int)
        top = np.full(tuple(cells.max(axis=0) + 1), -np.inf)
        np.maximum.at(top, (cells[:, 0], cells[:, 1]), points[:, 2])
        return cls(origin, top)

    def above(self, points: np.ndarray) -> np.ndarray:
        """Whether an obstacle point lies above each point (N, 3), in its column."""
        cells = np.floor((points[:, :2] - self.origin) / HEIGHTMAP_CELL).astype(int)
        inside = np.all((cells >= 0) & (cells < self.top.shape), axis=1)
        result = np.zeros(len(points), bool)
        result[inside] = self.top[cells[inside, 0], cells[inside, 1]] > points[inside, 2]
        return result


def _mirrored(points: np.ndarray, normals: np.ndarray,
              centre_xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points and normals plus their half-turn about the vertical axis through
    ``centre_xy``: the side hidden from the camera, assuming the object is symmetric."""
    turned_points, turned_normals = points.copy(), normals.copy()
    turned_points[:, :2] = 2.0 * centre_xy - points[:, :2]
    turned_normals[:, :2] *= -1.0
    return np.concatenate([points, turned_points]), np.concatenate([normals, turned_normals])


def _support_height(points: np.ndarray, scene: np.ndarray) -> float:
    """Height of the surface the target rests on: the highest scene points at most 3 cm
    below the target's lowest point, within 1 cm of its footprint; else that lowest point."""
    lowest = float(points[:, 2].min())
    cell = 0.01
    footprint = np.unique(flat_keys(np.floor(points[:, :2] / cell).astype(np.int64)
                                    @ np.array([[1, 0, 0], [0, 1, 0]])))
    keys = np.floor(scene[:, :2] / cell).astype(np.int64) @ np.array([[1, 0, 0], [0, 1, 0]])
    under = np.isin(flat_keys(keys), footprint)
    below = scene[under & (scene[:, 2] < lowest + 0.002) & (scene[:, 2] > lowest - 0.03), 2]
    if below.size == 0:
        return lowest
    return float(min(np.percentile(below, 90), lowest))


def collision_free(prep: GraspScene, gripper: GripperGeometry, rotations: np.ndarray,
                    tcp: np.ndarray, opening: np.ndarray, bound: np.ndarray,
                    enough: int, approach_distance: float,
                    clearance_weight: float) -> tuple[np.ndarray, np.ndarray]:
    """Whether each grasp's gripper, swept along the approach from the pre-grasp pose, misses
    the obstacles and the target; and its clearance (distance to the nearest obstacle), m.

    Grasps are checked best ``bound`` (an upper bound of their score, taking full clearance)
    first; the check stops once ``enough`` collision-free grasps score at least the next
    grasp's bound (their score: the bound less ``clearance_weight`` times the missing
    clearance fraction), and the grasps left unchecked are reported as not free. The gripper
    is swept back along the approach by ``approach_distance`` m. Grasps are checked
    :data:`CHECK_BATCH` at a time, each batch at once.
    """
    count = len(tcp)
    free = np.zeros(count, bool)
    clearance = np.zeros(count)
    solid = np.concatenate([prep.obstacles, prep.coarse_target])
    is_obstacle = np.arange(len(solid)) < len(prep.obstacles)
    order = np.argsort(-bound)
    found = np.zeros(0)  # scores of the free grasps checked so far, in checking order
    for start in range(0, count, CHECK_BATCH):
        batch = order[start:start + CHECK_BATCH]
        ok, near_m = _batch_free(prep, gripper, solid, is_obstacle, rotations[batch],
                                 tcp[batch], opening[batch], approach_distance)
        score = bound[batch] - clearance_weight * (1 - near_m / FULL_CLEARANCE)
        # grasp i of the batch is checked unless `enough` grasps checked before it (earlier
        # batches', then this batch's free ones before i) score at least its bound
        earlier = np.concatenate([found, np.where(ok, score, -np.inf)])
        before = np.arange(len(earlier))[:, None] < (len(found) + np.arange(len(batch)))
        stops = np.flatnonzero(np.count_nonzero(
            before & (earlier[:, None] >= bound[batch]), axis=0) >= enough)
        checked = stops[0] if stops.size else len(batch)
        ok[checked:] = False
        free[batch] = ok
        clearance[batch[ok]] = near_m[ok]
        found = np.concatenate([found, score[ok]])
        if stops.size:
            break
    return free, clearance


def _batch_free(prep: GraspScene, gripper: GripperGeometry, solid: np.ndarray,
                is_obstacle: np.ndarray, rotations: np.ndarray, tcp: np.ndarray,
                opening: np.ndarray, approach_distance: float) -> tuple[np.ndarray, np.ndarray]:
    """For grasps (H, ...) at once: whether each is collision-free (see
    :func:`collision_free`), and its clearance from the obstacles, m (meaningful where free)."""
    centres, halves = gripper.boxes_at(opening)  # (H, B, 3), (B, 3)
    swept_c, swept_h = centres.copy(), halves.copy()
    swept_c[:, :, 2] -= approach_distance / 2.0
    swept_h[:, 2] += approach_distance / 2.0
    # one box around everything, grown by the full-clearance distance, culls most points:
    # the rest are (grasp, point) pairs
    low = np.min(swept_c - swept_h, axis=1) - FULL_CLEARANCE
    high = np.max(swept_c + swept_h, axis=1) + FULL_CLEARANCE
    local = np.matmul(solid[None] - tcp[:, None], rotations)  # (H, N, 3)
    near = np.all((local >= low[:, None]) & (local <= high[:, None]), axis=2)
    grasp, point = np.nonzero(near)
    pairs = local[grasp, point]
    hit = np.any(points_in_boxes(pairs, swept_c[grasp], swept_h, COLLISION_MARGIN), axis=1)
    ok = np.ones(len(tcp), bool)
    ok[grasp[hit]] = False
    # a finger under an obstacle point has entered space the camera could not see (the
    # part of a neighbour hidden behind the target, seen from a tilted approach)
    fingers = gripper.n_finger_boxes
    samples = (centres[:, :fingers, None] + FINGER_SAMPLES * halves[:fingers, None]).reshape(
        len(tcp), -1, 3)
    world = np.matmul(samples, rotations.transpose(0, 2, 1)) + tcp[:, None]
    ok &= ~np.any(prep.ceiling.above(world.reshape(-1, 3)).reshape(len(tcp), -1), axis=1)
    near_m = np.full(len(tcp), FULL_CLEARANCE)
    measured = ok[grasp] & is_obstacle[point]
    distance = distance_to_boxes(pairs[measured], centres[grasp[measured]], halves)
    np.minimum.at(near_m, grasp[measured], distance)
    return ok, near_m
