"""Antipodal parallel-jaw grasp candidates from point clouds (an open stand-in for AnyGrasp).

A candidate is a TCP pose (4x4, robot base frame; TCP z = approach, y = closing) and the
object's width between the pads. :func:`grasp_candidates` works in four steps:

1. **Hypotheses** (``n_samples``): closing axes from antipodal point pairs of the target
   (surface normals from local PCA; a pair qualifies when both normals lie within the friction
   cone around the line joining the points), from random and evenly spaced yaws, and from the
   target's narrowest horizontal axis; each with an approach direction within ``max_tilt_deg``
   of straight down (tilted about the closing axis) and a grasp point on the object.
2. **Depth and centring**: the TCP height follows the scripted experts' rule: the fingertips
   ``FINGERTIP_CLEARANCE`` above the object's support, the TCP no lower than the object's
   middle, and the palm clear of its top. The width is the object's extent along the
   closing axis between the pads (within the pads' length and breadth), and the TCP is
   centred between the two extremes.
3. **Collision check** of the finger and palm boxes (:mod:`.gripper`), opened to width +
   the pick primitive's opening margin and swept back along the approach by the pre-grasp
   distance, against the scene (scene minus target and minus the support surface, which
   the depth rule keeps clear) and the target; and no finger may lie under a scene point
   (a tilted finger would otherwise slip into the part of a neighbour hidden behind the
   target). Grasps are checked best first and the check stops once enough are found.
4. **Ranking** by a weighted sum of named terms (``details``): antipodality of the contact
   normals, centring on the object's centre, clearance from the scene, uprightness, and
   narrowness (the object's narrowest horizontal extent over its extent along the closing
   axis); then near-duplicates are suppressed and the best ``top_k`` returned.

The side of the target hidden from the camera is completed by symmetry (``mirror``), so
widths and centres measured along the viewing direction are not cut short.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agentic_env.agents.perception.gripper import (
    GripperGeometry,
    distance_to_boxes,
    gripper_geometry,
    points_in_boxes,
)
from agentic_env.agents.perception.pointcloud import (
    PointCloud,
    estimate_normals,
    flat_keys,
    near_mask,
    voxel_downsample,
)

#: Opening beyond the object's width the pick primitive adds before closing, m (its
#: ``PrimitiveConfig.open_margin``).
OPEN_MARGIN = 0.02
#: Pre-grasp distance the pick primitive descends from along the approach, m.
APPROACH_DISTANCE = 0.10
#: Fingertip height above the object's support in a grasp, m (the experts use 8 mm).
FINGERTIP_CLEARANCE = 0.008
#: Gap kept between the object's top and the palm, m.
PALM_CLEARANCE = 0.007
#: Inflation of the gripper boxes in the collision check, m.
COLLISION_MARGIN = 0.003
#: Smallest and largest object width accepted between the pads, m.
MIN_WIDTH = 0.005
#: Half angle of the friction cone used for antipodal pairs, degrees.
FRICTION_CONE_DEG = 25.0
#: Antipodality credited to a contact side the camera does not see, as a fraction of the
#: seen side's, and to a grasp with no sideways-facing contact normal at all.
UNSEEN_SIDE, NO_EVIDENCE = 0.8, 0.3
#: Weights of the score terms (they sum to 1).
WEIGHTS = {"antipodal": 0.3, "centring": 0.2, "clearance": 0.2, "upright": 0.1,
           "narrow": 0.2}
#: Edge of the obstacle heightmap's columns, m.
HEIGHTMAP_CELL = 0.004
#: Where the fingers are probed against the heightmap: a 3 x 3 x 3 grid over each box
#: (as fractions of its half extents).
FINGER_SAMPLES = np.stack(np.meshgrid(*[np.array([-1.0, 0.0, 1.0])] * 3), -1).reshape(-1, 3)
#: Collision-free grasps found per returned one before the check stops (see
#: :func:`_collision_free`).
KEEP_PER_RETURNED = 3
#: Clearance from the scene that scores full marks, m.
FULL_CLEARANCE = 0.03
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
class GraspCandidate:
    """One grasp.

    Attributes:
        pose: (4, 4) TCP pose in the robot base frame (z = approach, y = closing), metres.
        width: object width between the pads at the grasp, m: the ``width`` to give
            :func:`agentic_env.actions.pick` (it adds its own opening margin).
        score: 0..1, higher is better; the weighted sum of ``details``' terms.
        details: named score terms (each 0..1) plus ``tilt_deg`` and ``clearance_m``.
    """

    pose: np.ndarray
    width: float
    score: float
    details: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class _Prepared:
    target: np.ndarray  # (K, 3)
    normals: np.ndarray  # (K, 3)
    obstacles: np.ndarray  # (M, 3) scene minus target, near the target
    coarse_target: np.ndarray  # (C, 3) the target thinned for the collision check
    ceiling: _Heightmap  # highest obstacle point per column
    centre: np.ndarray  # (3,) centre of the target's bounds
    axes: np.ndarray  # (2, 2) horizontal principal axes (major, minor)
    extents: np.ndarray  # (2,) half extents along those axes
    support_z: float
    top_z: float


def _prepare(target: PointCloud, scene: PointCloud, mirror: bool) -> _Prepared | None:
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
    scene_points = scene_points[~near_mask(scene_points, points, 0.005)]
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
    return _Prepared(points, normals, obstacles, coarse, _Heightmap.of(obstacles), centre,
                     axes, extents, support_z, float(high[2]))


@dataclass(frozen=True)
class _Heightmap:
    """Highest obstacle point per ``HEIGHTMAP_CELL`` column (base frame x, y)."""

    origin: np.ndarray  # (2,) x, y of cell (0, 0)'s corner
    top: np.ndarray  # (X, Y) highest z per cell, -inf where empty

    @classmethod
    def of(cls, points: np.ndarray) -> _Heightmap:
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


def _frames(approach: np.ndarray, closing: np.ndarray) -> np.ndarray:
    """(H, 3, 3) rotations with columns x = y cross z, y = closing, z = approach; the sign of
    the closing axis is chosen so that the TCP x axis points away from the base (+x), which
    keeps the wrist yaw within [-90, 90] degrees like the experts' top grasps."""
    z = approach / np.linalg.norm(approach, axis=1, keepdims=True)
    y = closing - np.sum(closing * z, axis=1, keepdims=True) * z
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    x = np.cross(y, z)
    flip = np.where(x[:, 0] < 0, -1.0, 1.0)[:, None]
    return np.stack([x * flip, y * flip, z], axis=2)


