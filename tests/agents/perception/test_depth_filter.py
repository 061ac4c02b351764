"""The agents' depth post-processing on synthetic depth with the devices' noise: outliers go,
small holes are filled and large ones are not, depth edges keep no flying pixel, exact depth
is left nearly as it is. What a 640x480 frame costs is measured by ``agentic-env bench``
(the depth filter against the observation, in one run)."""

from __future__ import annotations

import numpy as np
import pytest

from agentic_env.agents.perception import (
    box_cloud,
    camera_cloud,
    camera_depth,
    camera_profile,
    filter_depth,
)
from agentic_env.agents.perception.depth_filter import MAX_HOLE, DepthProfile, tolerance
from agentic_env.errors import InvalidConfigError

#: The cameras' depth profiles at 640x480 (focal length 500 px) and a typical range for
#: each: the shoulder's time of flight at 1 m, the wrist's stereo at 35 cm.
INTRINSICS = np.array([[500.0, 0.0, 320.0], [0.0, 500.0, 240.0], [0.0, 0.0, 1.0]])
CAMERAS = {"shoulder": 1.0, "wrist": 0.35}


def _tilted_plane(centre_depth: float, tilt_deg: float = 50.0,
                  shape: tuple[int, int] = (480, 640)) -> np.ndarray:
    """Exact depth (m) of a plane tilted ``tilt_deg`` about the image's x axis (the table
    seen from the shoulder), ``centre_depth`` m away at the image centre."""
    height, width = shape
    v = (np.arange(height) + 0.5 - INTRINSICS[1, 2]) / INTRINSICS[1, 1]
    normal_y, normal_z = -np.sin(np.radians(tilt_deg)), np.cos(np.radians(tilt_deg))
    # n . (x, y, 1) z = n_z * centre_depth for every pixel of the row
    depth = normal_z * centre_depth / (normal_y * v + normal_z)
    return np.repeat(depth[:, None], width, axis=1).astype(np.float32)


def _profile(camera: str) -> DepthProfile:
    return camera_profile(camera, INTRINSICS)


@pytest.mark.parametrize("camera", list(CAMERAS))
def test_a_noisy_plane_loses_its_outliers_and_only_its_small_holes(camera: str) -> None:
    profile, rng = _profile(camera), np.random.default_rng(0)
    exact = _tilted_plane(CAMERAS[camera])
    sigma = profile.noise.std(exact)
    depth = exact + sigma * rng.standard_normal(exact.shape).astype(np.float32)
    # salt: far off the plane, on a lattice; small holes (1 to MAX_HOLE pixels along a row
    # or a column) on another lattice; one 12 x 12 hole
    salt = np.zeros(exact.shape, bool)
    salt[8::16, 8::16] = True
    depth[salt] += rng.choice([-1.0, 1.0], salt.sum()) * rng.uniform(0.05, 0.3, salt.sum())
    small = np.zeros(exact.shape, bool)
    for k, (row, col) in enumerate(np.ndindex(29, 39)):
        length = 1 + k % MAX_HOLE
        r, c = 16 * row + 2, 16 * col + 2
        if k % 2:
            small[r, c:c + length] = True
        else:
            small[r:r + length, c] = True
    large = np.zeros(exact.shape, bool)
    large[200:212, 300:312] = True
    small &= ~large
    depth[small | large] = 0.0
    raw = depth.copy()

    filtered = filter_depth(depth, INTRINSICS, profile.noise, profile.smooth)

    np.testing.assert_array_equal(depth, raw)  # the input is left as it was
    seen = filtered > 0
    # nothing lies farther from the plane than six standard deviations of the noise: the
    # salt is gone (or its pixel filled from the plane around it)
    assert np.all(np.abs(filtered[seen] - exact[seen]) <= 6 * sigma[seen])
    assert np.all(seen[small]) and not np.any(seen[large])
    plain = ~(salt | small | large)
    assert np.mean(seen[plain]) > 0.999  # the plane itself is kept


@pytest.mark.parametrize("camera", list(CAMERAS))
def test_a_depth_edge_keeps_no_flying_pixel(camera: str) -> None:
    profile, rng = _profile(camera), np.random.default_rng(1)
    near, far = CAMERAS[camera], CAMERAS[camera] + 0.2
    exact = np.full((480, 640), far, np.float32)
    exact[:, :320] = near
    sigma = profile.noise.std(exact)
    depth = exact + sigma * rng.standard_normal(exact.shape).astype(np.float32)
    # the depth engine let a tenth of the mixed pixels through, each anywhere between the
    # two surfaces (none beside another: a pair backs itself up)
    mixed = rng.random(480) < 0.1
    mixed[1:] &= ~mixed[:-1]
    depth[mixed, 320] = near + rng.random(np.count_nonzero(mixed)) * (far - near)

    filtered = filter_depth(depth, INTRINSICS, profile.noise, profile.smooth)

    seen = filtered > 0
    # nothing in between: a mixed pixel within a neighbour's tolerance (noise and slope) of
    # a surface is that surface's, one farther from both is gone
    on_near = np.abs(filtered - near) <= tolerance(near, 500.0, profile.noise)
    on_far = np.abs(filtered - far) <= tolerance(far, 500.0, profile.noise)
    assert np.all(on_near[seen] | on_far[seen])
    assert np.all(on_near[:, :320]) and np.all(on_far[:, 321:])  # the edge stays put


