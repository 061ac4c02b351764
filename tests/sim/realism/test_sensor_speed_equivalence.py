"""The optimised camera models give, bit for bit, what their plain formulations give.

Each reference below is the straightforward numpy/OpenCV form of a model step (as first
written, before the speed work): same inputs, same generator state -> identical bytes and
identical random-number consumption. Frames are small synthetic scenes with depth jumps, holes,
out-of-range depth, textureless and textured patches.
"""

import cv2
import numpy as np
import pytest

from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.sim.realism.depth_stereo import StereoDepthModel
from agentic_env.sim.realism.depth_tof import TofDepthModel
from agentic_env.sim.realism.rgb import _DECODE, RgbModel, srgb_to_linear
from agentic_env.sim.realism.sensors import make_sensor
from agentic_env.sim.realism.surfaces import SurfaceSample

W, H = 160, 120


def _scene(device: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(rgb, depth) with jumps, holes, a ramp, out-of-range depth and flat/textured patches."""
    rng = np.random.default_rng(seed)
    near, far, base = (0.6, 3.9, 1.5) if device == "kinect" else (0.05, 0.6, 0.3)
    depth = np.full((H, W), base, np.float32)
    depth[30:70, 40:90] = base * 0.6
    depth[90:, :] = 0.0
    depth[:, :10] = far
    depth[10:20, 120:150] = near
    yy, xx = np.mgrid[0:H, 0:W]
    depth[50:90, 100:150] = (base + 0.002 * xx[50:90, 100:150]
                             + 0.001 * yy[50:90, 100:150]).astype(np.float32)
    rgb = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
    rgb[:60, :80] = 128
    rgb[60:, 80:] = 0
    rgb[:25, 100:] = 255
    return rgb, depth


def _cos_reference(model: TofDepthModel, depth: np.ndarray) -> np.ndarray:
    binned = cv2.resize(depth, (W // 2, H // 2), interpolation=cv2.INTER_AREA)
    du = cv2.Sobel(binned, cv2.CV_32F, 1, 0, ksize=1, scale=0.5)
    dv = cv2.Sobel(binned, cv2.CV_32F, 0, 1, ksize=1, scale=0.5)
    along = binned / np.float32(model.intrinsics[0, 0] / 2)
    normal_z = model._a * du
    normal_z += model._b * dv
    normal_z += along
    norm = cv2.magnitude(cv2.magnitude(du, dv), normal_z) * model._ray
    return cv2.resize(along / norm, (W, H), interpolation=cv2.INTER_LINEAR)


def _tof_reference(model: TofDepthModel, depth: np.ndarray, grey: np.ndarray,
                   rng: np.random.Generator, noise: np.ndarray,
                   albedo: np.ndarray) -> np.ndarray:
    p = model.params
    invalid = depth <= 0
    far = np.float32(1e3)
    lifted = depth.copy()
    lifted[invalid] = far
    kernel = np.ones((3, 3), np.uint8)
    nearest = cv2.erode(lifted, kernel)
    farthest = cv2.dilate(depth, kernel)
    jump = p["edge_jump"] * max(1.0, 640 / model.width)
    edge = (farthest - nearest > np.float32(jump)) & (nearest < far) & ~invalid
    second = [cv2.filter2D(depth, cv2.CV_32F, kernel, borderType=cv2.BORDER_REPLICATE)
              for kernel in (np.float32([[1, -2, 1]]), np.float32([[1], [-2], [1]]))]
    edge &= np.maximum(np.abs(second[0]), np.abs(second[1])) > np.float32(jump)
    signal = np.maximum(albedo * _cos_reference(model, lifted), np.float32(1e-6))
    scale = np.float32(p["sigma_bound"] * p["reflectivity_min"] / p["range_max"] ** 2)
    sigma = scale * depth * depth / signal
    if model.ambient_ratio > 0:
        luminance = grey * np.float32(1 / 255)
        background = (np.float32(model.ambient_ratio / p["range_max"] ** 2) * luminance
                      * (depth * depth) / signal + np.float32(1.0))
        sigma = sigma * np.sqrt(background)
    invalid |= (sigma > np.float32(p["sigma_bound"])) & ~edge
    size, binned = (model._window, model._window), (W // 2, H // 2)
    valid = (~invalid).astype(np.float32)
    weight = cv2.blur(cv2.resize(valid, binned, interpolation=cv2.INTER_AREA), size)
    mean = cv2.blur(cv2.resize(depth * valid, binned, interpolation=cv2.INTER_AREA), size)
    mean = cv2.resize(mean / np.maximum(weight, np.float32(1e-6)), (W, H),
                      interpolation=cv2.INTER_LINEAR)
    concavity = (depth - mean) * np.float32(p["multipath_gain"])
    out = depth + np.clip(concavity, np.float32(0.0), np.float32(p["multipath_max"]))
    if model.bias_scale:
        out += np.float32(model.bias_scale) * (
            np.float32(p["systematic_offset"]) + np.float32(p["systematic_per_metre"]) * depth)
    out += np.minimum(sigma, np.float32(p["sigma_bound"])) * noise
    rows, cols = np.nonzero(edge)
    keep = rng.random(rows.size) < p["flying_keep"]
    mix = rng.random(rows.size).astype(np.float32)
    fore, back = nearest[rows, cols], farthest[rows, cols]
    out[rows, cols] = np.where(keep, mix * fore + (1 - mix) * back, np.float32(0.0))
    unit = np.float32(p["depth_unit"])
    out *= 1 / unit
    out = np.round(out) * unit
    invalid |= (out < np.float32(model.depth_min)) | (out > np.float32(model.depth_max))
    out[invalid] = 0.0
    return out


def _stereo_reference(model: StereoDepthModel, depth: np.ndarray, grey: np.ndarray,
                      noise: np.ndarray, patch: np.ndarray) -> np.ndarray:
    p = model.params
    valid = depth > 0
    half = p["matching_window"] // 2
    lifted = np.where(valid, depth, np.float32(np.inf))
    nearest = cv2.erode(lifted, np.ones((2 * half + 1, 2 * half + 1), np.uint8))
    spread = valid & (depth - nearest > np.float32(p["fattening_jump"]))
    depth = np.where(spread, nearest, depth).astype(np.float32)
    size = (p["matching_window"], p["matching_window"])
    mean = cv2.boxFilter(grey, cv2.CV_32F, size)
    textureless = (cv2.sqrBoxFilter(grey, cv2.CV_32F, size) - mean * mean
                   < np.float32(p["texture_threshold"] ** 2))
    dropped = textureless & (patch < np.float32(p["textureless_invalid_fraction"]))
    disparity = np.where(valid, np.float32(model.focal * p["baseline"]) / np.where(
        valid, depth, np.float32(1.0)), np.float32(0.0))
    right = np.arange(depth.shape[1], dtype=np.float32)[None, :] - disparity
    suffix = np.minimum.accumulate(right[:, ::-1], axis=1)[:, ::-1]
    beyond = np.full_like(right, np.inf)
    beyond[:, :-1] = suffix[:, 1:]
    occluded = valid & ((right > beyond + np.float32(0.5)) | (right < 0))
    invalid = ~valid | occluded | dropped
    precision = np.where(textureless, np.float32(p["textureless_noise_factor"]),
                         np.float32(1.0))
    out = depth + model.random_std(depth) * precision * noise
    unit = np.float32(p["depth_unit"])
    out = np.round(out / unit) * unit
    invalid |= (depth < model.min_z) | (out < model.depth_min) | (out > model.depth_max)
    out[invalid] = 0.0
    return out.astype(np.float32)


def _rgb_noise_reference(model: RgbModel, image: np.ndarray, noise: np.ndarray) -> np.ndarray:
    noisy = (model._sigma[image] * noise).astype(np.float64) + image
    return np.clip(np.rint(noisy), 0.0, 255.0).astype(np.uint8)


def _assert_same_bytes(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()  # also tells +0.0 from -0.0


@pytest.mark.parametrize("setting", ["lab", "outdoor"])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("seed", [0, 5])
def test_tof_model_matches_its_plain_formulation(seed: int, unit: bool, setting: str) -> None:
    sensor = make_sensor(azure_kinect_color(W, H), setting)
    if unit:
        sensor = sensor.with_unit(np.random.default_rng(seed + 1))
    rgb, depth = _scene("kinect", seed)
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    noise = np.random.default_rng(seed).standard_normal((H, W), np.float32)
    fast_rng, plain_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    albedo = np.random.default_rng(seed + 2).uniform(0.0, 1.0, (H, W)).astype(np.float32)
    fast = sensor.depth_model.apply(depth, grey, fast_rng, noise, SurfaceSample(albedo=albedo))
    plain = _tof_reference(sensor.depth_model, depth, grey, plain_rng, noise, albedo)
    _assert_same_bytes(fast, plain)
    assert np.any(fast == 0) and np.any(fast > 0)
    assert fast_rng.integers(1 << 62) == plain_rng.integers(1 << 62)  # same draws consumed


def test_tof_incidence_matches_its_plain_formulation() -> None:
    model = make_sensor(azure_kinect_color(W, H), "lab").depth_model
    _, depth = _scene("kinect", 3)
    depth[depth <= 0] = 1e3
    # cv2.Sobel's own rounding depends on its input's memory alignment (SIMD or scalar
    # path), so the reference is matched to float32 precision, not byte for byte
    np.testing.assert_allclose(model.cos_incidence(depth), _cos_reference(model, depth),
                               rtol=1e-6, atol=0.0)


@pytest.mark.parametrize("seed", [0, 5])
def test_stereo_model_matches_its_plain_formulation(seed: int) -> None:
    model = make_sensor(realsense_d405(W, H), "lab").depth_model
    rgb, depth = _scene("d405", seed)
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    noise = np.random.default_rng(seed).standard_normal((H, W), np.float32)
    fast_rng, plain_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    patch = np.random.default_rng(seed + 3).random((H, W), dtype=np.float32)
    fast = model.apply(depth, grey, fast_rng, noise, SurfaceSample(patch=patch))
    plain = _stereo_reference(model, depth, grey, noise, patch)
    _assert_same_bytes(fast, plain)
    assert np.any(fast == 0) and np.any(fast > 0)
    assert fast_rng.integers(1 << 62) == plain_rng.integers(1 << 62)


@pytest.mark.parametrize("setting", ["lab", "kitchen", "outdoor"])
def test_rgb_noise_matches_its_plain_formulation(setting: str) -> None:
    model = make_sensor(realsense_d405(W, H), setting).rgb_model
    rgb, depth = _scene("d405", 2)
    noise = np.random.default_rng(2).standard_normal(rgb.shape, np.float32)
    image = cv2.LUT(rgb, model._balance)
    _assert_same_bytes(model.apply(rgb, depth, noise, None),
                       _rgb_noise_reference(model, image, noise))


@pytest.mark.parametrize("shape", [(H, W, 3), (H, W), (7, 3), ()])
def test_srgb_decoding_matches_the_table_for_any_shape(shape: tuple[int, ...]) -> None:
    values = np.random.default_rng(1).integers(0, 256, shape, dtype=np.uint8)
    _assert_same_bytes(np.asarray(srgb_to_linear(values)), _DECODE[values])
    strided = np.random.default_rng(2).integers(0, 256, (H, W, 3), dtype=np.uint8)[::2, ::3]
    _assert_same_bytes(srgb_to_linear(strided), _DECODE[strided])


@pytest.mark.parametrize("span", [1, 2, 3, 7, 64, 100, 130])
def test_window_minimum_is_the_least_of_the_next_span_values(span: int) -> None:
    from agentic_env.sim.realism.depth_stereo import _window_minimum

    values = np.random.default_rng(span).normal(size=500).astype(np.float32)
    expected = np.array([values[i + 1:i + 1 + span].min() if i + 1 < values.size else np.inf
                         for i in range(values.size)], np.float32)
    # past the end only the values that exist count (the rows' +inf padding makes it so)
    got = _window_minimum(values, span)
    last = values.size - span
    _assert_same_bytes(got[:last], expected[:last])
    assert np.all(np.isinf(got[last:]))


def _blur_reference(image: np.ndarray, blur: np.ndarray) -> np.ndarray:
    """The mean of every copy of the reflect-padded image shifted by a sum of the doubling
    steps' +-half shifts, rounded once (ties to even), in float64."""
    shifts = []
    for step in range(1, int(np.ceil(np.log2(np.hypot(*blur)))) + 1):
        du, dv = (int(round(value)) for value in blur / 2.0**(step + 1))
        if du == 0 and dv == 0:
            break
        shifts.append((du, dv))
    pad = sum(max(abs(du), abs(dv)) for du, dv in shifts)
    padded = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_REFLECT).astype(float)
    total = np.zeros(image.shape)
    height, width = image.shape[:2]
    for signs in np.ndindex(*(2,) * len(shifts)):
        du = sum((1 - 2 * s) * shift[0] for s, shift in zip(signs, shifts, strict=True))
        dv = sum((1 - 2 * s) * shift[1] for s, shift in zip(signs, shifts, strict=True))
        total += padded[pad + dv:pad + dv + height, pad + du:pad + du + width]
    return np.rint(total / 2 ** len(shifts)).astype(np.uint8)


