"""Camera calibration and depth of both RGB-D cameras, checked against MuJoCo's ground truth.

The shoulder camera runs at 1280x720 (the Azure Kinect's native 720p colour mode): at lower
resolutions one pixel covers several millimetres of a cube's top face seen from ~1 m, close to
the 3 mm the back-projection check allows. The wrist camera keeps its default resolution.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import mujoco
import numpy as np
import pytest

from agentic_env.contract.actions import move_to, top_down_pose
from agentic_env.contract.workcell import ROBOT_PREFIX, SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.geometry.camera import (
    CameraConfig,
    azure_kinect_color,
    depth_to_points,
    realsense_d405,
)
from agentic_env.robot.constants import WRIST_CAMERA
from agentic_env.sim.cameras import camera_pose_in_world

CAMERAS = ("shoulder", "wrist")
SEED = 0


@dataclass(frozen=True)
class View:
    """One observation plus privileged ground truth taken in the same simulator state."""

    observation: dict[str, np.ndarray]
    segmentation: dict[str, np.ndarray]  # camera -> (H, W, 2) (object id, object type)
    reference_depth: dict[str, np.ndarray]  # camera -> mujoco.Renderer depth, metres
    cube_centres: dict[str, np.ndarray]  # cube -> centre in the base frame
    cube_rotations: dict[str, np.ndarray]  # cube -> rotation matrix
    ray_depth: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    # camera -> (rows, cols, depth along the optical axis by ray casting, geom type hit)


def camera_config(env: SimEnv, name: str) -> CameraConfig:
    return {"shoulder": env.scene_config.shoulder_camera, "wrist": env.scene_config.wrist_camera}[
        name
    ]


def camera_id(env: SimEnv, name: str) -> int:
    return env.model.camera("shoulder" if name == "shoulder" else ROBOT_PREFIX + WRIST_CAMERA).id


def render_ground_truth(env: SimEnv, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Segmentation and depth of camera ``name`` from ``mujoco.Renderer`` (a separate path)."""
    cfg = camera_config(env, name)
    renderer = mujoco.Renderer(env.model, height=cfg.height, width=cfg.width)
    try:
        renderer.update_scene(env.data, camera=camera_id(env, name))
        renderer.enable_segmentation_rendering()
        segmentation = renderer.render()
        renderer.enable_depth_rendering()
        depth = renderer.render()
    finally:
        renderer.close()
    return segmentation, depth


