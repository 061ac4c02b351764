"""``locate`` and ``pick`` against scenes built for them: a target the shoulder camera cannot
see is found by the wrist survey (which looks where that camera saw nothing: behind the arm,
into a pot), a target that is nowhere is reported with every view tried, and a pick whose
first candidate the judge refuses still lifts its target."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.perception import project_to_image, target_cloud
from agentic_env.agents.runtime import Episode, Limits
from agentic_env.agents.runtime.detector import detect
from agentic_env.agents.skills import Detection
from agentic_env.agents.skills.locate import (
    MAX_LOOKS,
    MIN_TARGET_POINTS,
    SURVEY_HEIGHT,
    clear_view_pose,
    hidden_share,
    locate,
    partial_view,
    ray_on_table,
    survey_poses,
    wrist_footprint,
    wrist_point,
)
from agentic_env.agents.skills.pick import pick
from agentic_env.agents.skills.result import SkillCode
from agentic_env.agents.skills.scene import SceneView
from agentic_env.contract.actions import move_to, top_down_pose
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.oracle import SimOracle

TARGET = "blue-cube-1"


def _detector(models: ModuleContext, blind: tuple[str, ...] = ()):
    """The oracle's detector; the cameras in ``blind`` see nothing (the target hidden from
    them, as by the arm, a drawer or a tall object)."""

    def detector(obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> Detection | None:
        if camera in blind:
            return None
        return detect(models, obs, camera, name, name.replace("-", " "), part)

    return detector


def _wrist_only(models: ModuleContext):
    """The oracle's detector with the shoulder camera blind to everything."""
    return _detector(models, blind=("shoulder",))


def _arm_in_the_way(env: SimEnv) -> tuple[EnvRobotIO, dict[str, np.ndarray]]:
    """The robot with its hand over the table's right half, 25 cm up, and what it sees."""
    robot = EnvRobotIO(env)
    obs, status = robot.act(move_to(top_down_pose(np.array([0.45, -0.25, 0.25]), 0.0)))
    assert status["ok"], status
    return robot, obs


def test_a_target_hidden_from_the_shoulder_camera_is_found_by_the_wrist_survey(
        sorting: tuple[SimEnv, ModuleContext]) -> None:
    env, models = sorting
    io = Episode(EnvRobotIO(env), Limits())
    result = locate(io, _wrist_only(models), TARGET)
    assert result.code is SkillCode.OK, result.message
    target = result.data["target"]
    assert target.camera == "wrist" and len(target.cloud) >= 10
    truth = next(o.position for o in env.trial.objects if o.name == TARGET)
    centre = target.cloud.points.mean(axis=0)
    assert np.linalg.norm(centre[:2] - np.asarray(truth)[:2]) < 0.04
    looks = [e for e in io.report.events if e["kind"] == "primitive" and "survey" in e["why"]]
    assert 1 <= len(looks) <= MAX_LOOKS and result.data["tried"][0] == "the shoulder view"


def test_a_target_that_is_nowhere_is_not_found_after_a_bounded_search(
        sorting: tuple[SimEnv, ModuleContext]) -> None:
    env, _ = sorting
    io = Episode(EnvRobotIO(env), Limits())
    result = locate(io, lambda *_: None, "unicorn-1")
    assert result.code is SkillCode.NOT_FOUND and not result.ok
    assert "unicorn-1 was not found in the shoulder view" in result.message
    assert "the wrist view from" in result.message
    assert io.report.actions <= MAX_LOOKS + 1 and len(result.data["tried"]) == io.report.actions + 1
    # without search only the arm goes home (it stands at the last survey look now)
    again = locate(io, lambda *_: None, "unicorn-1", search=False)
    assert again.data["tried"] == ["the shoulder view", "the shoulder view with the arm home"]


def test_parking_the_arm_hides_less_of_the_workspace_than_a_pose_in_the_way(
        sorting: tuple[SimEnv, ModuleContext]) -> None:
    robot, obs = _arm_in_the_way(sorting[0])
    workspace = robot.workspace
    in_the_way = hidden_share(obs, obs["joint_positions"], workspace)
    parking = clear_view_pose(obs, workspace)
    assert parking is not None
    obs, status = robot.act(move_to(parking))
    assert status["ok"], status
    assert hidden_share(obs, obs["joint_positions"], workspace) < in_the_way


def test_pick_locates_grasps_and_measures_the_held_object(
        sorting: tuple[SimEnv, ModuleContext]) -> None:
    env, models = sorting
    io = Episode(EnvRobotIO(env), Limits())
    detector = _detector(models)
    judged: list[str] = []

    def judge(_image: np.ndarray, _candidate: object, target: object) -> tuple[bool, str]:
        judged.append(target.name)
        return len(judged) > 1, "the first candidate is refused"  # refuse one, then accept

    start_z = env.scene_state.body_position(TARGET)[2]
    result = pick(io, detector, TARGET, np.random.default_rng(0), judge=judge)
    assert result.ok, result.message
    assert judged[:2] == [TARGET, TARGET] and result.data["held"].name == TARGET
    assert 0.0 < result.data["held"].radius < 0.06  # a 4 cm cube, seen from the shoulder
    assert env.scene_state.body_position(TARGET)[2] > start_z + 0.05  # lifted (privileged)


