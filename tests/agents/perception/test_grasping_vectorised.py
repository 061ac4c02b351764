"""The vectorised grasp planner returns what a per-candidate implementation returns.

The reference is computed live, in the same process: :func:`grasp_candidates` runs once as
shipped and once with its batched steps swapped for plain per-candidate versions (below)
that follow the planner's rules one grasp at a time — hypotheses built in lists, the TCP
placed one hypothesis at a time, the collision check one grasp at a time with its early stop,
duplicates suppressed by a double loop. Both runs see the same clouds and the same random
stream, so any difference is the vectorisation's, not a CPU's.

The synthetic clouds are jittered by a seeded 0.3 mm (a depth camera's points never lie on an
exact grid): on exact grids a voxel boundary or a pad edge falls on a point, where either
implementation's last-bit rounding decides, and the candidates would be the floating point's.
Poses agree to ``ATOL`` (``1e-9`` m: many orders above the ≈ 1e-15 m rounding of sums of
~1 m terms, many below a millimetre).
"""

from __future__ import annotations

import numpy as np
import pytest

from agentic_env.agents.perception import PointCloud, grasp_candidates, grasp_scene, grasping
from agentic_env.agents.perception.gripper import (
    GripperGeometry,
    distance_to_boxes,
    points_in_boxes,
)

#: Sampling step of the synthetic surfaces, m.
STEP = 0.003
#: Standard deviation of the jitter added to every synthetic point, m.
JITTER = 0.0003
#: Agreement required of the two implementations' poses, widths and scores.
ATOL = 1e-9


def _box(centre: tuple[float, float, float], half: tuple[float, float, float],
         yaw: float) -> np.ndarray:
    """Points on the top and the four sides of a box standing on z = 0 (base frame, m)."""
    h = np.asarray(half)
    faces = []
    for axis in range(3):
        for sign in ((1.0,) if axis == 2 else (-1.0, 1.0)):
            others = [i for i in range(3) if i != axis]
            u, v = (np.arange(-h[i], h[i] + 1e-9, STEP) for i in others)
            grid = np.stack(np.meshgrid(u, v, indexing="ij"), -1).reshape(-1, 2)
            face = np.zeros((len(grid), 3))
            face[:, others] = grid
            face[:, axis] = sign * h[axis]
            faces.append(face)
    local = np.concatenate(faces)
    c, s = np.cos(yaw), np.sin(yaw)
    rotation = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return local @ rotation.T + np.array(centre) + [0.0, 0.0, h[2]]


def _cylinder(centre: tuple[float, float], radius: float, height: float) -> np.ndarray:
    """Points on the top and the side of an upright cylinder standing on z = 0, m."""
    angles = np.arange(0.0, 2 * np.pi, STEP / radius)
    rings = np.arange(0.0, height + 1e-9, STEP)
    side = np.stack([np.repeat(np.cos(angles)[None], len(rings), 0) * radius,
                     np.repeat(np.sin(angles)[None], len(rings), 0) * radius,
                     np.repeat(rings[:, None], len(angles), 1)], -1).reshape(-1, 3)
    r, a = np.meshgrid(np.arange(0.0, radius, STEP), angles, indexing="ij")
    top = np.stack([(r * np.cos(a)).ravel(), (r * np.sin(a)).ravel(),
                    np.full(r.size, height)], -1)
    return np.concatenate([side, top]) + [*centre, 0.0]


def _table() -> np.ndarray:
    x, y = np.meshgrid(np.arange(0.35, 0.65, 0.004), np.arange(-0.15, 0.25, 0.004))
    return np.stack([x.ravel(), y.ravel(), np.zeros(x.size)], -1)


def _cloud(points: np.ndarray) -> PointCloud:
    return PointCloud(points, np.zeros((len(points), 3), np.uint8),
                      np.zeros((len(points), 2), np.int64))


