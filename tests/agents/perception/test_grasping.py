"""Grasp candidates on real sim observations, executed with the pick primitive.

The tests read privileged state (body positions, the bin's walls) only to check the results.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.single_object_task import BIN_NAME, OBJECT_NAME, SingleObjectTask

from agentic_env.agents.perception import (
    PointCloud,
    camera_cloud,
    grasp_candidates,
    grasp_collides,
    gripper_geometry,
    project_to_image,
    target_cloud,
)
from agentic_env.agents.perception.grasping import OPEN_MARGIN
from agentic_env.bench.grasp import oracle_detection
from agentic_env.contract.actions import move_to, pick, top_down_pose
from agentic_env.envs.sim_env import SimEnv
from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE, TCP_TO_FINGERTIP
from agentic_env.sim.state import body_box

SHAPES = {
    "cube": ("box", (0.02, 0.02, 0.02)),
    "cylinder": ("cylinder", (0.025, 0.04)),
    "sphere": ("sphere", (0.025,)),
}


def _clouds(env: SimEnv, obs: dict[str, np.ndarray]) -> tuple[PointCloud, PointCloud]:
    """The object's cloud (pointed at the middle of its top) and the scene, shoulder camera."""
    top = body_box(env.scene_state, OBJECT_NAME)
    point = np.array([*(top.low[:2] + top.high[:2]) / 2, top.high[2] - 0.003])
    uv = project_to_image(point[None], obs["shoulder_intrinsics"],
                          obs["shoulder_extrinsics"])[0]
    return target_cloud(obs, "shoulder", point_uv=uv), camera_cloud(obs, "shoulder", stride=2)


def test_gripper_geometry_is_the_model() -> None:
    gripper = gripper_geometry()
    assert gripper.max_opening == pytest.approx(GRIPPER_WIDTH_RANGE[1])
    assert gripper.fingertip_depth == pytest.approx(TCP_TO_FINGERTIP)
    assert gripper.pad_length == pytest.approx(0.070)
    assert gripper.palm_depth == pytest.approx(-0.062)
    centres, halves = gripper.boxes(0.04)
    pads = centres[:gripper.n_finger_boxes]
    inner = np.abs(pads[:, 1]) - halves[:gripper.n_finger_boxes, 1]
    assert inner[[1, 2, 4, 5]] == pytest.approx(0.02)  # the pad faces are 40 mm apart


@pytest.mark.parametrize("shape", list(SHAPES))
def test_top_candidate_lifts_the_object(make_sim_env, shape: str) -> None:
    kind, size = SHAPES[shape]
    env = make_sim_env(task=SingleObjectTask(kind, size, (0.5, 0.1), yaw=0.3))
    obs, _ = env.reset(seed=0)
    target, scene = _clouds(env, obs)
    candidates = grasp_candidates(target, scene, rng=np.random.default_rng(0))
    assert candidates
    best = candidates[0]
    start = env.scene_state.body_position(OBJECT_NAME)
    assert np.linalg.norm(best.pose[:2, 3] - start[:2]) < 0.008  # centred on the object
    _, _, _, _, info = env.step(pick(best.pose, best.width))
    assert info["primitive"]["ok"], info["primitive"]
    assert env.scene_state.body_position(OBJECT_NAME)[2] > start[2] + 0.08


def test_cube_is_grasped_across_its_faces(make_sim_env) -> None:
    env = make_sim_env(task=SingleObjectTask("box", (0.02, 0.02, 0.02), (0.5, 0.1), yaw=0.3))
    obs, _ = env.reset(seed=0)
    target, scene = _clouds(env, obs)
    best = grasp_candidates(target, scene, rng=np.random.default_rng(1))[0]
    closing = best.pose[:3, 1]
    off_face = np.rad2deg(np.arctan2(closing[1], closing[0]) - 0.3) % 90.0
    assert min(off_face, 90.0 - off_face) < 10.0
    assert best.width == pytest.approx(0.04, abs=0.004)


