"""Camera sensor models against their cited numbers, on synthetic frames (issue 34, item 6)."""

import cv2
import numpy as np
import pytest

from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import CameraConfig, azure_kinect_color, realsense_d405
from agentic_env.geometry.distortion import outside_field
from agentic_env.sim.realism.rgb import srgb_to_linear
from agentic_env.sim.realism.sensors import make_sensor, sensor_params
from agentic_env.sim.realism.surfaces import SurfaceSample

W, H = 160, 120
KINECT = sensor_params("kinect.depth")
D405 = sensor_params("d405.depth")


def _textured(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (H, W, 3), dtype=np.uint8)


def _plane(z: float) -> np.ndarray:
    return np.full((H, W), z, np.float32)


def _spread(depth: np.ndarray, region: tuple[slice, slice]) -> float:
    values = depth[region]
    values = values[values > 0]
    assert values.size > 0.9 * depth[region].size
    return float(values.std())


def _albedo(value: float) -> SurfaceSample:
    return SurfaceSample(albedo=np.full((H, W), value, np.float32))


def test_kinect_plane_spread_follows_the_datasheet_bound_scaled_by_range() -> None:
    sensor = make_sensor(azure_kinect_color(W, H), "lab")
    grey = np.full((H, W, 3), 60, np.uint8)
    reflectivity = 0.05
    centre = (slice(20, 100), slice(30, 130))
    spreads = []
    for z in (1.0, 2.0):
        _, depth = sensor.apply(grey, _plane(z), np.random.default_rng(3), None,
                                _albedo(reflectivity))
        sigma = (KINECT["sigma_bound"] * (z / KINECT["range_max"]) ** 2
                 * KINECT["reflectivity_min"] / reflectivity)
        expected = np.hypot(sigma, KINECT["depth_unit"] / np.sqrt(12))  # + mm quantisation
        spreads.append(_spread(depth, centre))
        assert spreads[-1] == pytest.approx(expected, rel=0.1)
        assert spreads[-1] <= KINECT["sigma_bound"]
    assert spreads[1] / spreads[0] == pytest.approx(4.0, rel=0.15)  # z^2


def test_kinect_invalidates_a_black_object_but_not_a_white_one() -> None:
    sensor = make_sensor(azure_kinect_color(W, H), "lab")
    rgb = np.full((H, W, 3), 128, np.uint8)
    albedo = _albedo(1.0)
    albedo.albedo[40:80, 60:100] = 0.0  # a black material, however it is lit
    _, depth = sensor.apply(rgb, _plane(1.5), np.random.default_rng(0), None, albedo)
    assert np.all(depth[45:75, 65:95] == 0)
    white = np.ones((H, W), bool)
    white[36:84, 56:104] = False
    white[:4], white[-4:], white[:, :4], white[:, -4:] = False, False, False, False
    assert np.mean(depth[white] > 0) > 0.99