def test_exact_depth_is_nearly_unchanged() -> None:
    """The ideal world's depth (a tilted table, a 3 cm ball on it) through the smoothing
    wrist profile: the table is left as it is, the ball moves by a fraction of a millimetre
    (the mean of a curved surface's neighbours lies behind it), and only a few pixels at the
    extremes of its silhouette go (a limb pixel with one neighbour on its side)."""
    profile = _profile("wrist")
    table = _tilted_plane(0.35, tilt_deg=20.0)
    u, v = np.meshgrid(np.arange(640) + 0.5 - 320.0, np.arange(480) + 0.5 - 240.0)
    ray = np.stack([u / 500.0, v / 500.0, np.ones_like(u)], axis=-1)
    centre, radius = np.array([0.0, 0.0, 0.31]), 0.03
    # the ball's near surface along each pixel's ray: |z ray - centre| = radius
    b = ray @ centre / np.sum(ray**2, axis=-1)
    c = (centre @ centre - radius**2) / np.sum(ray**2, axis=-1)
    ball = np.where(b**2 > c, b - np.sqrt(np.maximum(b**2 - c, 0.0)), np.inf)
    depth = np.minimum(table, ball).astype(np.float32)
    on_ball = ball < table

    filtered = filter_depth(depth, INTRINSICS, profile.noise, profile.smooth)

    gone = filtered <= 0
    assert np.count_nonzero(gone) <= 16 and np.all(on_ball[gone])
    seen = ~gone
    assert np.max(np.abs(filtered - depth)[seen & ~on_ball]) < 1e-5
    assert np.max(np.abs(filtered - depth)[seen & on_ball]) < 1e-3


def test_bad_depth_reads_as_no_return_and_bad_input_is_refused() -> None:
    profile = _profile("shoulder")
    depth = np.full((48, 64), 1.0, np.float32)
    depth[10, 10], depth[20, 20], depth[30, 30] = np.nan, -1.0, np.inf
    filtered = filter_depth(depth, INTRINSICS, profile.noise, profile.smooth)
    assert np.all(np.isfinite(filtered))
    assert filtered[10, 10] == filtered[20, 20] == filtered[30, 30] == pytest.approx(1.0)
    with pytest.raises(InvalidConfigError, match="an \\(H, W\\) image"):
        filter_depth(depth[None], INTRINSICS, profile.noise)
    with pytest.raises(InvalidConfigError, match="valid: shoulder, wrist"):
        camera_profile("overhead", INTRINSICS)


def test_clouds_read_the_filtered_frame_once() -> None:
    """Every cloud of an observation reads one post-processed frame, computed once per
    depth image: a detection box's cloud is the whole image's cloud inside the box (not a
    crop filtered on its own), and the frame is read-only."""
    rng = np.random.default_rng(3)
    profile = _profile("shoulder")
    exact = _tilted_plane(1.0)
    depth = exact + profile.noise.std(exact) * rng.standard_normal(exact.shape).astype(
        np.float32)
    depth[rng.random(depth.shape) < 0.05] = 0.0
    obs = {"shoulder_depth": depth, "shoulder_rgb": np.zeros((480, 640, 3), np.uint8),
           "shoulder_intrinsics": INTRINSICS, "shoulder_extrinsics": np.eye(4)}

    frame = camera_depth(obs, "shoulder")
    assert camera_depth(dict(obs), "shoulder") is frame and not frame.flags.writeable
    assert camera_depth({**obs, "shoulder_depth": depth.copy()}, "shoulder") is not frame
    whole, box = camera_cloud(obs, "shoulder"), box_cloud(obs, "shoulder", (100, 50, 140, 90))
    inside = np.all((whole.pixels >= (100, 50)) & (whole.pixels < (140, 90)), axis=1)
    np.testing.assert_array_equal(box.pixels, whole.pixels[inside])
    np.testing.assert_allclose(box.points, whole.points[inside], atol=1e-6)
    assert len(whole) == np.count_nonzero(frame)