def test_candidates_are_well_formed_and_ranked(make_sim_env) -> None:
    env = make_sim_env(task=SingleObjectTask("cylinder", (0.025, 0.04), (0.5, 0.1)))
    obs, _ = env.reset(seed=0)
    target, scene = _clouds(env, obs)
    candidates = grasp_candidates(target, scene, rng=np.random.default_rng(0), top_k=8,
                                  max_tilt_deg=20.0)
    assert 1 < len(candidates) <= 8
    scores = [c.score for c in candidates]
    assert scores == sorted(scores, reverse=True)
    for c in candidates:
        rotation = c.pose[:3, :3]
        np.testing.assert_allclose(rotation @ rotation.T, np.eye(3), atol=1e-9)
        assert np.linalg.det(rotation) == pytest.approx(1.0)
        tilt = np.rad2deg(np.arccos(-rotation[2, 2]))
        assert tilt <= 20.0 + 1e-6
        assert abs(c.details["tilt_deg"] - tilt) < 1e-6
        assert 0.04 < c.width < GRIPPER_WIDTH_RANGE[1]
        # fingertips above the table, the object's middle between the pads
        assert c.pose[2, 3] > 0.026 - 1e-6 and c.pose[2, 3] <= 0.08
        assert set(c.details) >= {"antipodal", "centring", "clearance", "upright", "narrow"}
        assert all(0.0 <= c.details[k] <= 1.0 for k in ("antipodal", "centring", "clearance"))
    again = grasp_candidates(target, scene, rng=np.random.default_rng(0), top_k=8,
                             max_tilt_deg=20.0)
    np.testing.assert_array_equal(candidates[0].pose, again[0].pose)


def _pads_hit_wall(pose: np.ndarray, width: float, wall_low: np.ndarray,
                   wall_high: np.ndarray) -> bool:
    """Whether a point grid of the finger boxes (opened as the pick primitive opens them)
    enters the wall's box."""
    gripper = gripper_geometry()
    centres, halves = gripper.boxes(min(width + OPEN_MARGIN, gripper.max_opening))
    grid = np.stack(np.meshgrid(*[np.linspace(-1, 1, 5)] * 3), -1).reshape(-1, 3)
    for centre, half in zip(centres[:gripper.n_finger_boxes],
                            halves[:gripper.n_finger_boxes], strict=True):
        points = (centre + grid * half) @ pose[:3, :3].T + pose[:3, 3]
        if np.any(np.all((points > wall_low) & (points < wall_high), axis=1)):
            return True
    return False


def test_grasps_into_a_neighbour_are_rejected(make_sim_env) -> None:
    # a cube 12 mm in front of the outer face of a bin wall that is taller than the cube
    env = make_sim_env(task=SingleObjectTask("box", (0.02, 0.02, 0.02), (0.5, 0.06),
                                             bin_position=(0.5, 0.22)))
    obs, _ = env.reset(seed=0)
    target, scene = _clouds(env, obs)
    wall = body_box(env.scene_state, BIN_NAME)
    wall_low = np.array([wall.low[0], wall.low[1], 0.0])
    wall_high = np.array([wall.high[0], wall.low[1] + 0.008, wall.high[2]])
    assert wall_low[1] == pytest.approx(0.092, abs=1e-3)
    centre = env.scene_state.body_position(OBJECT_NAME)
    across_wall = top_down_pose(centre + [0, 0, 0.006], yaw=0.0)  # closes along y
    along_wall = top_down_pose(centre + [0, 0, 0.006], yaw=np.pi / 2)  # closes along x
    assert _pads_hit_wall(across_wall, 0.04, wall_low, wall_high)
    assert grasp_collides(across_wall, 0.04, target, scene)
    assert not grasp_collides(along_wall, 0.04, target, scene)
    candidates = grasp_candidates(target, scene, rng=np.random.default_rng(0), top_k=20)
    assert candidates
    for c in candidates:
        assert not _pads_hit_wall(c.pose, c.width, wall_low, wall_high)
    best = candidates[0]
    _, _, _, _, info = env.step(pick(best.pose, best.width))
    assert info["primitive"]["ok"], info["primitive"]
    assert env.scene_state.body_position(OBJECT_NAME)[2] > centre[2] + 0.08