@pytest.mark.parametrize("setting", ["lab", "outdoor"])
def test_kinect_return_ignores_visible_shadows_indoors(setting: str) -> None:
    """A shadow darkens the lit render, not the camera's own infrared return: indoors a
    shadowed and a lit surface of one material read alike; outdoors the sunlit one (more
    ambient infrared) is the noisier."""
    sensor = make_sensor(azure_kinect_color(W, H), setting)
    rgb = np.full((H, W, 3), 200, np.uint8)
    rgb[:, W // 2:] = 20  # the right half in shadow
    _, depth = sensor.apply(rgb, _plane(2.0), np.random.default_rng(1), None, _albedo(0.3))
    lit = _spread(depth, (slice(20, 100), slice(10, 70)))
    shadow = _spread(depth, (slice(20, 100), slice(90, 150)))
    if setting == "lab":
        assert shadow == pytest.approx(lit, rel=0.15)
    else:
        assert lit > 1.5 * shadow


def test_kinect_edges_are_mostly_invalid_with_a_few_mixed_pixels() -> None:
    sensor = make_sensor(azure_kinect_color(320, 240), "lab")
    rgb = np.full((240, 320, 3), 255, np.uint8)
    depth = np.full((240, 320), 2.0, np.float32)
    depth[:, 160:] = 1.0
    _, out = sensor.apply(rgb, depth, np.random.default_rng(0))
    band = out[20:220, 159:161]  # the two pixels either side of the jump
    mixed = band[(band > 1.05) & (band < 1.95)]
    assert np.mean(band == 0) > 1 - 2 * KINECT["flying_keep"]
    assert mixed.size > 0
    assert np.all(out[20:220, 100:150] > 0) and np.all(out[20:220, 170:220] > 0)


def test_kinect_multipath_biases_a_concave_corner_outwards() -> None:
    sensor = make_sensor(azure_kinect_color(W, H), "lab")
    rgb = np.full((H, W, 3), 255, np.uint8)
    cols = np.arange(W, dtype=np.float32)
    # a V groove seen from its open side: the centre column is the deepest (concave)
    depth = np.repeat(1.5 - 0.008 * np.abs(cols - W // 2)[None, :], H, axis=0)
    _, out = sensor.apply(rgb, depth.astype(np.float32), np.random.default_rng(0))
    error = (out - depth)[20:100]
    assert 0.002 < error[:, W // 2].mean() <= KINECT["multipath_max"] + 0.001
    assert abs(error[:, 30:60].mean()) < 0.0005  # flat flanks: no bias


def test_kinect_unit_bias_stays_within_the_systematic_bound() -> None:
    base = make_sensor(azure_kinect_color(W, H), "lab")
    grey = np.full((H, W, 3), 255, np.uint8)
    bound = KINECT["systematic_offset"] + KINECT["systematic_per_metre"] * 1.0
    offsets = []
    for seed in range(5):
        unit = base.with_unit(np.random.default_rng(seed))
        _, depth = unit.apply(grey, _plane(1.0), np.random.default_rng(9))
        offsets.append(float(np.mean(depth[20:100, 30:130]) - 1.0))
    assert max(abs(o) for o in offsets) <= bound + 5e-4
    assert np.ptp(offsets) > 0.002  # units differ
    scales = [base.depth_model.with_unit_bias(np.random.default_rng(s)).bias_scale
              for s in range(4000)]
    assert np.std(scales) == pytest.approx(KINECT["systematic_sigma"], rel=0.05)
    assert max(abs(x) for x in scales) <= 1.0  # cut at the bound


def test_d405_plane_spread_follows_the_disparity_formula() -> None:
    config = realsense_d405(W, H)
    sensor = make_sensor(config, "lab")
    focal = config.intrinsics[0, 0]
    spreads = []
    for z in (0.2, 0.4):
        _, depth = sensor.apply(_textured(), _plane(z), np.random.default_rng(5))
        sigma = z**2 * D405["subpixel_rms"] / (focal * D405["baseline"])
        expected = np.hypot(sigma, D405["depth_unit"] / np.sqrt(12))
        spreads.append(_spread(depth, (slice(20, 100), slice(40, 140))))
        assert spreads[-1] == pytest.approx(expected, rel=0.1)
    assert spreads[1] / spreads[0] == pytest.approx(4.0, rel=0.15)


def test_d405_holes_on_a_textureless_patch_but_not_on_texture() -> None:
    sensor = make_sensor(realsense_d405(W, H), "lab")
    rgb = _textured()
    rgb[16:112, 32:128] = 128  # a textureless square of 6 x 6 image-fixed 16-px patches
    patch = np.zeros((H, W), np.float32)
    patch[:, 80:] = 0.9  # the right half of the square: patches the matcher finds texture on
    _, depth = sensor.apply(rgb, _plane(0.3), np.random.default_rng(0),
                            surface=SurfaceSample(patch=patch))
    assert np.all(depth[22:106, 38:78] == 0)  # one contiguous hole, not scattered pixels
    kept = depth[22:106, 84:122]
    assert np.all(kept > 0)
    assert kept.std() > 1.5 * _spread(depth, (slice(10, 110), slice(10, 30)))  # less precise
    assert np.mean(depth[:, 10:30] > 0) > 0.99


def test_d405_holes_come_in_whole_patches_at_the_stated_share() -> None:
    sensor = make_sensor(realsense_d405(W, H), "lab")
    flat = np.full((H, W, 3), 128, np.uint8)
    shares = []
    for seed in range(20):
        _, depth = sensor.apply(flat, _plane(0.3), np.random.default_rng(seed))
        # the 16-px image patches right of the band the right imager cannot see; a block is a
        # hole or matched as a whole
        holes = (depth[:112, 16:160] == 0).reshape(7, 16, 9, 16)
        assert np.all(holes.all(axis=(1, 3)) | ~holes.any(axis=(1, 3)))
        shares.append(holes.mean())
    assert np.mean(shares) == pytest.approx(D405["textureless_invalid_fraction"], abs=0.06)


def test_d405_returns_nothing_nearer_than_its_minimum_range() -> None:
    config = CameraConfig("wrist", W, H, fovy_deg=58.0, depth_min=0.0, depth_max=0.5)
    sensor = make_sensor(config, "lab")
    min_z = config.intrinsics[0, 0] * D405["baseline"] / D405["disparity_range"]
    assert sensor.depth_model.min_z == pytest.approx(min_z)
    _, near = sensor.apply(_textured(), _plane(0.8 * min_z), np.random.default_rng(0))
    _, beyond = sensor.apply(_textured(), _plane(1.5 * min_z), np.random.default_rng(0))
    assert np.all(near == 0)
    assert np.mean(beyond[:, W - 40:] > 0) > 0.95  # left columns: no match in the right image


def test_d405_occlusion_shadow_lies_left_of_a_near_box() -> None:
    config = realsense_d405(W, H)
    sensor = make_sensor(config, "lab")
    focal = config.intrinsics[0, 0]
    near, far = 0.15, 0.4
    depth = _plane(far)
    depth[40:80, 70:100] = near
    _, out = sensor.apply(_textured(), depth, np.random.default_rng(0))
    jump = focal * D405["baseline"] * (1 / near - 1 / far)  # shadow width, pixels
    half = D405["matching_window"] // 2
    shadow_start = int(70 - half - jump) + 2
    rows = slice(50, 70)
    assert jump > 6
    assert np.all(out[rows, shadow_start:70 - half - 1] == 0)  # left of the (fattened) box
    assert np.mean(out[rows, 100 + half + 1:130] > 0) > 0.95  # the right side is seen
    assert np.mean(out[rows, 74:96] > 0) > 0.95  # the box itself


def test_d405_fattens_the_foreground_into_the_background() -> None:
    sensor = make_sensor(realsense_d405(W, H), "lab")
    depth = _plane(0.4)
    depth[40:80, 70:100] = 0.2
    _, out = sensor.apply(_textured(), depth, np.random.default_rng(0))
    half = D405["matching_window"] // 2
    right_band = out[50:70, 100:100 + half]
    assert np.mean(np.abs(right_band - 0.2) < 0.01) > 0.8  # background reads as foreground
    assert np.mean(np.abs(out[50:70, 100 + half + 1:120] - 0.4) < 0.03) > 0.95


@pytest.mark.parametrize("name", ["shoulder", "wrist"])
def test_apply_is_deterministic_per_seed_and_leaves_inputs_alone(name: str) -> None:
    config = azure_kinect_color(W, H) if name == "shoulder" else realsense_d405(W, H)
    sensor = make_sensor(config, "kitchen")
    rgb, depth = _textured(), _plane(1.0 if name == "shoulder" else 0.3)
    rgb_before, depth_before = rgb.copy(), depth.copy()
    first = sensor.apply(rgb, depth, np.random.default_rng(7))
    second = sensor.apply(rgb, depth, np.random.default_rng(7))
    other = sensor.apply(rgb, depth, np.random.default_rng(8))
    np.testing.assert_array_equal(rgb, rgb_before)
    np.testing.assert_array_equal(depth, depth_before)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[1], other[1])
    assert not np.array_equal(first[0], other[0])
    assert first[0].dtype == np.uint8 and first[0].shape == (H, W, 3)
    assert first[1].dtype == np.float32 and first[1].shape == (H, W)


def test_motion_blur_grows_with_velocity_and_is_absent_when_still() -> None:
    sensor = make_sensor(realsense_d405(W, H), "lab")
    stripes = np.zeros((H, W, 3), np.uint8)
    stripes[:, ::4] = 255
    stripes[:, 1::4] = 255
    depth = _plane(0.3)
    model = sensor.rgb_model
    assert model.image_motion(depth, None).tolist() == [0.0, 0.0]
    sharpness = []
    for speed in (0.0, 0.2, 0.6):
        velocity = np.array([speed, 0, 0, 0, 0, 0.0])
        rgb, _ = sensor.apply(stripes, depth, np.random.default_rng(0),
                              None if speed == 0 else velocity)
        sharpness.append(np.abs(np.diff(rgb[20:100, 20:140].astype(float), axis=1)).mean())
    assert sharpness[0] > 1.3 * sharpness[1] > 1.3 * sharpness[2]
    expected = model.focal * 0.2 / 0.3 * model.exposure_time  # pixels
    blur = model.image_motion(depth, np.array([0.2, 0, 0, 0, 0, 0.0])) * model.exposure_time
    assert np.hypot(*blur) == pytest.approx(expected)


def test_outdoor_sun_exposes_shorter_and_balances_bluer_than_lab_light() -> None:
    config = azure_kinect_color(W, H)
    lab, kitchen, outdoor = (make_sensor(config, s) for s in ("lab", "kitchen", "outdoor"))
    assert outdoor.rgb_model.exposure_time < lab.rgb_model.exposure_time / 10
    assert kitchen.rgb_model.exposure_time > lab.rgb_model.exposure_time
    grey = np.full((H, W, 3), 128, np.uint8)

    def blue_over_red(sensor: object) -> float:
        rgb, _ = sensor.apply(grey, _plane(1.0), np.random.default_rng(0))
        return float(rgb[..., 2].mean() / rgb[..., 0].mean())

    assert blue_over_red(outdoor) > blue_over_red(lab) > blue_over_red(kitchen)


def test_rgb_noise_is_shot_and_read_noise_through_the_srgb_curve() -> None:
    sensor = make_sensor(azure_kinect_color(W, H), "lab")
    rgb_params = sensor_params("kinect.rgb")
    spreads, expected = [], []
    for level in (30, 200):
        image = np.full((H, W, 3), level, np.uint8)
        out, _ = sensor.apply(image, _plane(1.0), np.random.default_rng(0))
        spreads.append(out[30:90, 40:120, 1].std())  # green: white balance gain 1
        linear = float(srgb_to_linear(np.uint8(level)))
        sigma = np.sqrt(linear / rgb_params["full_well"]
                        + (rgb_params["read_noise"] / rgb_params["full_well"]) ** 2)
        slope = 1.055 / 2.4 * linear ** (1 / 2.4 - 1)  # d sRGB / d linear
        expected.append(255 * sigma * slope)
    for spread, value in zip(spreads, expected, strict=True):
        assert 0.85 * value < spread < 1.15 * value
    assert spreads[0] > spreads[1]  # the sRGB curve lifts the darks' noise


def test_unknown_camera_or_setting_is_refused_with_the_valid_names() -> None:
    with pytest.raises(InvalidConfigError, match="shoulder, wrist"):
        make_sensor(CameraConfig("top", W, H, 50.0, 0.1, 2.0), "lab")
    with pytest.raises(InvalidConfigError, match="lab, kitchen, outdoor"):
        make_sensor(realsense_d405(W, H), "moon")
    with pytest.raises(InvalidConfigError, match="expected"):
        make_sensor(realsense_d405(W, H), "lab").apply(_textured()[:50], _plane(0.3),
                                                       np.random.default_rng(0))


@pytest.mark.parametrize("blur", [(40.0, 0.0), (0.0, 30.0), (28.0, -28.0)])
def test_a_long_motion_blur_spreads_along_its_line_as_the_line_kernel_does(
        blur: tuple[float, float]) -> None:
    from agentic_env.sim.realism.rgb import _line_kernel, _motion_blur

    image = np.zeros((H, W, 3), np.uint8)
    image[50:70, 70:90] = 255  # a bright square on black
    vector = np.array(blur)
    fast = _motion_blur(image, vector).astype(float)
    exact = cv2.filter2D(image, -1, _line_kernel(vector),
                         borderType=cv2.BORDER_REFLECT).astype(float)
    assert fast.sum() == pytest.approx(exact.sum(), rel=0.02)  # light is kept
    assert np.abs(fast - exact).mean() < 2.0  # levels, out of 255
    # spread along the line: as wide as the square plus the blur
    lit = np.argwhere(fast[..., 0] > 10)
    extent = lit.max(axis=0) - lit.min(axis=0)
    assert extent[1] >= 19 + 0.8 * abs(blur[0]) and extent[0] >= 19 + 0.8 * abs(blur[1])


@pytest.mark.parametrize("blur", [(3.0, 1.0), (-8.0, 3.0), (11.0, 4.0), (5.0, -10.0),
                                  (8.4, 8.4), (0.0, 11.9)])
def test_a_short_motion_blur_is_the_line_kernels_convolution(blur: tuple[float, float]
                                                             ) -> None:
    """The kernel cut to its non-zero taps (OpenCV's direct sum, where the whole 13 x 13
    one goes through the DFT) gives the whole kernel's image, to a level of rounding."""
    from agentic_env.sim.realism.rgb import _line_kernel, _short_blur

    image = np.random.default_rng(7).integers(0, 256, (H, W, 3), dtype=np.uint8)
    image[40:80, 60:100] = 255
    vector = np.array(blur)
    whole = cv2.filter2D(image, -1, _line_kernel(vector), borderType=cv2.BORDER_REFLECT)
    cut = _short_blur(image, vector)
    assert cut.shape == whole.shape and cut.dtype == whole.dtype
    assert np.abs(cut.astype(int) - whole).max() <= 1


def test_a_still_cameras_colour_frame_before_noise_is_reused_only_for_the_same_render(
        ) -> None:
    """The white-balanced image and its noise std kept from a still frame give, with the
    next frame's noise, the image a fresh model gives; a new render is computed anew in the
    rows where it changed (or whole), a moving camera's whole."""
    sensor = make_sensor(realsense_d405(W, H), "kitchen")
    model = sensor.rgb_model
    rgb, depth = _textured(), _plane(0.3)
    rng = np.random.default_rng(5)
    moving = np.array([0.3, 0.1, 0.0, 0.0, 0.0, 0.5])
    arm = rgb.copy()
    arm[40:70, 30:90] = (20, 200, 40)  # something moved in a band of rows: redone in place
    for frame, velocity in ((rgb, None), (rgb, None), (rgb[::-1].copy(), None),
                            (rgb, moving), (rgb, np.zeros(6)), (arm, None), (rgb, None),
                            (rgb, None)):
        noise = rng.standard_normal(rgb.shape, np.float32)
        fresh = make_sensor(realsense_d405(W, H), "kitchen").rgb_model
        np.testing.assert_array_equal(model.apply(frame, depth, noise, velocity),
                                      fresh.apply(frame, depth, noise, velocity))
    image, _ = model._exposed(rgb, depth, None)
    assert model._exposed(rgb.copy(), depth, None)[0] is image  # reused


def test_the_d405_lens_is_barrel_and_leaves_no_pixel_empty() -> None:
    """The D405's colour lens (a unit's factory coefficients, forward Brown-Conrady) bends
    rays inwards, so every pinhole pixel's ray lands on its sensor and undistortion empties
    none; the Kinect's lens bends them outwards and leaves the corners empty."""
    wrist = make_sensor(realsense_d405(848, 480), "lab")
    k1, k2, _p1, _p2, k3 = wrist.distortion
    corner = np.linalg.inv(wrist.config.intrinsics) @ [0.0, 0.0, 1.0]
    r2 = corner[0] ** 2 + corner[1] ** 2
    assert 1.0 + k1 * r2 + k2 * r2**2 + k3 * r2**3 < 1.0  # the corner's ray bends inwards
    assert not outside_field(848, 480, wrist.config.intrinsics, wrist.distortion).any()
    shoulder = make_sensor(azure_kinect_color(640, 360), "lab")
    empty = outside_field(640, 360, shoulder.config.intrinsics, shoulder.distortion)
    assert empty[0, 0] and empty[-1, -1] and not empty[180, 320]


def test_the_colour_frame_is_empty_exactly_outside_the_lens_field() -> None:
    """The Kinect's colour frame is black on every channel of the pixels whose ray misses
    its sensor (the bitwise mask of the field) and is the colour model's frame elsewhere."""
    sensor = make_sensor(azure_kinect_color(W, H), "lab")
    outside = outside_field(W, H, sensor.config.intrinsics, sensor.distortion)
    assert outside.any() and not outside.all()
    rgb = np.full((H, W, 3), 200, np.uint8)
    out_rgb, out_depth = sensor.apply(rgb, _plane(1.0), np.random.default_rng(0))
    assert not out_rgb[outside].any() and not out_depth[outside].any()
    assert np.all(out_rgb[~outside].astype(int).sum(axis=1) > 0)
