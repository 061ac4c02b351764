"""The shoulder camera's ToF effects computed once per episode on the static scene and again
only around what moves (:mod:`agentic_env.sim.realism.depth_tof_static`) give the frame the
whole-image model gives; the stereo occlusion (a running minimum along each row) gives the
full scan's mask.

References are computed in the same process. The whole-image fields themselves differ run to
run in the last bit of the incidence's float32 (OpenCV's SIMD and scalar paths follow the
arrays' memory alignment), so float fields are compared to a relative 1e-5 and masks
exactly.
"""

from __future__ import annotations

import cv2
import mujoco
import numpy as np
import pytest

from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.sim.realism.depth_stereo import StillStereoDepth
from agentic_env.sim.realism.depth_tof import FIELD_REACH, TofFields
from agentic_env.sim.realism.depth_tof_static import TILE, StaticTofDepth, changed_windows
from agentic_env.sim.realism.sensors import make_sensor
from agentic_env.sim.realism.surfaces import SurfaceMap, SurfaceSample

W, H = 320, 240
_MODEL = """
<mujoco>
  <worldbody>
    <geom name="table" type="box" size="1 1 0.01" rgba="0.8 0.7 0.6 1"/>
    <body name="cube" pos="0.3 0 0.2">
      <freejoint/>
      <geom type="box" size="0.02 0.02 0.02" rgba="0.1 0.1 0.1 1"/>
    </body>
  </worldbody>
</mujoco>
"""
_FIELDS = ("base", "sigma", "invalid", "edge", "nearest", "farthest")


