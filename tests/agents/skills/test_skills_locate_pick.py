"""``locate`` and ``pick`` against scenes built for them: a target the shoulder camera cannot
see is found by the wrist survey, a target that is nowhere is reported with every view tried,
and a pick whose first candidate the judge refuses still lifts its target."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
import pytest

from agentic_env.agents.agenticlab.modules import Detection, detect
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.oracle import SimOracle
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.perception import project_to_image
from agentic_env.agents.skills.io import RobotSkillIO
from agentic_env.agents.skills.locate import (
    MAX_LOOKS,
    clear_view_pose,
    hidden_share,
    locate,
    ray_on_table,
    wrist_point,
)
from agentic_env.agents.skills.pick import pick
from agentic_env.agents.skills.result import SkillCode
from agentic_env.contract.actions import move_to, top_down_pose
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.robot_io import EnvRobotIO

TARGET = "blue-cube-1"


@pytest.fixture
def sorting() -> Iterator[tuple[SimEnv, ModuleContext]]:
    env = SimEnv("sorting")
    env.reset(seed=0)
    oracle = SimOracle(env)
    yield env, ModuleContext(ModelRouter(oracle))
    oracle.close()
    env.close()


def _wrist_only(models: ModuleContext):
    """The oracle's detector with the shoulder camera blind to everything: the target is
    hidden from it (as by the arm, a drawer or a tall object)."""

    def detector(obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> Detection | None:
        if camera == "shoulder":
            return None
        return detect(models, obs, camera, name, name.replace("-", " "), part)

    return detector


def test_a_target_hidden_from_the_shoulder_camera_is_found_by_the_wrist_survey(
        sorting: tuple[SimEnv, ModuleContext]) -> None:
    env, models = sorting
    io = RobotSkillIO(EnvRobotIO(env))
    result = locate(io, _wrist_only(models), TARGET)
    assert result.code is SkillCode.OK, result.message
    target = result.data["target"]
    assert target.camera == "wrist" and len(target.cloud) >= 10
    truth = next(o.position for o in env.trial.objects if o.name == TARGET)
    centre = target.cloud.points.mean(axis=0)
    assert np.linalg.norm(centre[:2] - np.asarray(truth)[:2]) < 0.04
    looks = [e for e in io.events if e["kind"] == "primitive" and "survey" in e["why"]]
    assert 1 <= len(looks) <= MAX_LOOKS and result.data["tried"][0] == "the shoulder view"


def test_a_target_that_is_nowhere_is_not_found_after_a_bounded_search(
        sorting: tuple[SimEnv, ModuleContext]) -> None:
    env, _ = sorting
    io = RobotSkillIO(EnvRobotIO(env))
    result = locate(io, lambda *_: None, "unicorn-1")
    assert result.code is SkillCode.NOT_FOUND and not result.ok
    assert "unicorn-1 was not found in the shoulder view" in result.message
    assert "the wrist view from" in result.message
    assert io.actions <= MAX_LOOKS + 1 and len(result.data["tried"]) == io.actions + 1
    # without search only the arm goes home (it stands at the last survey look now)
    again = locate(io, lambda *_: None, "unicorn-1", search=False)
    assert again.data["tried"] == ["the shoulder view", "the shoulder view with the arm home"]


def test_parking_the_arm_hides_less_of_the_workspace_than_a_pose_in_the_way(
        sorting: tuple[SimEnv, ModuleContext]) -> None:
    env, _ = sorting
    robot = EnvRobotIO(env)
    obs, status = robot.act(move_to(top_down_pose(np.array([0.45, -0.25, 0.25]), 0.0)))
    assert status["ok"], status
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
    io = RobotSkillIO(EnvRobotIO(env))

    def detector(obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> Detection | None:
        return detect(models, obs, camera, name, name.replace("-", " "), part)

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
    io = RobotSkillIO(EnvRobotIO(env))
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