def test_empty_and_degenerate_targets_give_no_candidates(make_sim_env) -> None:
    env = make_sim_env(task=SingleObjectTask("box", (0.02, 0.02, 0.02), (0.5, 0.1)))
    obs, _ = env.reset(seed=0)
    target, scene = _clouds(env, obs)
    rng = np.random.default_rng(0)
    assert grasp_candidates(PointCloud.empty(), scene, rng=rng) == []
    assert grasp_candidates(target.select(np.arange(3)), scene, rng=rng) == []
    assert grasp_candidates(target, PointCloud.empty(), rng=rng)  # nothing to collide with
    wide = scene.select(np.abs(scene.points[:, 2]) < 0.002)  # a 1 m patch of table top
    assert grasp_candidates(wide, scene, rng=rng) == []  # nothing fits between the pads
    assert grasp_collides(top_down_pose(np.array([0.5, 0.1, 0.03])), 0.04,
                          PointCloud.empty(), scene)


def test_object_in_a_bin_is_segmented_from_the_bin_and_lifted(make_sim_env) -> None:
    env = make_sim_env(task=SingleObjectTask("box", (0.02, 0.02, 0.02), (0.5, 0.0), yaw=0.4,
                                             bin_position=(0.5, 0.0)))
    obs, _ = env.reset(seed=0)
    target, scene = _clouds(env, obs)
    truth = body_box(env.scene_state, OBJECT_NAME)
    assert len(target) > 100
    assert np.all(np.all((target.points > truth.low - 0.004)
                         & (target.points < truth.high + 0.004), axis=1))
    best = grasp_candidates(target, scene, rng=np.random.default_rng(0))[0]
    assert best.pose[2, 3] == pytest.approx(truth.low[2] + 0.026, abs=0.004)  # the bin floor
    start = env.scene_state.body_position(OBJECT_NAME)
    _, _, _, _, info = env.step(pick(best.pose, best.width))
    assert info["primitive"]["ok"], info["primitive"]
    assert env.scene_state.body_position(OBJECT_NAME)[2] > start[2] + 0.08


def test_wrist_view_candidate_lifts_the_object(make_sim_env) -> None:
    env = make_sim_env(task=SingleObjectTask("cylinder", (0.02, 0.035), (0.55, -0.05)))
    env.reset(seed=0)
    top = body_box(env.scene_state, OBJECT_NAME)
    above = np.array([*(top.low[:2] + top.high[:2]) / 2, top.high[2] + 0.22])
    obs, _, _, _, info = env.step(move_to(top_down_pose(above, 0.4)))
    assert info["primitive"]["ok"]
    point = np.array([*(top.low[:2] + top.high[:2]) / 2, top.high[2]])
    uv = project_to_image(point[None], obs["wrist_intrinsics"], obs["wrist_extrinsics"])[0]
    target = target_cloud(obs, "wrist", point_uv=uv)
    scene = camera_cloud(obs, "wrist", stride=2)
    assert np.all(target.points[:, 2] > 0.004) and len(target) > 200
    best = grasp_candidates(target, scene, rng=np.random.default_rng(0))[0]
    assert best.width == pytest.approx(0.04, abs=0.005)
    start = env.scene_state.body_position(OBJECT_NAME)
    _, _, _, _, info = env.step(pick(best.pose, best.width))
    assert info["primitive"]["ok"], info["primitive"]
    assert env.scene_state.body_position(OBJECT_NAME)[2] > start[2] + 0.08


def test_top_block_of_a_stack_is_picked_alone() -> None:
    env = SimEnv("stacking", realism="ideal")
    try:
        obs, info = env.reset(seed=5)
        names = [o["name"] for o in info["trial"]["objects"] if o["position"][2] > -0.01]
        top, below = "orange-cube-1", "purple-cube-1"  # seed 5 stacks orange on purple
        lower_top = body_box(env.scene_state, below).high[2]
        assert body_box(env.scene_state, top).low[2] > lower_top - 0.005
        point, box = oracle_detection(env, top, "shoulder")
        target = target_cloud(obs, "shoulder", point_uv=point, box_xyxy=box)
        truth = body_box(env.scene_state, top)
        assert np.all(target.points[:, 2] > truth.low[2] - 0.004)  # not the block below
        best = grasp_candidates(target, camera_cloud(obs, "shoulder", stride=2),
                                rng=np.random.default_rng(0))[0]
        start = {n: env.scene_state.body_position(n)[2] for n in names}
        _, _, _, _, info = env.step(pick(best.pose, best.width))
        assert info["primitive"]["ok"], info["primitive"]
        assert env.scene_state.body_position(top)[2] > start[top] + 0.08
        assert env.scene_state.body_position(below)[2] == pytest.approx(start[below], abs=0.005)
    finally:
        env.close()
