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

from agentic_env.agents.perception.grasp_scene import (
    FINGERTIP_CLEARANCE,
    FULL_CLEARANCE,
    GraspScene,
    collision_free,
    prepare_scene,
)
from agentic_env.agents.perception.gripper import (
    GripperGeometry,
    gripper_geometry,
)
from agentic_env.agents.perception.pointcloud import PointCloud
from agentic_env.primitives.types import PrimitiveConfig

#: Opening beyond the object's width the pick primitive adds before closing, m.
OPEN_MARGIN = PrimitiveConfig().open_margin
#: Pre-grasp distance the pick primitive descends from along the approach by default, m.
APPROACH_DISTANCE = PrimitiveConfig().approach_distance
#: Gap kept between the object's top and the palm, m.
PALM_CLEARANCE = 0.007
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
#: Collision-free grasps found per returned one before the check stops (see
#: :func:`_collision_free`).
KEEP_PER_RETURNED = 3


@dataclass(frozen=True)
class GraspCandidate:
    """One grasp.

    Attributes:
        pose: (4, 4) TCP pose in the robot base frame (z = approach, y = closing), metres.
        width: object width between the pads at the grasp, m: the ``width`` to give
            :func:`agentic_env.contract.actions.pick` (it adds its own opening margin).
        score: 0..1, higher is better; the weighted sum of ``details``' terms.
        details: named score terms (each 0..1) plus ``tilt_deg`` and ``clearance_m``.
    """

    pose: np.ndarray
    width: float
    score: float
    details: dict[str, float] = field(default_factory=dict)


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


