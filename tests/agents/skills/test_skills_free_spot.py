"""The free-spot search on a table seen through real depth: noise, isolated outliers and a
unit's systematic depth error do not hide a free spot that the exact table shows, a noisier
view widens the margins instead of filling the table with obstacles, a real obstacle still
blocks, and a column above a dim patch counts as seen only where returns around it saw past.
One test runs the search in the realistic world; it reads privileged state (the objects'
boxes) only to check that the spot it finds is free."""

from __future__ import annotations

import numpy as np
import pytest

from agentic_env.agents.perception import PointCloud
from agentic_env.agents.skills import spots
from agentic_env.agents.skills.holding import HeldObject
from agentic_env.agents.skills.scene import SceneView
from agentic_env.contract.actions import pose_to_vector, top_down_pose
from agentic_env.contract.spaces import Workspace
from agentic_env.envs.sim_env import SimEnv
from agentic_env.sim.state import body_box

HELD = HeldObject("cube", 0.03, 0.03)
TCP = pose_to_vector(top_down_pose(np.array([0.3, 0.0, 0.4])))


def _cloud(points: np.ndarray) -> PointCloud:
    return PointCloud(points, np.zeros((len(points), 3), np.uint8),
                      np.zeros((len(points), 2), np.int64))


def _table_with_a_cube() -> np.ndarray:
    """The exact table top (z = 0) on a 5 mm grid over the workspace's middle, and a 4 cm
    cube's top and sides standing at (0.5, 0): the spot nearest the middle is taken."""
    xs, ys = np.meshgrid(np.arange(0.2, 0.85, 0.005), np.arange(-0.55, 0.55, 0.005))
    table = np.column_stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)])
    table = table[np.any(np.abs(table[:, :2] - (0.5, 0.0)) > 0.02, axis=1)]
    side = np.arange(-0.02, 0.0201, 0.004)
    top = [(0.5 + a, b, 0.04) for a in side for b in side]
    sides = [(0.5 + a, s * 0.02, h) for a in side for s in (-1, 1) for h in side + 0.02]
    return np.vstack([table, top, sides])


def _spot(points: np.ndarray, height_std: np.ndarray | None = None) -> np.ndarray | None:
    found = spots.table_spot(_cloud(points), HELD, TCP, Workspace(),
                                 height_std=height_std)
    return None if found is None else found[0][:2, 3]


def test_outliers_and_a_depth_bias_leave_the_free_spot_free() -> None:
    exact = _table_with_a_cube()
    ideal = _spot(exact)
    assert ideal is not None and np.linalg.norm(ideal - (0.5, 0.0)) > 0.05
    rng = np.random.default_rng(0)
    noisy = exact.copy()
    noisy[:, 2] += 0.003 + 0.001 * rng.standard_normal(len(noisy))  # a unit's bias + noise
    # lone outliers 1-10 cm above the table (flying pixels), one at the ideal spot itself
    salt = np.column_stack([rng.uniform(0.3, 0.75, 40), rng.uniform(-0.45, 0.45, 40),
                            rng.uniform(0.01, 0.1, 40)])
    salt[0, :2] = ideal
    np.testing.assert_allclose(_spot(np.vstack([noisy, salt])), ideal)


def test_a_noisier_view_widens_the_margins() -> None:
    """A view whose heights err by 4 mm (a far or a stereo view): with margins four times
    that the ideal spot is found; the fixed margins alone see the noise as obstacles."""
    exact = _table_with_a_cube()
    rng = np.random.default_rng(1)
    noisy = exact.copy()
    noisy[:, 2] += 0.004 * rng.standard_normal(len(noisy))
    std = np.full(len(noisy), 0.004)
    np.testing.assert_allclose(_spot(noisy, std), _spot(exact))
    assert _spot(noisy) is None  # with 6 mm margins the noise stands everywhere


def test_a_thin_object_on_the_spot_still_blocks_it() -> None:
    exact = _table_with_a_cube()
    ideal = _spot(exact)
    # a screwdriver's shaft, 8 mm thick, lying across the spot: a few points a cm apart
    shaft = np.column_stack([ideal[0] + np.arange(-0.03, 0.031, 0.01),
                             np.full(7, ideal[1]), np.full(7, 0.008)])
    moved = _spot(np.vstack([exact, shaft]))
    assert moved is not None and np.min(np.linalg.norm(shaft[:, :2] - moved, axis=1)) > 0.06


@pytest.mark.parametrize("seed", range(4))
def test_the_realistic_world_shows_a_free_spot(make_sim_env, seed: int) -> None:
    """With the Azure Kinect's noise, mixed pixels, multipath and unit bias, the search as
    :func:`~agentic_env.agents.skills.place_at` runs it finds a spot, clear of every
    object."""
    env: SimEnv = make_sim_env(task="sorting", realism="realistic")
    obs, info = env.reset(seed=seed)
    view = SceneView(obs)
    scene = view.obstacles()
    found = spots.table_spot(scene, HELD, obs["tcp_pose"], env.primitive_config.workspace,
                                 view.seen_free, lambda pose: view.arm_clear(pose, HELD.radius),
                                 view.height_noise(scene.points))
    assert found is not None
    spot = found[0][:2, 3]
    for thing in info["trial"]["objects"]:
        box = body_box(env.scene_state, thing["name"])
        gap = np.maximum(0.0, np.maximum(box.low[:2] - spot, spot - box.high[:2]))
        assert np.linalg.norm(gap) > HELD.radius / 2, thing["name"]


def test_a_hole_is_seen_through_only_where_returns_around_it_see_past() -> None:
    """A far wall 1 m ahead with a 12 x 12 pixel hole (a dim patch): a point 0.5 m ahead
    counts as seen through at the hole's edge, where the wall's returns 2 pixels away saw
    past it, and not in its middle."""
    intrinsics = np.array([[500.0, 0.0, 320.0], [0.0, 500.0, 240.0], [0.0, 0.0, 1.0]])
    depth = np.full((480, 640), 1.0, np.float32)
    depth[200:212, 300:312] = 0.0
    view = SceneView({"shoulder_depth": depth, "shoulder_intrinsics": intrinsics,
                      "shoulder_extrinsics": np.eye(4)})

    def ahead(u: float, v: float) -> np.ndarray:  # the point 0.5 m along pixel (u, v)
        return 0.5 * np.array([(u - 320.0) / 500.0, (v - 240.0) / 500.0, 1.0])

    free = view.seen_free(np.array([ahead(300.5, 205.5), ahead(305.5, 205.5),
                                    ahead(100.5, 100.5)]))
    np.testing.assert_array_equal(free, [True, False, True])
    assert view.unseen(ahead(300.5, 205.5)[None])[0]  # a hole itself stays unseen