@pytest.mark.parametrize("blur", [(40.0, 3.0), (-37.0, 22.0), (13.0, 0.0), (0.0, -25.0)])
def test_a_long_motion_blur_is_the_exact_mean_of_its_shifted_copies(
        blur: tuple[float, float]) -> None:
    """Summed exactly in integers and rounded once: the float64 mean of the 2^k copies,
    borders reflected once around the image."""
    from agentic_env.sim.realism.rgb import _motion_blur

    image = np.random.default_rng(3).integers(0, 256, (H, W, 3), dtype=np.uint8)
    image[30:70, 50:110] = 250
    vector = np.array(blur)
    _assert_same_bytes(_motion_blur(image, vector), _blur_reference(image, vector))


def _patches_reference(depth: np.ndarray, intrinsics: np.ndarray, pose: np.ndarray,
                       seed: int) -> np.ndarray:
    """Each 4-pixel block's sample back-projected, moved to the base frame, its shifted
    cube hashed (as :func:`surface_patches` states it), one block at a time."""
    from agentic_env.geometry.camera import depth_to_points
    from agentic_env.sim.realism.surfaces import _HASH, PATCH_SIZE, _grid_offset

    points = depth_to_points(depth, intrinsics).astype(np.float64) @ pose[:3, :3].T + pose[:3, 3]
    out = np.zeros(depth.shape, np.float32)
    mask = (1 << 64) - 1
    for row in range(2, depth.shape[0], 4):
        for col in range(2, depth.shape[1], 4):
            if depth[row, col] <= 0:
                continue
            cell = np.floor(points[row, col] / PATCH_SIZE + _grid_offset(seed)).astype(np.int64)
            value = int(np.bitwise_xor.reduce(cell * _HASH) ^ np.int64(seed)) & mask
            for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
                value = ((value ^ (value >> shift)) * factor) & mask
            value ^= value >> 31
            out[row - 2:row + 2, col - 2:col + 2] = (value >> 40) / 2.0**24
    return out


