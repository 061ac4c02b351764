"""Perception toolkit on real sim observations: clouds, lifting, segmentation, pictures.

The tests read privileged state (body poses and boxes) only to check the toolkit's answers.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from support.single_object_task import OBJECT_NAME, SingleObjectTask

from agentic_env.agents.perception import (
    GraspCandidate,
    PointCloud,
    box_cloud,
    camera_cloud,
    camera_depth,
    cluster_near,
    draw_detections,
    fit_plane,
    lift_pixel,
    numbered_sheet,
    project_to_image,
    remove_gripper,
    remove_table,
    render_grasp,
    seen_table_height,
    target_cloud,
)
from agentic_env.bench.grasp import oracle_detection
from agentic_env.contract.actions import top_down_pose
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.state import body_box


@pytest.fixture(scope="module")
def sorting() -> Iterator[tuple[SimEnv, dict[str, np.ndarray], list[str]]]:
    """A sorting layout (seed 0): the env, its first observation and the objects on the table."""
    env = SimEnv("sorting", realism="ideal")
    obs, info = env.reset(seed=0)
    names = [o["name"] for o in info["trial"]["objects"] if o["position"][2] > -0.01]
    yield env, obs, names
    env.close()


@pytest.fixture(scope="module")
def cube_and_sphere() -> Iterator[dict[str, tuple[SimEnv, dict[str, np.ndarray]]]]:
    """A 4 cm cube (yaw 0.3 rad) and a 5 cm sphere alone at (0.5, 0.1), reset."""
    envs = {
        "cube": SimEnv(task=SingleObjectTask("box", (0.02, 0.02, 0.02), (0.5, 0.1), 0.3),
                       realism="ideal"),
        "sphere": SimEnv(task=SingleObjectTask("sphere", (0.025,), (0.5, 0.1)), realism="ideal"),
    }
    out = {name: (env, env.reset(seed=0)[0]) for name, env in envs.items()}
    yield out
    for env in envs.values():
        env.close()


def test_camera_cloud_is_the_table_and_reprojects_to_its_pixels(sorting) -> None:
    _, obs, _ = sorting
    cloud = camera_cloud(obs, "shoulder", stride=2, keep_gripper=True)
    depth = camera_depth(obs, "shoulder")  # post-processed: on exact depth nearly the same
    assert len(cloud) == np.count_nonzero(depth[::2, ::2] > 0)
    assert np.mean((depth > 0) == (obs["shoulder_depth"] > 0)) > 0.999
    assert len(camera_cloud(obs, "shoulder", stride=2)) < len(cloud)  # it sees the fingers
    assert np.all(cloud.pixels % 2 == 0)
    np.testing.assert_array_equal(cloud.colors, obs["shoulder_rgb"][cloud.pixels[:, 1],
                                                                     cloud.pixels[:, 0]])
    on_table = np.all(np.abs(cloud.points[:, :2] - [0.5, 0.0]) < [0.1, 0.1], axis=1)
    heights = cloud.points[on_table, 2]
    low = heights[heights < 0.1]  # not the arm above
    assert np.mean(np.abs(low) < 0.002) > 0.5  # the table top (z = 0) between the props ...
    assert np.all(heights > -0.002)  # ... and nothing lies under it
    uv = project_to_image(cloud.points, obs["shoulder_intrinsics"], obs["shoulder_extrinsics"])
    np.testing.assert_allclose(uv, cloud.pixels + 0.5, atol=1e-3)


def test_camera_cloud_drops_the_robots_own_fingers_in_the_wrist_view(sorting) -> None:
    _, obs, _ = sorting
    with_fingers = camera_cloud(obs, "wrist", stride=2, keep_gripper=True)
    without = camera_cloud(obs, "wrist", stride=2)
    tcp = obs["tcp_pose"][:3]
    near_tcp = np.linalg.norm(with_fingers.points - tcp, axis=1) < 0.1
    assert np.count_nonzero(near_tcp) > 100  # the D405 sees the fingers
    assert not np.any(np.linalg.norm(without.points - tcp, axis=1) < 0.1)
    removed = remove_gripper(with_fingers, obs["tcp_pose"], float(obs["gripper_width"][0]))
    assert len(removed) == len(without)
    both = PointCloud.concatenate([without, camera_cloud(obs, "shoulder", stride=4)])
    assert len(both) == len(without) + len(camera_cloud(obs, "shoulder", stride=4))
    assert len(PointCloud.concatenate([])) == 0


@pytest.mark.parametrize("shape", ["cube", "sphere"])
def test_lift_pixel_lands_on_the_object_surface(cube_and_sphere, shape: str) -> None:
    env, obs = cube_and_sphere[shape]
    centre = env.scene_state.body_position(OBJECT_NAME)
    k, e = obs["shoulder_intrinsics"], obs["shoulder_extrinsics"]
    if shape == "cube":
        surface = centre + [0.0, 0.0, 0.02]  # the middle of the top face
    else:  # the sphere's point facing the camera
        towards = e[:3, 3] - centre
        surface = centre + 0.025 * towards / np.linalg.norm(towards)
    uv = project_to_image(surface[None], k, e)[0]
    lifted = lift_pixel(obs, "shoulder", uv)
    assert lifted is not None
    assert np.linalg.norm(lifted - surface) < 0.003


def test_lift_pixel_without_depth_is_none(sorting) -> None:
    _, obs, _ = sorting
    no_return = obs["shoulder_depth"] == 0  # beyond the Kinect's range: the far floor, the sky
    blank = np.lib.stride_tricks.sliding_window_view(no_return, (5, 5)).all(axis=(2, 3))
    assert blank.any()
    v, u = np.argwhere(blank)[0] + 2  # the centre of a 5 x 5 window without depth
    assert lift_pixel(obs, "shoulder", (u, v)) is None
    assert lift_pixel(obs, "shoulder", (u, v), window=1) is None
    assert lift_pixel(obs, "shoulder", (-5, 10)) is None
    assert lift_pixel(obs, "shoulder", (10_000, 10)) is None


def test_target_cloud_is_the_object_only(sorting) -> None:
    env, obs, names = sorting
    for name in names:
        point, box = oracle_detection(env, name, "shoulder")
        for kwargs in ({"point_uv": point, "box_xyxy": box}, {"point_uv": point}):
            cloud = target_cloud(obs, "shoulder", **kwargs)
            truth = body_box(env.scene_state, name)
            assert len(cloud) > 40, name
            inside = np.all((cloud.points > truth.low - 0.004)
                            & (cloud.points < truth.high + 0.004), axis=1)
            assert np.all(inside), (name, kwargs.keys())  # no table, no neighbour
            assert cloud.points[:, 2].min() > 0.004
            # the whole object, not its top (a can's lid) or a part of it
            assert np.ptp(cloud.points[:, 2]) > 0.6 * (truth.high[2] - truth.low[2]), name


def test_target_cloud_leaves_out_a_table_that_a_units_depth_error_raises(sorting) -> None:
    """A time-of-flight unit that measures 8 mm short (its datasheet allows 11 mm) sees the
    table a few millimetres high: the table is cut where it is seen, not at z = 0."""
    env, obs, names = sorting
    biased = {**obs, "shoulder_depth": np.where(obs["shoulder_depth"] > 0,
                                                obs["shoulder_depth"] - 0.008, 0.0)}
    level = seen_table_height(biased, "shoulder")
    assert 0.003 < level < 0.008
    assert seen_table_height(obs, "shoulder") == pytest.approx(0.0, abs=1e-6)
    for name in names:
        point, box = oracle_detection(env, name, "shoulder")
        cloud = target_cloud(biased, "shoulder", point_uv=point, box_xyxy=box)
        truth = body_box(env.scene_state, name)
        assert len(cloud) > 40, name
        # the object only, moved a little towards the camera along its rays
        assert np.all((cloud.points > truth.low - 0.012) & (cloud.points < truth.high + 0.012))
        assert cloud.points[:, 2].min() > level + 0.004, name


def test_box_cloud_keeps_the_box_pixels(sorting) -> None:
    _, obs, _ = sorting
    cloud = box_cloud(obs, "shoulder", (100.4, 50.0, 180.0, 120.6))
    assert len(cloud) > 0
    assert cloud.pixels[:, 0].min() >= 100 and cloud.pixels[:, 0].max() < 180
    assert cloud.pixels[:, 1].min() >= 50 and cloud.pixels[:, 1].max() <= 120
    assert len(box_cloud(obs, "shoulder", (700, 10, 800, 20))) == 0  # off the image


def test_cluster_near_separates_objects_and_remove_table(sorting) -> None:
    env, obs, names = sorting
    objects = remove_table(camera_cloud(obs, "shoulder", stride=2))
    assert np.all(objects.points[:, 2] > 0.004)
    first = env.scene_state.body_position(names[0])
    cluster = cluster_near(objects, first, radius=0.01)
    truth = body_box(env.scene_state, names[0])
    assert len(cluster) > 10
    assert np.all(np.all((cluster.points > truth.low - 0.006)
                         & (cluster.points < truth.high + 0.006), axis=1))
    assert len(cluster_near(PointCloud.empty(), first)) == 0


def test_fit_plane_finds_the_table(sorting) -> None:
    _, obs, _ = sorting
    cloud = camera_cloud(obs, "shoulder", stride=4)
    near = np.all(np.abs(cloud.points[:, :2] - [0.5, 0.0]) < 0.25, axis=1)
    plane, inliers = fit_plane(cloud.points[near], np.random.default_rng(0), max_tilt_deg=10)
    assert plane.normal[2] > 0.999
    assert abs(plane.offset) < 0.002
    assert inliers.mean() > 0.5
    empty_plane, none = fit_plane(np.zeros((2, 3)), np.random.default_rng(0))
    assert not none.any() and not np.any(empty_plane.normal)


def test_bad_camera_and_missing_target_are_clear_errors(sorting) -> None:
    _, obs, _ = sorting
    with pytest.raises(InvalidConfigError, match="shoulder, wrist"):
        camera_cloud(obs, "overhead")
    with pytest.raises(InvalidConfigError, match="point_uv"):
        target_cloud(obs, "shoulder")
    with pytest.raises(InvalidConfigError, match="stride"):
        camera_cloud(obs, "shoulder", stride=0)


def test_draw_detections_marks_the_image(sorting) -> None:
    _, obs, _ = sorting
    rgb = obs["shoulder_rgb"]
    drawn = draw_detections(rgb, points=[(320, 200)], boxes=[(100, 100, 200, 150)],
                            labels=["cube", "here"])
    assert drawn.shape == rgb.shape and drawn.dtype == np.uint8
    assert np.any(drawn[100, 100:200] != rgb[100, 100:200])
    assert np.any(drawn[200, 310:330] != rgb[200, 310:330])
    np.testing.assert_array_equal(drawn[300:, 500:], rgb[300:, 500:])


def test_render_grasp_shows_target_and_gripper(cube_and_sphere) -> None:
    env, obs = cube_and_sphere["cube"]
    centre = env.scene_state.body_position(OBJECT_NAME)
    uv = project_to_image(centre[None], obs["shoulder_intrinsics"],
                          obs["shoulder_extrinsics"])[0]
    target = target_cloud(obs, "shoulder", point_uv=uv)
    scene = camera_cloud(obs, "shoulder", stride=2)
    candidate = GraspCandidate(top_down_pose(centre + [0, 0, 0.006], 0.3), 0.04, 0.9,
                               {"tilt_deg": 0.0})
    image = render_grasp(target, scene, candidate, size=(320, 240))
    assert image.shape == (240, 320, 3) and image.dtype == np.uint8
    colours = image.reshape(-1, 3).astype(int)
    magenta = (colours[:, 0] > 150) & (colours[:, 2] > 90) & (colours[:, 1] < 100)
    orange = (colours[:, 0] > 200) & (np.abs(colours[:, 1] - 150) < 50) & (colours[:, 2] < 90)
    assert magenta.sum() > 200  # the target, tinted
    assert orange.sum() > 200  # the pads


def test_numbered_sheet_tiles_the_pictures_each_with_its_number() -> None:
    panels = [np.full((80, 100, 3), value, np.uint8) for value in (50, 100, 150, 200)]
    sheet = numbered_sheet(panels, columns=3)
    assert sheet.shape == (2 * 80 + 2, 3 * 100 + 2 * 2, 3) and sheet.dtype == np.uint8
    # each panel keeps its pixels away from its number, the fourth starts the second row
    assert np.all(sheet[75, 5] == 50) and np.all(sheet[75, 102 + 5] == 100)
    assert np.all(sheet[82 + 75, 5] == 200) and np.all(sheet[5, 5] == 50)
    # the numbers are drawn white on black at each panel's top right
    for top, left in ((0, 50), (0, 152), (0, 254), (82, 50)):
        corner = sheet[top:top + 50, left:left + 50]
        assert np.any(np.all(corner == 255, axis=-1)) and np.any(np.all(corner == 0, axis=-1))
    with pytest.raises(ValueError):
        numbered_sheet([])