def _hypotheses(prep: GraspScene, rng: np.random.Generator, n_samples: int,
                max_tilt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closing axes (H, 3, horizontal), tilts (H,) rad and grasp points (H, 3)."""
    # evenly spaced yaws and the narrowest axis through the centre, upright
    yaws = np.linspace(0.0, np.pi, 12, endpoint=False)
    fixed = np.concatenate([np.stack([np.cos(yaws), np.sin(yaws), np.zeros_like(yaws)], 1),
                            [[*prep.axes[1], 0.0]]])
    budget = max(n_samples - len(fixed), 0)
    pair_axes, pair_points = _antipodal_pairs(prep, rng, budget // 2)
    rest = budget - len(pair_axes)
    yaw = rng.uniform(0.0, np.pi, rest)
    offset = rng.normal(0.0, 0.4, rest) * prep.extents[0]
    closing = np.concatenate([fixed, pair_axes,
                              np.stack([np.cos(yaw), np.sin(yaw), np.zeros(rest)], 1)])
    anchors = np.concatenate([np.tile(prep.centre, (len(fixed), 1)), pair_points,
                              prep.centre + offset[:, None] * np.array([*prep.axes[0], 0.0])])
    extra = len(closing) - len(fixed)
    upright = rng.random(extra) < 0.6
    tilts = np.concatenate([np.zeros(len(fixed)),
                            np.where(upright, 0.0, rng.uniform(-max_tilt, max_tilt, extra))])
    closing[:, 2] = 0.0
    closing /= np.linalg.norm(closing, axis=1, keepdims=True)
    return closing, tilts, anchors


def _antipodal_pairs(prep: GraspScene, rng: np.random.Generator,
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
                     top_k: int = 10, mirror: bool = True,
                     approach_distance: float = APPROACH_DISTANCE) -> list[GraspCandidate]:
    """Ranked parallel-jaw grasps of ``target`` that do not collide with ``scene``.

    Args:
        target: the object's points (base frame), e.g. from :func:`.target_cloud`.
        scene: the surrounding points, table included (e.g. the whole camera cloud); points
            that coincide with target points (within 2 mm) are treated as the target.
        rng: random generator (hypotheses are sampled).
        n_samples: grasp hypotheses evaluated (>= 13 gives the fixed ones plus samples).
        max_tilt_deg: largest angle between the approach and straight down, degrees (0-60).
        top_k: most candidates returned.
        mirror: complete the side of the target hidden from the camera by turning its points
            half a turn about the vertical axis through the middle of its top (exact for
            boxes, cylinders, spheres and other symmetric objects; for others it errs on the
            wide side). Without it, widths measured along the viewing direction are short.
        approach_distance: how far back along the approach the gripper is swept in the
            collision check, m: the pick's pre-grasp distance (0.1 m by default).

    Returns:
        Up to ``top_k`` collision-free candidates, best first; ``[]`` when the target has
        too few points (< 8 after thinning) or no hypothesis survives.
    """
    if len(target) == 0:
        return []
    prep = prepare_scene(target, scene, mirror)
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
    free, clearance = collision_free(prep, gripper, rotations, tcp, opening, bound,
                                      KEEP_PER_RETURNED * top_k, approach_distance,
                                      WEIGHTS["clearance"])
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


def grasp_collides(pose: np.ndarray, width: float, target: PointCloud, scene: PointCloud,
                   approach_distance: float = APPROACH_DISTANCE) -> bool:
    """Whether a grasp (TCP ``pose`` (4, 4), base frame; object ``width`` m) would hit the
    scene or the target, by the same check as :func:`grasp_candidates`: the gripper opened to
    ``width`` + the pick primitive's margin and swept back along the approach by the
    pre-grasp distance. A target too small to reason about (< 8 points) counts as a
    collision."""
    prep = prepare_scene(target, scene, mirror=True)
    if prep is None:
        return True
    pose = np.asarray(pose, dtype=float)
    gripper = gripper_geometry()
    opening = np.array([min(width + OPEN_MARGIN, gripper.max_opening)])
    free, _ = collision_free(prep, gripper, pose[None, :3, :3], pose[None, :3, 3], opening,
                              np.ones(1), 1, approach_distance, 0.0)
    return not bool(free[0])


def _place_tcp(prep: GraspScene, gripper: GripperGeometry, rotations: np.ndarray,
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
    reach = gripper.max_opening / 2.0  # the pads' outer faces, at most
    corners = np.array([[sx * gripper.pad_half_width, sy * reach, gripper.fingertip_depth]
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


def _centring(prep: GraspScene, rotations: np.ndarray, tcp: np.ndarray) -> np.ndarray:
    """1 when the grasp line passes through the object's centre, falling off with the
    offset along the TCP x axis (1/2 at 15 mm)."""
    offset = np.einsum("hc,hc->h", prep.centre[None] - tcp, rotations[:, :, 0])
    return 1.0 / (1.0 + (offset / 0.015) ** 2)


def _narrowness(prep: GraspScene, rotations: np.ndarray) -> np.ndarray:
    """The target's narrowest horizontal extent over its extent along each closing axis
    (1 for the narrowest direction, e.g. across a box's faces rather than its diagonal)."""
    yaws = np.linspace(0.0, np.pi, 36, endpoint=False)
    directions = np.stack([np.cos(yaws), np.sin(yaws)], 1)
    narrowest = float(np.min(np.ptp(prep.target[:, :2] @ directions.T, axis=0)))
    along = np.ptp(np.einsum("kc,hc->hk", prep.target[:, :2], rotations[:, :2, 1]), axis=1)
    return np.minimum((narrowest + 0.005) / (along + 0.005), 1.0)


def _suppress_duplicates(poses: np.ndarray, score: np.ndarray, top_k: int) -> list[int]:
    """Indices of the best grasps, skipping any within 1 cm and 15 degrees of a better one."""
    ranked = np.argsort(-score)
    position, closing, approach = (poses[ranked, :3, 3], poses[ranked, :3, 1],
                                   poses[ranked, :3, 2])
    close = np.linalg.norm(position[:, None] - position[None], axis=-1) < 0.01
    angle_cos = np.abs(closing @ closing.T) * (approach @ approach.T)
    similar = close & (angle_cos > np.cos(np.deg2rad(15.0)))
    # greedy, best first: each kept grasp rules out the grasps similar to it, itself included
    open_ = np.ones(len(ranked), bool)
    chosen: list[int] = []
    while len(chosen) < top_k and np.any(open_):
        best = int(np.argmax(open_))
        chosen.append(int(ranked[best]))
        open_ &= ~similar[best]
    return chosen