def ray_cast_depth(
    env: SimEnv, name: str, stride: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Depth along the optical axis through pixel centres on a grid, by ``mj_ray``."""
    cfg = camera_config(env, name)
    cam = camera_id(env, name)
    pose = camera_pose_in_world(env.data, cam)
    k_inv = np.linalg.inv(cfg.intrinsics)
    rows, cols = np.meshgrid(np.arange(stride // 2, cfg.height, stride),
                             np.arange(stride // 2, cfg.width, stride), indexing="ij")
    rows, cols = rows.ravel(), cols.ravel()
    depth = np.full(rows.shape, np.inf)
    geom_type = np.full(rows.shape, -1)
    geom = np.zeros(1, np.int32)
    exclude = int(env.model.cam_bodyid[cam])
    for i, (r, c) in enumerate(zip(rows, cols, strict=True)):
        direction_cam = k_inv @ np.array([c + 0.5, r + 0.5, 1.0])  # z = 1
        direction = pose[:3, :3] @ direction_cam
        norm = np.linalg.norm(direction)
        distance = mujoco.mj_ray(env.model, env.data, pose[:3, 3], direction / norm, None, 1,
                                 exclude, geom)
        if distance >= 0:
            depth[i] = distance / norm  # z component of the hit in the camera frame
            geom_type[i] = env.model.geom_type[geom[0]]
    return rows, cols, depth, geom_type


def capture(env: SimEnv, observation: dict[str, np.ndarray]) -> View:
    segmentation, reference, rays = {}, {}, {}
    for name in CAMERAS:
        segmentation[name], reference[name] = render_ground_truth(env, name)
        rays[name] = ray_cast_depth(env, name, stride=16 if name == "shoulder" else 4)
    scene = env.scene_state
    cubes = [cube.name for cube in env.task.cubes]
    return View(
        observation=observation,
        segmentation=segmentation,
        reference_depth=reference,
        cube_centres={c: scene.body_position(c).copy() for c in cubes},
        cube_rotations={c: scene.body_rotation(c) for c in cubes},
        ray_depth=rays,
    )


@pytest.fixture(scope="module")
def camera_env() -> Iterator[SimEnv]:
    scene = SceneConfig(shoulder_camera=azure_kinect_color(1280, 720), randomize=False)
    env = SimEnv(task="tabletop", scene=scene, realism="ideal")
    yield env
    env.close()


@pytest.fixture(scope="module")
def views(camera_env: SimEnv) -> dict[str, View]:
    """``home``: right after reset; ``above``: the TCP 20 cm above the first cube."""
    env = camera_env
    observation, _ = env.reset(seed=SEED)
    home = capture(env, observation)
    first_cube = env.task.cubes[0].name
    above = env.scene_state.body_position(first_cube) + [0.0, 0.0, 0.2]
    observation, _, _, _, info = env.step(move_to(top_down_pose(above)))
    assert info["primitive"]["ok"], info["primitive"]
    return {"home": home, "above": capture(env, observation)}


def project(view: View, name: str, point_base: np.ndarray) -> tuple[np.ndarray, float]:
    """Pixel coordinates (u, v) of a base-frame point and its depth, from observed calibration."""
    intrinsics = view.observation[f"{name}_intrinsics"].astype(float)
    extrinsics = view.observation[f"{name}_extrinsics"].astype(float)
    point_cam = np.linalg.solve(extrinsics, np.append(point_base, 1.0))[:3]
    uvw = intrinsics @ point_cam
    return uvw[:2] / uvw[2], float(point_cam[2])


# (camera, view, cubes to check): the shoulder camera sees every cube from home; the wrist
# camera sees the cube it hovers over.
CASES = [
    pytest.param("shoulder", "home", ("red_cube", "green_cube", "blue_cube"), id="shoulder"),
    pytest.param("wrist", "above", ("red_cube",), id="wrist"),
]


@pytest.mark.parametrize(("name", "view_name", "cubes"), CASES)
def test_cube_centre_projects_onto_the_cube(
    camera_env: SimEnv, views: dict[str, View], name: str, view_name: str, cubes: tuple[str, ...]
) -> None:
    view = views[view_name]
    cfg = camera_config(camera_env, name)
    for cube in cubes:
        (u, v), depth = project(view, name, view.cube_centres[cube])
        assert depth > 0, f"{cube} is behind the {name} camera"
        row, col = int(np.floor(v)), int(np.floor(u))
        assert 0 <= row < cfg.height and 0 <= col < cfg.width, f"{cube} at ({u:.1f}, {v:.1f})"
        object_id, object_type = view.segmentation[name][row, col]
        assert object_type == mujoco.mjtObj.mjOBJ_GEOM
        hit = camera_env.model.geom(int(object_id)).name
        assert object_id == camera_env.model.geom(cube).id, f"pixel shows {hit!r}, not {cube}"


@pytest.mark.parametrize(("name", "view_name", "cubes"), CASES)
def test_depth_back_projects_to_the_cube_top_face(
    camera_env: SimEnv, views: dict[str, View], name: str, view_name: str, cubes: tuple[str, ...]
) -> None:
    view = views[view_name]
    intrinsics = view.observation[f"{name}_intrinsics"].astype(float)
    extrinsics = view.observation[f"{name}_extrinsics"].astype(float)
    depth = view.observation[f"{name}_depth"]
    points = depth_to_points(depth, intrinsics)
    half = camera_env.task.config.cube_half_size
    for cube in cubes:
        top = view.cube_centres[cube] + view.cube_rotations[cube] @ [0.0, 0.0, half]
        (u, v), _ = project(view, name, top)
        row, col = int(np.floor(v)), int(np.floor(u))
        assert view.segmentation[name][row, col, 0] == camera_env.model.geom(cube).id
        z = float(depth[row, col])
        assert z > 0, f"no depth return on {cube}"
        point_cam = z * np.linalg.solve(intrinsics, [col + 0.5, row + 0.5, 1.0])
        np.testing.assert_allclose(points[row, col], point_cam, rtol=1e-5, atol=1e-6)
        point_base = (extrinsics @ np.append(point_cam, 1.0))[:3]
        error = np.linalg.norm(point_base - top)
        assert error < 3e-3, f"{cube} top face: {error * 1000:.2f} mm off ({name})"


@pytest.mark.parametrize("name", CAMERAS)
def test_depth_matches_ray_casting_on_flat_surfaces(views: dict[str, View], name: str) -> None:
    # Boxes and planes render exactly (curved geoms are tessellated), so there the rendered
    # depth through a pixel centre must equal the ray-cast distance.
    flat = (int(mujoco.mjtGeom.mjGEOM_BOX), int(mujoco.mjtGeom.mjGEOM_PLANE))
    for view_name, view in views.items():
        rows, cols, expected, geom_type = view.ray_depth[name]
        observed = view.observation[f"{name}_depth"][rows, cols].astype(float)
        checked = np.isin(geom_type, flat) & (observed > 0)
        assert checked.sum() > 100
        error = np.abs(observed - expected)[checked]
        assert error.max() < 1e-3, (
            f"{view_name}: depth off by up to {error.max() * 1000:.1f} mm "
            f"(median {np.median(error) * 1000:.2f} mm) over {checked.sum()} pixels"
        )


def _interior(mask: np.ndarray) -> np.ndarray:
    """Pixels whose 3x3 neighbourhood lies entirely in ``mask``."""
    padded = np.pad(mask, 1, constant_values=False)
    h, w = mask.shape
    out = np.ones_like(mask)
    for dr in range(3):
        for dc in range(3):
            out &= padded[dr : dr + h, dc : dc + w]
    return out


@pytest.mark.parametrize("name", CAMERAS)
def test_depth_is_float32_metres_and_zero_outside_the_range(
    camera_env: SimEnv, views: dict[str, View], name: str
) -> None:
    cfg = camera_config(camera_env, name)
    low, high = 0.95 * cfg.depth_min, 1.05 * cfg.depth_max  # clear of rendering differences
    out_of_range_seen = 0
    for view in views.values():
        depth = view.observation[f"{name}_depth"]
        assert depth.dtype == np.float32 and depth.shape == (cfg.height, cfg.width)
        assert np.all(np.isfinite(depth))
        returned = depth > 0
        assert returned.any()
        assert depth[returned].min() >= cfg.depth_min
        assert depth[returned].max() <= cfg.depth_max
        reference = view.reference_depth[name]
        clearly_out = _interior((reference < low) | (reference > high))
        clearly_in = _interior((reference > cfg.depth_min / 0.95)
                               & (reference < cfg.depth_max / 1.05))
        assert np.all(depth[clearly_out] == 0.0)
        assert np.all(depth[clearly_in] > 0.0)
        out_of_range_seen += int(clearly_out.sum())
    assert out_of_range_seen > 0, "no out-of-range pixels: the check above was vacuous"


@pytest.mark.parametrize("name", CAMERAS)
def test_intrinsics_follow_the_field_of_view(
    camera_env: SimEnv, views: dict[str, View], name: str
) -> None:
    cfg = camera_config(camera_env, name)
    focal = (cfg.height / 2) / np.tan(np.deg2rad(cfg.fovy_deg) / 2)
    expected = np.array([[focal, 0, cfg.width / 2], [0, focal, cfg.height / 2], [0, 0, 1]])
    for view in views.values():
        intrinsics = view.observation[f"{name}_intrinsics"]
        assert intrinsics.dtype == np.float32
        np.testing.assert_allclose(intrinsics, expected, rtol=1e-6)
    # the rendered image uses the same field of view
    assert camera_env.model.cam_fovy[camera_id(camera_env, name)] == pytest.approx(cfg.fovy_deg)


@pytest.mark.parametrize("name", CAMERAS)
def test_extrinsics_are_rigid_transforms(views: dict[str, View], name: str) -> None:
    for view in views.values():
        extrinsics = view.observation[f"{name}_extrinsics"].astype(float)
        rotation = extrinsics[:3, :3]
        np.testing.assert_allclose(rotation.T @ rotation, np.eye(3), atol=1e-6)
        assert np.linalg.det(rotation) == pytest.approx(1.0, abs=1e-6)
        np.testing.assert_array_equal(extrinsics[3], [0, 0, 0, 1])


def test_shoulder_extrinsics_match_the_configured_mount(
    camera_env: SimEnv, views: dict[str, View]
) -> None:
    cfg = camera_env.scene_config
    extrinsics = views["home"].observation["shoulder_extrinsics"].astype(float)
    position = np.asarray(cfg.shoulder_camera_pos)
    np.testing.assert_allclose(extrinsics[:3, 3], position, atol=1e-6)
    forward = np.asarray(cfg.shoulder_camera_target) - position
    np.testing.assert_allclose(extrinsics[:3, 2], forward / np.linalg.norm(forward), atol=1e-6)
    assert extrinsics[2, 1] < 0, "image y (down) must point downwards in the world"


def test_seeded_depth_noise(make_sim_env) -> None:
    std = 0.01
    noisy = SceneConfig(
        shoulder_camera=replace(azure_kinect_color(64, 36), depth_noise_std=std),
        wrist_camera=realsense_d405(64, 36),
    )
    clean = replace(noisy, shoulder_camera=azure_kinect_color(64, 36))
    env_a, env_b = make_sim_env(scene=noisy), make_sim_env(scene=noisy)
    env_clean = make_sim_env(scene=clean)

    def residual(env: SimEnv, observation: dict[str, np.ndarray]) -> np.ndarray:
        reference, _ = env_clean.reset(seed=env.np_random_seed)
        depth, truth = observation["shoulder_depth"], reference["shoulder_depth"]
        both = (depth > 0) & (truth > 0)
        out = np.full(depth.shape, np.nan)
        out[both] = (depth[both] - truth[both]) / truth[both] ** 2  # unit: std at 1 m
        return out

    obs_a, _ = env_a.reset(seed=5)
    obs_b, _ = env_b.reset(seed=5)
    assert obs_a["shoulder_depth"].dtype == np.float32
    np.testing.assert_array_equal(obs_a["shoulder_depth"], obs_b["shoulder_depth"])
    noise_5 = residual(env_a, obs_a)
    valid = np.isfinite(noise_5)
    assert valid.sum() > 1000
    assert np.nanstd(noise_5) == pytest.approx(std, rel=0.15)
    assert abs(np.nanmean(noise_5)) < 3 * std / np.sqrt(valid.sum()) + 1e-4

    obs_b, _ = env_b.reset(seed=6)
    noise_6 = residual(env_b, obs_b)
    both = np.isfinite(noise_5) & np.isfinite(noise_6)
    assert not np.array_equal(noise_5[both], noise_6[both])
    correlation = np.corrcoef(noise_5[both], noise_6[both])[0, 1]
    assert abs(correlation) < 0.2, "different seeds must give independent noise"
    # the wrist camera has no noise configured: its depth is noise-free
    assert np.array_equal(obs_b["wrist_depth"], env_clean.reset(seed=6)[0]["wrist_depth"])


@pytest.mark.parametrize("name", CAMERAS)
def test_segmentation_matches_mujoco_renderer(
    camera_env: SimEnv, views: dict[str, View], name: str
) -> None:
    # the env was left in the "above" view's state
    reference = views["above"].segmentation[name]
    expected = np.where(reference[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM), reference[..., 0], -1)
    assert np.array_equal(camera_env.segmentation(name), expected)


def test_renderers_share_a_gl_context_and_outlive_each_other(make_sim_env) -> None:
    first, second = make_sim_env(task="tabletop"), make_sim_env(task="tabletop")
    observation, _ = first.reset(seed=SEED)
    second.reset(seed=SEED)
    shared = {id(renderer._gl) for env in (first, second) for renderer in env._renderers.values()}
    assert len(shared) == 1  # both cameras are 640x360
    first.close()
    again = second.observe()  # the other env's renderers are gone, the GL context is not
    for name in CAMERAS:
        assert np.array_equal(again[f"{name}_rgb"], observation[f"{name}_rgb"])