def test_the_wrist_looks_straight_down_at_a_point_and_sees_the_target_there(
        sorting: tuple[SimEnv, ModuleContext]) -> None:
    env, models = sorting
    io = Episode(EnvRobotIO(env), Limits())
    truth = np.asarray(next(o.position for o in env.trial.objects if o.name == TARGET))
    guess = truth + np.array([0.02, -0.015, 0.0])  # a slanted view's estimate, a bit off
    seen = wrist_point(io, _wrist_only(models), TARGET, guess)
    assert seen is not None and np.linalg.norm(seen[:2] - truth[:2]) < 0.015
    tcp = np.asarray(io.obs["tcp_pose"][:3])
    assert tcp[2] > guess[2] + 0.1  # looked from above
    assert wrist_point(io, lambda *_: None, TARGET, guess) is None  # nothing seen there


def test_the_ray_of_a_pixel_meets_the_table_where_the_point_stands(
        sorting: tuple[SimEnv, ModuleContext]) -> None:
    env, _models = sorting
    obs = EnvRobotIO(env).observe()
    for point in ([0.5, 0.1, 0.03], [0.35, -0.3, 0.03], [0.7, 0.35, 0.03]):
        u, v = project_to_image(np.array([point]), obs["shoulder_intrinsics"],
                                obs["shoulder_extrinsics"])[0]
        spot = ray_on_table(obs, "shoulder", (int(u), int(v)))
        assert spot is not None and np.linalg.norm(spot - point[:2]) < 0.005


def test_the_shoulder_camera_does_not_see_the_table_behind_the_arm_and_the_survey_looks_there(
        sorting: tuple[SimEnv, ModuleContext]) -> None:
    robot, obs = _arm_in_the_way(sorting[0])
    view = SceneView(obs)
    # where the shoulder camera's ray through the hand meets the table: behind the hand
    camera = np.asarray(obs["shoulder_extrinsics"], float)[:3, 3]
    hand = np.array([0.45, -0.25, 0.3])
    under_hand = (camera + (0.02 - camera[2]) / (hand[2] - camera[2]) * (hand - camera))[None]
    open_table = np.array([[0.45, 0.25, 0.02]])
    assert view.unseen(under_hand)[0] and not view.unseen(open_table)[0]
    looks = survey_poses(view, obs, robot.workspace)
    assert 1 <= len(looks) <= MAX_LOOKS
    # the first look is the one that sees most of what the shoulder camera missed: the
    # table hidden by the hand lies inside its footprint
    reach = wrist_footprint(obs, SURVEY_HEIGHT)
    camera_xy = [look[:2, 3] for look in looks]
    assert any(np.linalg.norm(xy - under_hand[0, :2]) < reach for xy in camera_xy[:2])


def test_an_object_hidden_inside_a_pot_is_found_by_looking_into_it() -> None:
    # kitchen trial 7308: the chicken leg lies low in the pot, whose wall hides it from the
    # shoulder camera whatever the arm does
    env = SimEnv("kitchen", realism="ideal")
    env.reset(seed=7308)
    oracle = SimOracle(env)
    try:
        models = ModuleContext(ModelRouter(oracle))
        io = Episode(EnvRobotIO(env), Limits())
        detector = _detector(models)
        assert detector(io.obs, "shoulder", "chicken-leg-1", "object") is None
        result = locate(io, detector, "chicken-leg-1")
        assert result.code is SkillCode.OK, result.message
        assert result.data["target"].camera == "wrist"
        truth = env.scene_state.body_position("chicken-leg-1")
        centre = result.data["target"].cloud.points.mean(axis=0)
        assert np.linalg.norm(centre[:2] - truth[:2]) < 0.05
    finally:
        oracle.close()
        env.close()


def test_a_glimpse_at_the_wrist_views_edge_counts_as_partial(sorting_env: SimEnv) -> None:
    obs = EnvRobotIO(sorting_env).observe()
    height, width = np.asarray(obs["wrist_rgb"]).shape[:2]
    middle = Detection((width // 2, height // 2), (width // 2 - 30, height // 2 - 30,
                                                   width // 2 + 30, height // 2 + 30))
    edge = Detection((width - 2, height // 2), (width - 40, height // 2 - 30, width - 1,
                                                height // 2 + 30))
    assert partial_view(obs, "wrist", edge)
    assert partial_view(obs, "shoulder", edge) == (
        len(target_cloud(obs, "shoulder", edge.point, edge.box)) < MIN_TARGET_POINTS)
    assert not partial_view(obs, "wrist", middle) or len(target_cloud(
        obs, "wrist", middle.point, middle.box)) < MIN_TARGET_POINTS