def _tilted(closing: np.ndarray, tilt: np.ndarray) -> np.ndarray:
    """Approach directions: straight down tilted by ``tilt`` rad about the (horizontal)
    closing axis."""
    down = np.array([0.0, 0.0, -1.0])
    side = np.cross(closing, down)
    return np.cos(tilt)[:, None] * down + np.sin(tilt)[:, None] * side


def _hypotheses(prep: _Prepared, rng: np.random.Generator, n_samples: int,
                max_tilt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closing axes (H, 3, horizontal), tilts (H,) rad and grasp points (H, 3)."""
    axes, anchors, tilts = [], [], []
    # evenly spaced yaws and the narrowest axis through the centre, upright
    yaws = np.linspace(0.0, np.pi, 12, endpoint=False)
    grid = np.stack([np.cos(yaws), np.sin(yaws), np.zeros_like(yaws)], 1)
    axes += [*grid, np.array([*prep.axes[1], 0.0])]
    anchors += [prep.centre] * (len(grid) + 1)
    tilts += [0.0] * (len(grid) + 1)
    budget = max(n_samples - len(axes), 0)
    pair_axes, pair_points = _antipodal_pairs(prep, rng, budget // 2)
    axes += list(pair_axes)
    anchors += list(pair_points)
    rest = budget - len(pair_axes)
    yaw = rng.uniform(0.0, np.pi, rest)
    axes += list(np.stack([np.cos(yaw), np.sin(yaw), np.zeros(rest)], 1))
    offset = rng.normal(0.0, 0.4, rest) * prep.extents[0]
    anchors += list(prep.centre + offset[:, None] * np.array([*prep.axes[0], 0.0]))
    extra = len(axes) - len(tilts)
    upright = rng.random(extra) < 0.6
    tilts += list(np.where(upright, 0.0, rng.uniform(-max_tilt, max_tilt, extra)))
    closing = np.array(axes, dtype=float)
    closing[:, 2] = 0.0
    closing /= np.linalg.norm(closing, axis=1, keepdims=True)
    return closing, np.array(tilts), np.array(anchors)


def _antipodal_pairs(prep: _Prepared, rng: np.random.Generator,
                     count: int) -> tuple[np.ndarray, np.ndarray]:
    """Up to ``count`` closing axes (K, 3) and midpoints (K, 3) of antipodal point pairs with
    a closing axis within reach of a near-top-down grasp."""
    points, normals = prep.target, prep.normals
    sideways = np.linalg.norm(normals[:, :2], axis=1) > 0.5
    candidates = np.flatnonzero(sideways)
    if count <= 0 or candidates.size < 2:
        return np.zeros((0, 3)), np.zeros((0, 3))
    cone = np.cos(np.deg2rad(FRICTION_CONE_DEG))
    first = rng.choice(candidates, size=min(count * 2, 4 * candidates.size))
    line = points[None, candidates] - points[first, None]  # (S, C, 3)
    length = np.linalg.norm(line, axis=-1)
    direction = line / np.maximum(length, 1e-9)[..., None]
    ok = ((length > MIN_WIDTH) & (length < gripper_geometry().max_opening)
          & (np.sum(direction * normals[first, None], axis=-1) < -cone)
          & (np.sum(direction * normals[None, candidates], axis=-1) > cone))
    rows, cols = np.nonzero(ok)
    if rows.size == 0:
        return np.zeros((0, 3)), np.zeros((0, 3))
    pick = rng.choice(rows.size, size=min(count, rows.size), replace=False)
    rows, cols = rows[pick], cols[pick]
    axes = direction[rows, cols]
    mids = (points[first[rows]] + points[candidates[cols]]) / 2.0
    return axes, mids


def grasp_candidates(target: PointCloud, scene: PointCloud, *, rng: np.random.Generator,
                     n_samples: int = 200, max_tilt_deg: float = 30.0,
                     top_k: int = 10, mirror: bool = True) -> list[GraspCandidate]:
    """Ranked parallel-jaw grasps of ``target`` that do not collide with ``scene``.

    Args:
        target: the object's points (base frame), e.g. from :func:`.target_cloud`.
        scene: the surrounding points, table included (e.g. the whole camera cloud); points
            within 5 mm of the target are treated as the target.
        rng: random generator (hypotheses are sampled).
        n_samples: grasp hypotheses evaluated (>= 13 gives the fixed ones plus samples).
        max_tilt_deg: largest angle between the approach and straight down, degrees (0-60).
        top_k: most candidates returned.
        mirror: complete the side of the target hidden from the camera by turning its points
            half a turn about the vertical axis through the middle of its top (exact for
            boxes, cylinders, spheres and other symmetric objects; for others it errs on the
            wide side). Without it, widths measured along the viewing direction are short.

    Returns:
        Up to ``top_k`` collision-free candidates, best first; ``[]`` when the target has
        too few points (< 8 after thinning) or no hypothesis survives.
    """
    if len(target) == 0:
        return []
    prep = _prepare(target, scene, mirror)
    if prep is None:
        return []
    gripper = gripper_geometry()
    max_tilt = np.deg2rad(float(np.clip(max_tilt_deg, 0.0, 60.0)))
    closing, tilt, anchors = _hypotheses(prep, rng, n_samples, max_tilt)
    rotations = _frames(_tilted(closing, tilt), closing)
    tcp, width, contacts = _place_tcp(prep, gripper, rotations, anchors)
    valid = np.isfinite(width) & (width >= MIN_WIDTH) & (
        width <= gripper.max_opening - 0.005)
    if not np.any(valid):
        return []
    rotations, tcp, width, tilt = rotations[valid], tcp[valid], width[valid], tilt[valid]
    contacts = contacts[valid]
    opening = np.minimum(width + OPEN_MARGIN, gripper.max_opening)
    terms = {
        "antipodal": contacts,
        "centring": _centring(prep, rotations, tcp),
        "clearance": np.ones(len(tcp)),
        "upright": 1.0 - np.abs(tilt) / np.deg2rad(90.0),
        "narrow": _narrowness(prep, rotations),
    }
    bound = sum(WEIGHTS[name] * value for name, value in terms.items())
    free, clearance = _collision_free(prep, gripper, rotations, tcp, opening, bound,
                                      KEEP_PER_RETURNED * top_k)
    if not np.any(free):
        return []
    terms = {name: value[free] for name, value in terms.items()}
    terms["clearance"] = clearance[free] / FULL_CLEARANCE
    score = sum(WEIGHTS[name] * value for name, value in terms.items())
    tilt, width = tilt[free], width[free]
    poses = np.tile(np.eye(4), (int(np.count_nonzero(free)), 1, 1))
    poses[:, :3, :3] = rotations[free]
    poses[:, :3, 3] = tcp[free]
    clearance = clearance[free]
    chosen = _suppress_duplicates(poses, np.asarray(score), top_k)
    return [
        GraspCandidate(
            pose=poses[i], width=float(width[i]), score=float(score[i]),
            details={**{name: float(value[i]) for name, value in terms.items()},
                     "tilt_deg": float(np.rad2deg(abs(tilt[i]))),
                     "clearance_m": float(clearance[i])})
        for i in chosen
    ]


def grasp_collides(pose: np.ndarray, width: float, target: PointCloud,
                   scene: PointCloud) -> bool:
    """Whether a grasp (TCP ``pose`` (4, 4), base frame; object ``width`` m) would hit the
    scene or the target, by the same check as :func:`grasp_candidates`: the gripper opened to
    ``width`` + the pick primitive's margin and swept back along the approach by the
    pre-grasp distance. A target too small to reason about (< 8 points) counts as a
    collision."""
    prep = _prepare(target, scene, mirror=True)
    if prep is None:
        return True
    pose = np.asarray(pose, dtype=float)
    gripper = gripper_geometry()
    opening = np.array([min(width + OPEN_MARGIN, gripper.max_opening)])
    free, _ = _collision_free(prep, gripper, pose[None, :3, :3], pose[None, :3, 3], opening,
                              np.ones(1), 1)
    return not bool(free[0])


def _place_tcp(prep: _Prepared, gripper: GripperGeometry, rotations: np.ndarray,
               anchors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TCP positions (H, 3), object widths (H,) (nan: no object between the pads) and
    antipodality (H,) of the contact normals."""
    points = prep.target
    pad_x = gripper.pad_half_width + 0.002
    x_axis, y_axis, z_axis = rotations[:, :, 0], rotations[:, :, 1], rotations[:, :, 2]
    # the slab of object points the pads' breadth sweeps, and its top
    rel = points[None] - anchors[:, None]
    slab = np.abs(np.einsum("hkc,hc->hk", rel, x_axis)) <= pad_x
    slab_top = np.max(np.where(slab, points[None, :, 2], -np.inf), axis=1)
    support = prep.support_z
    height = np.maximum.reduce([
        np.full(len(anchors), support + gripper.fingertip_depth + FINGERTIP_CLEARANCE),
        (support + slab_top) / 2.0,
        slab_top + gripper.palm_depth + PALM_CLEARANCE,
    ])
    # raise tilted grasps so that the lowest pad corner keeps the fingertip clearance
    corners = np.array([[sx * gripper.pad_half_width, sy * 0.04, gripper.fingertip_depth]
                        for sx in (-1, 1) for sy in (-1, 1)])
    lowest = np.min(np.einsum("hij,cj->hci", rotations, corners)[..., 2], axis=1)
    height = np.maximum(height, support + FINGERTIP_CLEARANCE - lowest)
    travel = (height - anchors[:, 2]) / z_axis[:, 2]
    tcp = anchors + travel[:, None] * z_axis
    # the object between the pads: breadth of the pads, along the pads' length
    rel = points[None] - tcp[:, None]
    local_x = np.einsum("hkc,hc->hk", rel, x_axis)
    local_y = np.einsum("hkc,hc->hk", rel, y_axis)
    local_z = np.einsum("hkc,hc->hk", rel, z_axis)
    between = ((np.abs(local_x) <= pad_x) & (local_z >= gripper.pad_top)
               & (local_z <= gripper.fingertip_depth))
    enough = np.count_nonzero(between, axis=1) >= 5
    y_max = np.max(np.where(between, local_y, -np.inf), axis=1)
    y_min = np.min(np.where(between, local_y, np.inf), axis=1)
    y_max, y_min = np.where(enough, y_max, 0.0), np.where(enough, y_min, 0.0)
    width = np.where(enough, y_max - y_min, np.nan)
    shift = (y_max + y_min) / 2.0
    tcp = tcp + shift[:, None] * y_axis
    # antipodality: outward normals of the contact regions along -y and +y. Only normals
    # facing sideways (not along the approach: a top edge) count; a side with none (hidden
    # from the camera) is taken as UNSEEN_SIDE times the seen side
    normals_y = np.einsum("kc,hc->hk", prep.normals, y_axis)
    normals_z = np.einsum("kc,hc->hk", prep.normals, z_axis)
    sideways = np.sqrt(np.maximum(1.0 - normals_z**2, 0.0)) > 0.5
    near_max = between & sideways & (local_y >= y_max[:, None] - 0.004)
    near_min = between & sideways & (local_y <= y_min[:, None] + 0.004)
    plus, seen_plus = _masked_mean(np.clip(normals_y, 0.0, 1.0), near_max)
    minus, seen_minus = _masked_mean(np.clip(-normals_y, 0.0, 1.0), near_min)
    plus = np.where(seen_plus, plus, UNSEEN_SIDE * minus)
    minus = np.where(seen_minus, minus, UNSEEN_SIDE * plus)
    antipodal = np.where(seen_plus | seen_minus, (plus + minus) / 2.0, NO_EVIDENCE)
    return tcp, width, antipodal


def _masked_mean(values: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row means of ``values`` (H, K) where ``mask``, and whether the row had any."""
    count = np.count_nonzero(mask, axis=1)
    total = np.sum(np.where(mask, values, 0.0), axis=1)
    return total / np.maximum(count, 1), count > 0


def _collision_free(prep: _Prepared, gripper: GripperGeometry, rotations: np.ndarray,
                    tcp: np.ndarray, opening: np.ndarray, bound: np.ndarray,
                    enough: int) -> tuple[np.ndarray, np.ndarray]:
    """Whether each grasp's gripper, swept along the approach from the pre-grasp pose, misses
    the obstacles and the target; and its clearance (distance to the nearest obstacle), m.

    Grasps are checked best ``bound`` (an upper bound of their score) first; the check stops
    once ``enough`` collision-free grasps score at least the next grasp's bound, and the
    grasps left unchecked are reported as not free.
    """
    count = len(tcp)
    free = np.zeros(count, bool)
    clearance = np.zeros(count)
    found: list[float] = []
    solid = np.concatenate([prep.obstacles, prep.coarse_target])
    is_obstacle = np.arange(len(solid)) < len(prep.obstacles)
    for h in np.argsort(-bound):
        if len(found) >= enough and sorted(found)[-enough] >= bound[h]:
            break
        centres, halves = gripper.boxes(float(opening[h]))
        swept_c, swept_h = centres.copy(), halves.copy()
        swept_c[:, 2] -= APPROACH_DISTANCE / 2.0
        swept_h[:, 2] += APPROACH_DISTANCE / 2.0
        # one box around everything, grown by the full-clearance distance, culls most points
        low = np.min(swept_c - swept_h, axis=0) - FULL_CLEARANCE
        high = np.max(swept_c + swept_h, axis=0) + FULL_CLEARANCE
        local = (solid - tcp[h]) @ rotations[h]
        near = np.all((local >= low) & (local <= high), axis=1)
        local = local[near]
        if np.any(points_in_boxes(local, swept_c, swept_h, COLLISION_MARGIN)):
            continue
        # a finger under an obstacle point has entered space the camera could not see (the
        # part of a neighbour hidden behind the target, seen from a tilted approach)
        fingers = gripper.n_finger_boxes
        samples = (centres[:fingers, None] + FINGER_SAMPLES * halves[:fingers, None]).reshape(
            -1, 3)
        if np.any(prep.ceiling.above(samples @ rotations[h].T + tcp[h])):
            continue
        free[h] = True
        obstacles = local[is_obstacle[near]]
        clearance[h] = FULL_CLEARANCE
        if len(obstacles):
            clearance[h] = min(float(np.min(distance_to_boxes(obstacles, centres, halves))),
                               FULL_CLEARANCE)
        found.append(float(bound[h] - WEIGHTS["clearance"] * (1 - clearance[h] / FULL_CLEARANCE)))
    return free, clearance


def _centring(prep: _Prepared, rotations: np.ndarray, tcp: np.ndarray) -> np.ndarray:
    """1 when the grasp line passes through the object's centre, falling off with the
    offset along the TCP x axis (1/2 at 15 mm)."""
    offset = np.einsum("hc,hc->h", prep.centre[None] - tcp, rotations[:, :, 0])
    return 1.0 / (1.0 + (offset / 0.015) ** 2)


def _narrowness(prep: _Prepared, rotations: np.ndarray) -> np.ndarray:
    """The target's narrowest horizontal extent over its extent along each closing axis
    (1 for the narrowest direction, e.g. across a box's faces rather than its diagonal)."""
    yaws = np.linspace(0.0, np.pi, 36, endpoint=False)
    directions = np.stack([np.cos(yaws), np.sin(yaws)], 1)
    narrowest = float(np.min(np.ptp(prep.target[:, :2] @ directions.T, axis=0)))
    along = np.ptp(np.einsum("kc,hc->hk", prep.target[:, :2], rotations[:, :2, 1]), axis=1)
    return np.minimum((narrowest + 0.005) / (along + 0.005), 1.0)


def _suppress_duplicates(poses: np.ndarray, score: np.ndarray, top_k: int) -> list[int]:
    """Indices of the best grasps, skipping any within 1 cm and 15 degrees of a better one."""
    chosen: list[int] = []
    for i in np.argsort(-score):
        if len(chosen) >= top_k:
            break
        similar = False
        for j in chosen:
            close = np.linalg.norm(poses[i, :3, 3] - poses[j, :3, 3]) < 0.01
            angle_cos = abs(poses[i, :3, 1] @ poses[j, :3, 1]) * (poses[i, :3, 2] @ poses[j, :3, 2])
            if close and angle_cos > np.cos(np.deg2rad(15.0)):
                similar = True
                break
        if not similar:
            chosen.append(int(i))
    return chosen