def _scenes() -> dict[str, tuple[PointCloud, PointCloud, dict[str, float]]]:
    """Named (target, scene, grasp_candidates keyword arguments); every point jittered."""
    rng = np.random.default_rng(2024)

    def jitter(points: np.ndarray) -> np.ndarray:
        return points + rng.normal(0.0, JITTER, points.shape)

    cube = jitter(_box((0.5, 0.05, 0.0), (0.02, 0.02, 0.02), 0.3))
    cylinder = jitter(_cylinder((0.48, 0.0), 0.025, 0.08))
    wall = jitter(_box((0.5, 0.1, 0.0), (0.06, 0.004, 0.05), 0.0))
    near_wall = jitter(_box((0.5, 0.072, 0.0), (0.02, 0.02, 0.02), 0.0))
    bar = jitter(_box((0.45, -0.05, 0.0), (0.015, 0.045, 0.015), 0.7))
    block = jitter(_box((0.45, 0.01, 0.0), (0.02, 0.02, 0.02), 0.2))
    table = jitter(_table())
    return {
        "cube": (_cloud(cube), _cloud(np.concatenate([table, cube])), {}),
        "cylinder": (_cloud(cylinder), _cloud(np.concatenate([table, cylinder])),
                     {"top_k": 8, "max_tilt_deg": 20.0}),
        "cube-by-a-wall": (_cloud(near_wall),
                           _cloud(np.concatenate([table, wall, near_wall])), {"top_k": 20}),
        "bar-by-a-block": (_cloud(bar), _cloud(np.concatenate([table, bar, block])),
                           {"n_samples": 300, "max_tilt_deg": 45.0}),
    }


# -- the per-candidate reference ------------------------------------------------------------

