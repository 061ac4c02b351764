"""What the realistic world knows of the surfaces a camera sees: albedo from the materials (not
from the lit render) and surface patches fixed in the world."""

from __future__ import annotations

import cv2
import mujoco
import numpy as np
import pytest

from agentic_env.geometry.camera import realsense_d405
from agentic_env.sim.realism.surfaces import (
    PATCH_SIZE,
    SurfaceMap,
    _grid_offset,
    geom_albedo,
    surface_patches,
)

_MODEL = """
<mujoco>
  <asset>
    <material name="grey" rgba="0.2 0.4 0.6 1"/>
  </asset>
  <worldbody>
    <geom name="plain" type="box" size="1 1 0.01" rgba="0.9 0.6 0.3 1"/>
    <geom name="painted" type="box" size="0.1 0.1 0.1" pos="0 0 0.5" material="grey"/>
    <body name="cube" pos="0.3 0 0.2">
      <freejoint/>
      <geom type="box" size="0.02 0.02 0.02" rgba="0.1 0.1 0.1 1"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_albedo_is_the_mean_linear_material_colour() -> None:
    model = mujoco.MjModel.from_xml_string(_MODEL)
    albedo = geom_albedo(model)
    assert albedo[model.geom("plain").id] == pytest.approx(0.6)
    assert albedo[model.geom("painted").id] == pytest.approx(0.4)  # the material's, not rgba


def test_moving_bodies_take_their_albedo_where_they_cover_the_static_scene() -> None:
    model = mujoco.MjModel.from_xml_string(_MODEL)
    plain = model.geom("plain").id
    geoms = np.full((4, 6), plain)
    static_depth = np.full((4, 6), 1.0, np.float32)
    surfaces = SurfaceMap.of(model, geoms, static_depth)
    assert surfaces.moving_albedo == pytest.approx(0.1)  # the free cube
    depth = static_depth.copy()
    depth[1:3, 2:4] = 0.8  # the cube, nearer than the table behind it
    albedo = surfaces.albedo(depth)
    assert np.all(albedo[1:3, 2:4] == pytest.approx(0.1))
    assert albedo[0, 0] == pytest.approx(0.6)


def test_the_albedo_of_the_static_scene_ignores_its_lighting(make_sim_env) -> None:
    env = make_sim_env(task="sorting", realism="realistic", setting="outdoor")
    env.reset(seed=4)
    before = env.world.surfaces["shoulder"].static_albedo.copy()
    rgb_before = env.observe()["shoulder_rgb"]
    env.model.light_diffuse[:] *= 0.2  # dusk: the render darkens, the materials do not
    env.world.see_surfaces(env.model, env.data, [env._camera_renderer(c) for c in env.cameras])
    assert env.observe()["shoulder_rgb"].mean() < 0.8 * rgb_before.mean()
    np.testing.assert_array_equal(env.world.surfaces["shoulder"].static_albedo, before)
    assert "wrist" not in env.world.surfaces  # a moving camera has no static scene


def test_surface_patches_stay_with_the_surface_when_the_camera_moves() -> None:
    config = realsense_d405(160, 120)
    depth = np.full((120, 160), 0.3, np.float32)
    pose = np.eye(4)
    moved = np.eye(4)
    moved[0, 3] = 0.007  # the camera slides 7 mm along its x axis over the plane
    first = surface_patches(depth, config.intrinsics, pose, seed=3)
    second = surface_patches(depth, config.intrinsics, moved, seed=3)
    k = config.intrinsics
    shift = 0.007 / 0.3 * k[0, 0]  # pixels the plane moves in the image
    # a point seen at column u in the first view and about u - shift after: its patch value
    # is its block's sample's, the same wherever both samples fall in one cell of the grid
    # (shifted by the seed's fraction of a cell)
    offset = _grid_offset(3)[0]

    def cell(col: int, camera_x: float) -> int:
        sample = 4 * (col // 4) + 2  # the block's sample column
        return int(np.floor(((sample + 0.5 - k[0, 2]) / k[0, 0] * 0.3 + camera_x)
                            / PATCH_SIZE + offset))

    checked = 0
    for row in (20, 60, 100):
        for col in range(10, 150, 7):
            moved_col = int(round(col - shift))
            if cell(col, 0.0) == cell(moved_col, 0.007):
                assert first[row, col] == second[row, moved_col]
                checked += 1
    assert checked > 30
    assert 0.2 < np.mean(first < 0.5) < 0.8  # cells differ
    other = surface_patches(depth, config.intrinsics, pose, seed=4)
    assert not np.array_equal(first, other)  # another episode, other patches


def test_a_surface_at_a_round_height_gets_whole_patches() -> None:
    """The table top lies at z = 0 of the base frame, a face of an unshifted grid of cubes,
    where float rounding alone would pick each sample's cube (a speckle of the two cubes'
    values): with the grid shifted by the seed's fraction of a cube, a block of the plane
    seen obliquely from above shows whole 2 cm patches, each one value."""
    config = realsense_d405(160, 120)
    k = config.intrinsics
    pose = np.eye(4)
    pose[:3, :3] = (cv2.Rodrigues(np.array([0.0, 0.0, 0.7]))[0]
                    @ cv2.Rodrigues(np.array([2.6, 0.0, 0.0]))[0])  # looking down, tilted
    pose[:3, 3] = (0.0123, 0.0377, 0.3)  # 30 cm above the table top at z = 0
    rows, cols = np.mgrid[0:120, 0:160]
    rays = np.stack([(cols + 0.5 - k[0, 2]) / k[0, 0], (rows + 0.5 - k[1, 2]) / k[1, 1],
                     np.ones((120, 160))], axis=-1)
    down = rays @ pose[2, :3]
    assert np.all(down < 0)
    depth = (-0.3 / down).astype(np.float32)  # each ray meets z = 0
    for seed in (3, 4, 5):
        patch = surface_patches(depth, k, pose, seed)
        points = (rays * depth[..., None]) @ pose[:3, :3].T + pose[:3, 3]
        cells = np.floor(points[..., :2] / PATCH_SIZE + _grid_offset(seed)[:2])
        # one value per cell (x, y) of the plane: no cell holds two
        keys = cells[..., 0] * 1e6 + cells[..., 1]
        interior = np.zeros((120, 160), bool)
        interior[2::4, 2::4] = True  # the samples themselves (their blocks copy them)
        pairs = np.unique(np.stack([keys[interior], patch[interior]]), axis=1)
        assert pairs.shape[1] == len(np.unique(keys[interior]))