def test_surface_patches_match_their_plain_formulation() -> None:
    """The same cubes but where a sample lies within float rounding of a cube's face."""
    from agentic_env.sim.realism.surfaces import surface_patches

    config = realsense_d405(W, H)
    _, depth = _scene("d405", 4)
    pose = np.eye(4)
    pose[:3, :3] = cv2.Rodrigues(np.array([0.4, -0.2, 0.1]))[0]
    pose[:3, 3] = (0.31, -0.12, 0.45)
    for seed in (3, 2**61 + 5):
        fast = surface_patches(depth, config.intrinsics, pose, seed)
        plain = _patches_reference(depth, config.intrinsics, pose, seed)
        assert fast.dtype == np.float32 and fast.shape == depth.shape
        assert np.mean(fast != plain) < 1e-3
        assert 0.3 < np.mean(fast[depth > 0] < 0.5) < 0.7


def _moved(after: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Where a field changed: masks exactly, floats beyond a relative 1e-5 (the incidence's
    last float32 bit follows OpenCV's SIMD or scalar path, i.e. the arrays' alignment)."""
    if after.dtype == bool:
        return after != before
    return ~np.isclose(after, before, rtol=1e-5, atol=0.0)


@pytest.mark.parametrize(("setting", "width"), [("lab", 320), ("outdoor", 320), ("lab", 640)])
def test_tof_fields_depend_on_the_inputs_within_their_stated_reach(setting: str,
                                                                   width: int) -> None:
    """A depth (and luma) change at one pixel moves the signal fields only within
    SIGNAL_REACH of it, and the base depth within SIGNAL_REACH + multipath_reach: the
    margins :class:`~agentic_env.sim.realism.depth_tof_static.StaticTofDepth` recomputes
    the two stages over."""
    from agentic_env.sim.realism.depth_tof import SIGNAL_REACH

    height = width * 3 // 4
    model = make_sensor(azure_kinect_color(width, height), setting).depth_model
    rng = np.random.default_rng(9)
    depth = (1.0 + 0.002 * np.arange(height)[:, None] * 320 / width
             + 0.001 * np.arange(width) * 320 / width).astype(np.float32)
    grey = rng.integers(40, 200, (height, width), dtype=np.uint8)
    albedo = rng.uniform(0.05, 0.9, (height, width)).astype(np.float32)
    before = model.fields(depth, grey, albedo)
    rows, cols = np.mgrid[0:height, 0:width]
    for row, col in ((height // 2, width // 2), (61, 203), (150, 41)):
        changed_depth, changed_grey = depth.copy(), grey.copy()
        changed_depth[row - 1:row + 2, col - 1:col + 2] = 0.6  # a near speck: edges
        changed_depth[row, col] = 0.0  # with a hole in it
        changed_grey[row, col] = 255
        after = model.fields(changed_depth, changed_grey, albedo)
        distance = np.maximum(np.abs(rows - row), np.abs(cols - col)) - 1
        for name in ("sigma", "invalid", "edge", "nearest", "farthest"):
            moved = _moved(getattr(after, name), getattr(before, name))
            assert moved.any() and distance[moved].max() <= SIGNAL_REACH, name
        moved = _moved(after.base, before.base)
        assert moved.any() and distance[moved].max() <= SIGNAL_REACH + model.multipath_reach