def _static_scene() -> tuple[SurfaceMap, np.ndarray]:
    """A world-fixed view of a table sloping away with a bin's wall on it and a patch of sky,
    and the lit render's luma (a checker of two levels)."""
    model = mujoco.MjModel.from_xml_string(_MODEL)
    rows = np.arange(H, dtype=np.float32)[:, None]
    depth = np.repeat(1.2 + 0.004 * (H - rows), W, axis=1).astype(np.float32)
    depth[60:120, 200:260] -= 0.15  # a wall standing on the table (a concave corner)
    depth[:20, :] = 0.0  # no static geom: the sky
    geoms = np.where(depth > 0, model.geom("table").id, -1)
    yy, xx = np.mgrid[0:H, 0:W]
    grey = np.where((yy // 8 + xx // 8) % 2 == 0, 90, 170).astype(np.uint8)
    return SurfaceMap.of(model, geoms, depth), grey


def _assert_same_fields(got: TofFields, expected: TofFields) -> None:
    for name in _FIELDS:
        a, b = getattr(got, name), getattr(expected, name)
        assert a.shape == b.shape and a.dtype == b.dtype, name
        if a.dtype == bool:
            np.testing.assert_array_equal(a, b, err_msg=name)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=0.0, err_msg=name)


def _whole_image(static: StaticTofDepth, depth: np.ndarray, grey: np.ndarray) -> TofFields:
    return static.model.fields(depth, grey, static.surfaces.albedo(depth))


@pytest.mark.parametrize("setting", ["lab", "outdoor"])
def test_the_static_scenes_fields_are_the_whole_image_ones_when_nothing_moved(
        setting: str) -> None:
    surfaces, grey = _static_scene()
    unit = make_sensor(azure_kinect_color(W, H), setting).with_unit(np.random.default_rng(2))
    static = StaticTofDepth(unit.depth_model, surfaces)
    first = static.fields(surfaces.static_depth, grey)
    _assert_same_fields(first, _whole_image(static, surfaces.static_depth, grey))
    assert static.fields(surfaces.static_depth.copy(), grey.copy()) is first  # reused
    assert np.any(first.edge) and np.any(first.invalid) and np.any(first.base > 0)


@pytest.mark.parametrize("setting", ["lab", "outdoor"])
def test_the_fields_are_recomputed_where_an_object_moves(setting: str) -> None:
    surfaces, grey = _static_scene()
    static = StaticTofDepth(make_sensor(azure_kinect_color(W, H), setting).depth_model,
                            surfaces)
    static.fields(surfaces.static_depth, grey)
    for top, left in ((100, 40), (0, 290), (215, 150)):  # inside, at a corner, at the bottom
        depth = surfaces.static_depth.copy()
        depth[top:top + 25, left:left + 30] = 0.8  # a dark cube nearer than the table
        frame = static.fields(depth, grey)
        expected = _whole_image(static, depth, grey)
        _assert_same_fields(frame, expected)
        window = (slice(top, top + 25), slice(left, left + 30))
        assert np.all(frame.base[window] < 0.9)  # the cube's, not the table's
    still = static.fields(surfaces.static_depth, grey)  # the cube gone: the static fields
    _assert_same_fields(still, _whole_image(static, surfaces.static_depth, grey))


@pytest.mark.parametrize("setting", ["lab", "outdoor"])
def test_the_previous_frame_is_a_baseline_while_an_object_moves_and_rests(
        setting: str) -> None:
    """An object at rest beside one that moves a few pixels a frame: each frame's fields,
    built from the previous frame's (updated in place) or the static scene's, are the
    whole-image ones; a repeated frame gives the previous one's own fields."""
    surfaces, grey = _static_scene()
    static = StaticTofDepth(make_sensor(azure_kinect_color(W, H), setting).depth_model,
                            surfaces)
    static.fields(surfaces.static_depth, grey)
    resting = surfaces.static_depth.copy()
    resting[30:130, 20:140] = 0.9  # a large box at rest: far from the static scene
    previous = None
    for step in range(6):
        depth = resting.copy()
        depth[150 + 4 * step:175 + 4 * step, 180:210] = 0.8  # a cube sliding down
        frame = static.fields(depth, grey)
        _assert_same_fields(frame, _whole_image(static, depth, grey))
        if step:  # the box at rest left alone: the previous frame's, updated in place
            assert frame is previous
        previous = frame
    assert static.fields(depth.copy(), grey) is frame  # nothing moved: reused
    still = static.fields(surfaces.static_depth, grey)  # both gone: the static scene's
    _assert_same_fields(still, _whole_image(static, surfaces.static_depth, grey))


def test_outdoors_a_moving_shadow_alone_recomputes_the_fields() -> None:
    """Outdoors the luma (ambient infrared) enters the noise: a shadow moving over the
    static scene changes the fields with the depth unchanged."""
    surfaces, grey = _static_scene()
    static = StaticTofDepth(make_sensor(azure_kinect_color(W, H), "outdoor").depth_model,
                            surfaces)
    lit = static.fields(surfaces.static_depth, grey)
    shaded = grey.copy()
    shaded[120:200, 40:160] //= 4
    frame = static.fields(surfaces.static_depth, shaded)
    _assert_same_fields(frame, _whole_image(static, surfaces.static_depth, shaded))
    assert not np.allclose(frame.sigma[130:190, 50:150], lit.sigma[130:190, 50:150])


@pytest.mark.parametrize("seed", [0, 1])
def test_the_static_model_gives_the_whole_image_models_frame(seed: int) -> None:
    surfaces, grey = _static_scene()
    unit = make_sensor(azure_kinect_color(W, H), "lab").with_unit(np.random.default_rng(seed))
    static = StaticTofDepth(unit.depth_model, surfaces)
    depth = surfaces.static_depth.copy()
    depth[150:190, 100:140] = 0.9
    noise = np.random.default_rng(seed).standard_normal((H, W), np.float32)
    for _ in range(2):  # the first frame builds the static fields, the second reuses them
        fast_rng, plain_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        fast = static.apply(depth, grey, fast_rng, noise, SurfaceSample())
        plain = unit.depth_model.apply(depth, grey, plain_rng, noise,
                                       SurfaceSample(albedo=surfaces.albedo(depth)))
        assert fast.dtype == np.float32
        # the incidence's last bit may move a value across a millimetre's rounding
        assert np.mean(fast != plain) < 1e-3
        assert fast_rng.integers(1 << 62) == plain_rng.integers(1 << 62)  # same draws


def test_a_moving_object_gives_the_whole_image_models_frames_step_by_step() -> None:
    """A cube sliding and jumping over the static scene (the baselines taken in turn, the
    own arrays restored from the static scene where they differed, the mixed pixels' index
    kept only while the fields are): every frame, noise and draws are the whole-image
    model's."""
    surfaces, grey = _static_scene()
    unit = make_sensor(azure_kinect_color(W, H), "lab").with_unit(np.random.default_rng(3))
    static = StaticTofDepth(unit.depth_model, surfaces)
    noise = np.random.default_rng(3).standard_normal((H, W), np.float32)
    for step, (top, left) in enumerate(((150, 40), (154, 44), (30, 250), (34, 250), (150, 40),
                                        (150, 40), (200, 120))):
        depth = surfaces.static_depth.copy()
        depth[top:top + 30, left:left + 40] = 0.85
        fast_rng, plain_rng = np.random.default_rng(step), np.random.default_rng(step)
        fast = static.apply(depth, grey, fast_rng, noise, SurfaceSample())
        plain = unit.depth_model.apply(depth, grey, plain_rng, noise,
                                       SurfaceSample(albedo=surfaces.albedo(depth)))
        assert np.mean(fast != plain) < 1e-3, step
        assert fast_rng.integers(1 << 62) == plain_rng.integers(1 << 62), step


def test_changed_windows_cover_every_pixel_within_reach_of_a_change() -> None:
    changed = np.zeros((H, W), bool)
    assert changed_windows(changed) == []
    rng = np.random.default_rng(4)
    for _ in range(5):
        changed[:] = False
        for row, col in rng.integers(0, (H, W), (3, 2)):
            changed[row, col] = True
        windows = changed_windows(changed)
        covered = np.zeros((H, W), bool)
        for (rows, cols), (in_rows, in_cols) in windows:
            covered[rows, cols] = True
            assert in_rows.start == max(rows.start - FIELD_REACH, 0)
            assert in_cols.stop == min(cols.stop + FIELD_REACH, W)
            assert all(s % 2 == 0 for s in (in_rows.start, in_rows.stop, in_cols.start,
                                            in_cols.stop))
        near = cv2.dilate(changed.view(np.uint8),
                          np.ones((2 * FIELD_REACH + 1,) * 2, np.uint8)).astype(bool)
        assert np.all(covered[near])
        assert covered.mean() < 3 * 9 * (3 * TILE) ** 2 / (H * W)  # not the whole image


def test_the_world_reuses_the_static_scene_for_the_shoulder_camera_only(make_sim_env) -> None:
    """In the env: the shoulder camera's frame, with its static scene reused, is the one the
    whole-image model gives (same noise draws), while the arm moves."""
    env = make_sim_env(task="stacking", realism="realistic")
    env.reset(seed=1)
    world = env.world
    assert list(world.static_depth) == ["shoulder"]
    env.action_space.seed(0)
    for _ in range(2):
        env.step(env.action_space.sample())
        state = env._np_random_noise.bit_generator.state
        cached = env.observe()
        env._np_random_noise.bit_generator.state = state
        kept, world.static_depth = world.static_depth, {}
        plain = env.observe()
        world.static_depth = kept
        assert np.mean(cached["shoulder_depth"] != plain["shoulder_depth"]) < 1e-3
        np.testing.assert_array_equal(cached["shoulder_rgb"], plain["shoulder_rgb"])
        np.testing.assert_array_equal(cached["wrist_depth"], plain["wrist_depth"])


def test_stereo_occlusion_of_near_objects_matches_the_full_scan() -> None:
    """Disparities up to the search's range at 640 px: the minimum over the next pixels within
    the frame's disparity span (a sparse table) gives the full row scan's mask."""
    config = realsense_d405(640, 480)
    model = make_sensor(config, "lab").depth_model
    rng = np.random.default_rng(0)
    depth = np.full((480, 640), 0.4, np.float32)
    for _ in range(12):
        top, left = rng.integers(0, 440), rng.integers(0, 600)
        depth[top:top + 40, left:left + rng.integers(5, 40)] = rng.uniform(0.06, 0.3)
    depth[rng.random((480, 640)) < 0.01] = 0.0
    valid = depth > 0
    disparity = np.where(valid, np.float32(model.focal * model.params["baseline"])
                         / np.where(valid, depth, 1), 0).astype(np.float32)
    right = np.arange(640, dtype=np.float32) - disparity
    beyond = np.full_like(right, np.inf)
    beyond[:, :-1] = np.minimum.accumulate(right[:, ::-1], axis=1)[:, ::-1][:, 1:]
    expected = valid & ((right > beyond + np.float32(0.5)) | (right < 0))
    assert disparity.max() > 100 and expected.mean() > 0.01
    np.testing.assert_array_equal(model._occluded(depth, _far(depth, valid), valid), expected)


def test_stereo_occlusion_is_the_pixel_by_pixel_hiding_test() -> None:
    """Each pixel's mask is the literal test: a valid pixel u is hidden when it lands left of
    the right image, or when a pixel v > u of its row lands left of it there by more than
    half a pixel (v - d[v] < u - d[u] - 0.5), with the model's own float32 disparities."""
    model = make_sensor(realsense_d405(W, H), "lab").depth_model
    rng = np.random.default_rng(7)
    depth = np.full((24, 160), 0.35, np.float32)
    for _ in range(10):
        top, left = rng.integers(0, 20), rng.integers(0, 150)
        depth[top:top + 6, left:left + rng.integers(2, 12)] = rng.uniform(0.04, 0.3)
    depth[rng.random(depth.shape) < 0.05] = 0.0
    valid = depth > 0
    with np.errstate(divide="ignore"):
        disparity = np.where(valid, np.float32(model.focal * model.params["baseline"]) / depth,
                             np.float32(0.0)).astype(np.float32)
    right = np.arange(depth.shape[1], dtype=np.float32) - disparity
    expected = np.zeros(depth.shape, bool)
    for row, col in zip(*np.nonzero(valid), strict=True):
        later = right[row, col + 1:] + np.float32(0.5)
        expected[row, col] = bool(right[row, col] < 0 or np.any(right[row, col] > later))
    assert 0.01 < expected.mean() < 0.5
    np.testing.assert_array_equal(model._occluded(depth, _far(depth, valid), valid), expected)


def _far(depth: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """``depth`` with +inf where there is no return, as the fattening gives it."""
    return np.where(valid, depth, np.float32(np.inf))


def test_a_still_wrist_view_reuses_its_stereo_fields_and_patches(make_sim_env) -> None:
    """In the env: observing again without a step (a still arm) reuses the wrist camera's
    patches and stereo fields; the frame is the one recomputing both gives (same draws)."""
    env = make_sim_env(task="stacking", realism="realistic")
    env.reset(seed=2)
    world = env.world
    env.action_space.seed(1)
    env.step(env.action_space.sample())
    still = world.still_depth["wrist"]
    first = still._last
    state = env._np_random_noise.bit_generator.state
    cached = env.observe()  # the step's own view again
    assert still._last is first and first is not None  # reused
    env._np_random_noise.bit_generator.state = state
    world.still_depth, world._patch_views = {}, {}
    plain = env.observe()
    np.testing.assert_array_equal(cached["wrist_depth"], plain["wrist_depth"])
    np.testing.assert_array_equal(cached["wrist_rgb"], plain["wrist_rgb"])
    assert np.mean(cached["shoulder_depth"] != plain["shoulder_depth"]) < 1e-3


def test_the_still_stereo_model_recomputes_when_the_view_changes() -> None:
    model = make_sensor(realsense_d405(W, H), "lab").depth_model
    still = StillStereoDepth(model)
    rng = np.random.default_rng(3)
    depth = np.full((H, W), 0.3, np.float32)
    grey = rng.integers(0, 256, (H, W), dtype=np.uint8)
    grey[:, :100] = 128  # textureless on the left
    patch = rng.random((H, W), dtype=np.float32)
    noise = rng.standard_normal((H, W), np.float32)
    for change in (None, "depth", "grey", "patch", None):
        if change == "depth":
            depth[40:80, 150:220] = 0.12
        elif change == "grey":
            grey[100:, 200:] = 40
        elif change == "patch":
            patch = rng.random((H, W), dtype=np.float32)
        sample = SurfaceSample(patch=patch)
        got = still.apply(depth.copy(), grey.copy(), np.random.default_rng(0), noise, sample)
        expected = model.apply(depth, grey, np.random.default_rng(0), noise, sample)
        np.testing.assert_array_equal(got, expected)
