"""Grasp candidates stay what they were before the candidate checks were vectorised.

``data/grasp_candidates_golden.npz`` holds the candidates (poses, widths, scores, in rank
order) that the per-candidate implementation returned on the synthetic clouds below; the
vectorised one must return the same list. Regenerate only for an intended change of the
planner's answers: ``python tests/agents/perception/test_grasping_golden.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agentic_env.agents.perception import PointCloud, grasp_candidates

GOLDEN = Path(__file__).parent / "data" / "grasp_candidates_golden.npz"
#: Sampling step of the synthetic surfaces, m.
STEP = 0.003


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


def _cloud(points: np.ndarray) -> PointCloud:
    return PointCloud(points, np.zeros((len(points), 3), np.uint8),
                      np.zeros((len(points), 2), np.int64))


def _table() -> np.ndarray:
    x, y = np.meshgrid(np.arange(0.35, 0.65, 0.004), np.arange(-0.15, 0.25, 0.004))
    return np.stack([x.ravel(), y.ravel(), np.zeros(x.size)], -1)


def _scenes() -> dict[str, tuple[PointCloud, PointCloud, dict[str, float]]]:
    """Named (target, scene, grasp_candidates keyword arguments)."""
    cube = _box((0.5, 0.05, 0.0), (0.02, 0.02, 0.02), 0.3)
    cylinder = _cylinder((0.48, 0.0), 0.025, 0.08)
    wall = _box((0.5, 0.1, 0.0), (0.06, 0.004, 0.05), 0.0)
    near_wall = _box((0.5, 0.072, 0.0), (0.02, 0.02, 0.02), 0.0)
    bar = _box((0.45, -0.05, 0.0), (0.015, 0.045, 0.015), 0.7)
    block = _box((0.45, 0.01, 0.0), (0.02, 0.02, 0.02), 0.2)
    table = _table()
    return {
        "cube": (_cloud(cube), _cloud(np.concatenate([table, cube])), {}),
        "cylinder": (_cloud(cylinder), _cloud(np.concatenate([table, cylinder])),
                     {"top_k": 8, "max_tilt_deg": 20.0}),
        "cube-by-a-wall": (_cloud(near_wall),
                           _cloud(np.concatenate([table, wall, near_wall])), {"top_k": 20}),
        "bar-by-a-block": (_cloud(bar), _cloud(np.concatenate([table, bar, block])),
                           {"n_samples": 300, "max_tilt_deg": 45.0}),
    }


def _candidates(name: str) -> dict[str, np.ndarray]:
    target, scene, options = _scenes()[name]
    found = grasp_candidates(target, scene, rng=np.random.default_rng(7), **options)
    return {f"{name}/pose": np.array([c.pose for c in found]).reshape(-1, 4, 4),
            f"{name}/width": np.array([c.width for c in found]),
            f"{name}/score": np.array([c.score for c in found])}


@pytest.mark.parametrize("name", list(_scenes()))
def test_candidates_match_the_per_candidate_implementation(name: str) -> None:
    golden = np.load(GOLDEN)
    got = _candidates(name)
    assert len(got[f"{name}/width"]) > 0
    for key, value in got.items():
        assert value.shape == golden[key].shape, key
        np.testing.assert_allclose(value, golden[key], rtol=0.0, atol=1e-12, err_msg=key)


if __name__ == "__main__":
    GOLDEN.parent.mkdir(exist_ok=True)
    np.savez_compressed(GOLDEN, **{k: v for name in _scenes()
                                   for k, v in _candidates(name).items()})
    print(f"wrote {GOLDEN}")