def _hypotheses_in_lists(prep: grasp_scene.GraspScene, rng: np.random.Generator,
                         n_samples: int, max_tilt: float
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The planner's hypotheses built one list entry at a time, drawing from ``rng`` in the
    planner's order."""
    axes, anchors, tilts = [], [], []
    for yaw in np.linspace(0.0, np.pi, 12, endpoint=False):
        axes.append(np.array([np.cos(yaw), np.sin(yaw), 0.0]))
    axes.append(np.array([*prep.axes[1], 0.0]))
    anchors += [prep.centre] * len(axes)
    tilts += [0.0] * len(axes)
    budget = max(n_samples - len(axes), 0)
    pair_axes, pair_points = grasping._antipodal_pairs(prep, rng, budget // 2)
    axes += list(pair_axes)
    anchors += list(pair_points)
    rest = budget - len(pair_axes)
    yaws = rng.uniform(0.0, np.pi, rest)
    offsets = rng.normal(0.0, 0.4, rest) * prep.extents[0]
    for yaw, offset in zip(yaws, offsets, strict=True):
        axes.append(np.array([np.cos(yaw), np.sin(yaw), 0.0]))
        anchors.append(prep.centre + offset * np.array([*prep.axes[0], 0.0]))
    extra = len(axes) - len(tilts)
    upright = rng.random(extra) < 0.6
    tilts += list(np.where(upright, 0.0, rng.uniform(-max_tilt, max_tilt, extra)))
    closing = np.array(axes)
    closing[:, 2] = 0.0
    closing /= np.linalg.norm(closing, axis=1, keepdims=True)
    return closing, np.array(tilts), np.array(anchors)


def _place_tcp_one_at_a_time(prep: grasp_scene.GraspScene, gripper: GripperGeometry,
                             rotations: np.ndarray, anchors: np.ndarray
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The planner's TCP placement, run for one hypothesis at a time."""
    rows = [_PLACE_TCP(prep, gripper, rotations[h:h + 1], anchors[h:h + 1])
            for h in range(len(anchors))]
    return tuple(np.concatenate(column) for column in zip(*rows, strict=True))


def _collision_free_one_at_a_time(prep: grasp_scene.GraspScene, gripper: GripperGeometry,
                                  rotations: np.ndarray, tcp: np.ndarray,
                                  opening: np.ndarray, bound: np.ndarray, enough: int,
                                  approach_distance: float, clearance_weight: float
                                  ) -> tuple[np.ndarray, np.ndarray]:
    """The planner's collision check, one grasp at a time, best bound first, stopping once
    ``enough`` free grasps score at least the next one's bound."""
    free = np.zeros(len(tcp), bool)
    clearance = np.zeros(len(tcp))
    found: list[float] = []
    solid = np.concatenate([prep.obstacles, prep.coarse_target])
    is_obstacle = np.arange(len(solid)) < len(prep.obstacles)
    for h in np.argsort(-bound):
        if len(found) >= enough and sorted(found)[-enough] >= bound[h]:
            break
        centres, halves = gripper.boxes(float(opening[h]))
        swept_c, swept_h = centres.copy(), halves.copy()
        swept_c[:, 2] -= approach_distance / 2.0
        swept_h[:, 2] += approach_distance / 2.0
        low = np.min(swept_c - swept_h, axis=0) - grasp_scene.FULL_CLEARANCE
        high = np.max(swept_c + swept_h, axis=0) + grasp_scene.FULL_CLEARANCE
        local = (solid - tcp[h]) @ rotations[h]
        near = np.all((local >= low) & (local <= high), axis=1)
        if np.any(points_in_boxes(local[near], swept_c, swept_h,
                                  grasp_scene.COLLISION_MARGIN)):
            continue
        fingers = gripper.n_finger_boxes
        samples = (centres[:fingers, None]
                   + grasp_scene.FINGER_SAMPLES * halves[:fingers, None]).reshape(-1, 3)
        if np.any(prep.ceiling.above(samples @ rotations[h].T + tcp[h])):
            continue
        free[h] = True
        obstacles = local[near & is_obstacle]
        clearance[h] = grasp_scene.FULL_CLEARANCE
        if len(obstacles):
            clearance[h] = min(float(np.min(distance_to_boxes(obstacles, centres, halves))),
                               grasp_scene.FULL_CLEARANCE)
        found.append(float(bound[h] - clearance_weight
                           * (1 - clearance[h] / grasp_scene.FULL_CLEARANCE)))
    return free, clearance


def _suppress_duplicates_in_a_loop(poses: np.ndarray, score: np.ndarray,
                                   top_k: int) -> list[int]:
    """Best grasps first, each skipped when within 1 cm and 15 degrees of one kept."""
    chosen: list[int] = []
    for i in np.argsort(-score):
        if len(chosen) >= top_k:
            break
        similar = False
        for j in chosen:
            close = np.linalg.norm(poses[i, :3, 3] - poses[j, :3, 3]) < 0.01
            angle_cos = (abs(poses[i, :3, 1] @ poses[j, :3, 1])
                         * (poses[i, :3, 2] @ poses[j, :3, 2]))
            similar = similar or bool(close and angle_cos > np.cos(np.deg2rad(15.0)))
        if not similar:
            chosen.append(int(i))
    return chosen


_PLACE_TCP = grasping._place_tcp


def _run(name: str) -> list[grasping.GraspCandidate]:
    target, scene, options = _scenes()[name]
    return grasp_candidates(target, scene, rng=np.random.default_rng(7), **options)


@pytest.mark.parametrize("name", list(_scenes()))
def test_candidates_match_the_per_candidate_implementation(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    vectorised = _run(name)
    monkeypatch.setattr(grasping, "_hypotheses", _hypotheses_in_lists)
    monkeypatch.setattr(grasping, "_place_tcp", _place_tcp_one_at_a_time)
    monkeypatch.setattr(grasping, "collision_free", _collision_free_one_at_a_time)
    monkeypatch.setattr(grasping, "_suppress_duplicates", _suppress_duplicates_in_a_loop)
    reference = _run(name)
    assert len(vectorised) > 0
    assert len(vectorised) == len(reference)
    for rank, (got, want) in enumerate(zip(vectorised, reference, strict=True)):
        np.testing.assert_allclose(got.pose, want.pose, rtol=0.0, atol=ATOL,
                                   err_msg=f"{name} rank {rank}")
        assert got.width == pytest.approx(want.width, abs=ATOL), f"{name} rank {rank}"
        assert got.score == pytest.approx(want.score, abs=ATOL), f"{name} rank {rank}"


def test_the_reference_is_not_the_planner_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a reference that ranks grasps differently gives other
    candidates."""
    vectorised = _run("cube-by-a-wall")
    monkeypatch.setattr(grasping, "_suppress_duplicates",
                        lambda poses, score, top_k: list(np.argsort(score)[:top_k]))
    worst_first = _run("cube-by-a-wall")
    assert not np.allclose(vectorised[0].pose, worst_first[0].pose, atol=1e-3)
