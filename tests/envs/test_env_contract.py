"""The Gymnasium contract of the sim env: API checks, determinism, pickling, vector envs,
malformed input, divergence handling and rendering."""

from __future__ import annotations

import functools
import pickle
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from support.envs import EXPECTED_CHECKER_ADVICE, TABLETOP_ID, make_registered

from agentic_env.contract.actions import move_to, primitive, top_down_pose
from agentic_env.contract.spaces import CONTROL_MODES, PRIMITIVES, Workspace
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidActionError, InvalidConfigError
from agentic_env.experts import expert_actions
from agentic_env.registry import ENV_IDS
from agentic_env.tasks import TASKS
from agentic_env.visualize import resize_nearest


def assert_observations_equal(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert np.array_equal(a[key], b[key]), f"observation {key!r} differs"


def hold_action(observation: dict[str, np.ndarray], control_mode: str) -> np.ndarray:
    """An action that keeps the arm where it is, for a low-level mode."""
    if control_mode == "joint_position":
        return np.concatenate([observation["joint_positions"], observation["gripper_width"]])
    return np.array([0, 0, 0, 0, 0, 0, 1], dtype=np.float32)


def run_check_env(env_id: str, **kwargs: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for pattern in EXPECTED_CHECKER_ADVICE:
            warnings.filterwarnings("ignore", message=pattern, category=UserWarning)
        env = gym.make(env_id, **kwargs).unwrapped
        try:
            check_env(env, skip_render_check=False)
        finally:
            env.close()


@pytest.fixture(scope="module")
def primitive_env() -> Iterator[SimEnv]:
    env = SimEnv(control_mode="primitive", realism="ideal")
    yield env
    env.close()


# -- Gymnasium API ------------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_check_env_for_every_registered_id(env_id: str) -> None:
    run_check_env(env_id)


@pytest.mark.parametrize("control_mode", ["ee_delta", "joint_position"])
def test_check_env_for_low_level_modes(control_mode: str) -> None:
    run_check_env(TABLETOP_ID, control_mode=control_mode)


def test_registered_ids_run_their_task() -> None:
    for env_id, task in ENV_IDS.items():
        spec = gym.spec(env_id)
        assert spec.kwargs["task"] == task
        assert spec.entry_point == "agentic_env.envs.sim_env:SimEnv"


@pytest.mark.parametrize("control_mode", CONTROL_MODES)
def test_observations_match_the_observation_space(
    make_sim_env: Callable[..., SimEnv], control_mode: str
) -> None:
    env = make_sim_env(control_mode=control_mode)
    observation, _ = env.reset(seed=0)
    if control_mode == "primitive":
        action: Any = primitive("open_gripper")
    else:
        action = hold_action(observation, control_mode)
    step_observation, *_ = env.step(action)
    for obs in (observation, step_observation):
        assert set(obs) == set(env.observation_space.spaces)
        for key, space in env.observation_space.spaces.items():
            assert obs[key].dtype == space.dtype, key
            assert obs[key].shape == space.shape, key
        assert env.observation_space.contains(obs)


# -- determinism and pickling -----------------------------------------------------------------


def test_same_seed_and_expert_actions_give_identical_episodes(
    make_sim_env: Callable[..., SimEnv],
) -> None:
    env_a, env_b = make_sim_env(), make_sim_env()
    obs_a, info_a = env_a.reset(seed=11)
    obs_b, info_b = env_b.reset(seed=11)
    assert_observations_equal(obs_a, obs_b)
    assert info_a == info_b
    steps = 0
    for action in expert_actions(env_a.task, env_a.scene_state):
        obs_a, reward_a, terminated_a, truncated_a, info_a = env_a.step(action)
        obs_b, reward_b, terminated_b, truncated_b, info_b = env_b.step(action)
        steps += 1
        assert_observations_equal(obs_a, obs_b)
        assert (reward_a, terminated_a, truncated_a) == (reward_b, terminated_b, truncated_b)
        assert info_a == info_b
        if terminated_a or truncated_a:
            break
    assert steps == 2 * len(env_a.task.cubes)  # a pick and a place per cube
    assert terminated_a and info_a["success"], "the scripted expert should solve the episode"


def test_pickle_round_trip_mid_episode_primitive(make_sim_env: Callable[..., SimEnv]) -> None:
    env = make_sim_env()
    env.reset(seed=4)
    expert = expert_actions(env.task, env.scene_state)
    _, _, _, _, info = env.step(next(expert))  # pick: the cube is now in the gripper
    assert info["primitive"]["ok"], info["primitive"]
    clone = pickle.loads(pickle.dumps(env))
    try:
        action = next(expert)  # place
        obs_env, reward_env, term_env, trunc_env, info_env = env.step(action)
        obs_clone, reward_clone, term_clone, trunc_clone, info_clone = clone.step(action)
        assert info_env["primitive"]["ok"]
        assert_observations_equal(obs_env, obs_clone)
        assert (reward_env, term_env, trunc_env) == (reward_clone, term_clone, trunc_clone)
        assert info_env == info_clone
    finally:
        clone.close()


def test_pickle_round_trip_mid_motion_joint_position(
    make_sim_env: Callable[..., SimEnv],
) -> None:
    env = make_sim_env(control_mode="joint_position")
    observation, _ = env.reset(seed=4)
    target = hold_action(observation, "joint_position")
    target[[0, 2]] += 0.4
    target[6] = 0.0
    for _ in range(2):  # mid-move: servo references are ramping, joints are moving
        env.step(target)
    assert np.abs(env.robot.joint_velocities()).max() > 0.1
    clone = pickle.loads(pickle.dumps(env))
    try:
        for _ in range(5):
            obs_env, *_ = env.step(target)
            obs_clone, *_ = clone.step(target)
            assert_observations_equal(obs_env, obs_clone)
    finally:
        clone.close()


def test_async_vector_env_with_spawned_workers() -> None:
    # A spawned worker is a fresh interpreter that has not imported agentic_env (pytest, not
    # a user script that imports it, is the main module), so the factory registers the ids
    # before gym.make; it is pickled by reference to conftest.
    make = functools.partial(make_registered, TABLETOP_ID, control_mode="joint_position")
    vector_env = gym.vector.AsyncVectorEnv([make] * 2, context="spawn")
    try:
        observations, _ = vector_env.reset(seed=[1, 2])
        assert observations["joint_positions"].shape == (2, 6)
        assert observations["shoulder_rgb"].shape[0] == 2
        # different seeds, different layouts
        assert not np.array_equal(observations["shoulder_rgb"][0], observations["shoulder_rgb"][1])
        actions = np.concatenate(
            [observations["joint_positions"], observations["gripper_width"]], axis=1
        )
        for _ in range(3):
            observations, rewards, terminated, truncated, _ = vector_env.step(actions)
        assert rewards.shape == (2,) and not terminated.any() and not truncated.any()
        np.testing.assert_allclose(observations["joint_positions"], actions[:, :6], atol=1e-3)
    finally:
        vector_env.close()


# -- malformed input ----------------------------------------------------------------------------


def test_unknown_primitive_id_is_rejected(primitive_env: SimEnv) -> None:
    primitive_env.reset(seed=0)
    action = primitive("home")
    action["primitive"] = 99
    time = primitive_env.data.time
    with pytest.raises(InvalidActionError) as error:
        primitive_env.step(action)
    for name in PRIMITIVES:
        assert name in str(error.value)
    assert primitive_env.data.time == time


def test_wrong_pose_shape_is_rejected(primitive_env: SimEnv) -> None:
    primitive_env.reset(seed=0)
    action = move_to(top_down_pose(np.array([0.4, 0.0, 0.3])))
    action["pose"] = action["pose"][:6]
    time = primitive_env.data.time
    with pytest.raises(InvalidActionError, match=re.escape("(7,)")) as error:
        primitive_env.step(action)
    assert "(6,)" in str(error.value)
    assert primitive_env.data.time == time


def test_unknown_primitive_name_lists_the_valid_names() -> None:
    with pytest.raises(InvalidActionError) as error:
        primitive("jump")
    for name in PRIMITIVES:
        assert name in str(error.value)


def nan_pose_action() -> dict[str, Any]:
    action = move_to(top_down_pose(np.array([0.4, 0.0, 0.3])))
    action["pose"][1] = np.nan
    return action


def outside_workspace_action() -> dict[str, Any]:
    return move_to(top_down_pose(np.array([1.5, 0.0, 0.3])))


def test_nan_pose_fails_with_invalid_parameters(primitive_env: SimEnv) -> None:
    primitive_env.reset(seed=0)
    _, reward, terminated, truncated, info = primitive_env.step(nan_pose_action())
    outcome = info["primitive"]
    assert outcome["ok"] is False
    assert outcome["reason"] == "invalid_parameters"
    assert "finite" in outcome["message"]
    assert (reward, terminated, truncated) == (0.0, False, False)


def test_pose_outside_the_workspace_names_the_limits(primitive_env: SimEnv) -> None:
    primitive_env.reset(seed=0)
    joints = primitive_env.robot.joint_positions()
    _, _, _, _, info = primitive_env.step(outside_workspace_action())
    outcome = info["primitive"]
    assert outcome["ok"] is False
    assert outcome["reason"] == "invalid_parameters"
    assert Workspace().describe() in outcome["message"]
    assert "x in [0.15, 0.95]" in outcome["message"]
    np.testing.assert_allclose(primitive_env.robot.joint_positions(), joints, atol=1e-4)


@pytest.mark.parametrize("make_action", [nan_pose_action, outside_workspace_action],
                         ids=["nan_pose", "outside_workspace"])
def test_invalid_parameters_do_not_advance_the_simulation(
    primitive_env: SimEnv, make_action: Callable[[], dict[str, Any]]
) -> None:
    primitive_env.reset(seed=0)
    time = primitive_env.data.time
    _, _, _, _, info = primitive_env.step(make_action())
    assert info["primitive"]["reason"] == "invalid_parameters"
    assert primitive_env.data.time == time
    assert info["primitive"]["sim_duration"] == 0.0


@pytest.mark.parametrize("control_mode", ["joint_position", "ee_delta"])
@pytest.mark.parametrize(
    "bad_action",
    [np.full(7, np.nan), np.array([0, 0, 0, np.inf, 0, 0, 0.0]), np.zeros(6), np.zeros((7, 1)),
     np.zeros(8)],
    ids=["nan", "inf", "shape_6", "shape_7x1", "shape_8"],
)
def test_malformed_low_level_actions_are_rejected_before_physics(
    make_sim_env: Callable[..., SimEnv], control_mode: str, bad_action: np.ndarray
) -> None:
    env = make_sim_env(control_mode=control_mode)
    env.reset(seed=0)
    time, qpos = env.data.time, env.data.qpos.copy()
    with pytest.raises(InvalidActionError, match=control_mode):
        env.step(bad_action)
    assert env.data.time == time
    np.testing.assert_array_equal(env.data.qpos, qpos)


def test_unknown_control_mode_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidConfigError) as error:
        SimEnv(control_mode="torque", realism="ideal")
    for mode in CONTROL_MODES:
        assert mode in str(error.value)
    with pytest.raises(InvalidConfigError):
        gym.make(TABLETOP_ID, control_mode="torque")


def test_unknown_task_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidConfigError) as error:
        SimEnv(task="juggling", realism="ideal")
    assert "juggling" in str(error.value)
    for task in TASKS:
        assert task in str(error.value)


# -- divergence -------------------------------------------------------------------------------


@pytest.mark.parametrize("control_mode", ["joint_position", "ee_delta"])
def test_divergence_terminates_and_reset_recovers(
    make_sim_env: Callable[..., SimEnv],
    control_mode: str,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # MuJoCo appends its warnings to ./MUJOCO_LOG.TXT
    env = make_sim_env(control_mode=control_mode)
    observation, info = env.reset(seed=0)
    assert info["sim_diverged"] is False
    cube = env.task.cubes[0].name
    dof = env.model.jnt_dofadr[env.model.body(cube).jntadr[0]]
    env.data.qvel[dof : dof + 6] = 1e12
    observation, reward, terminated, truncated, info = env.step(
        hold_action(observation, control_mode))
    assert terminated is True and truncated is False
    assert info["sim_diverged"] is True
    assert reward == 0.0
    assert env.observation_space.contains(observation)  # a valid (reset) state comes back
    observation, info = env.reset(seed=1)
    assert info["sim_diverged"] is False
    assert env.observation_space.contains(observation)
    assert np.all(np.isfinite(env.data.qpos)) and np.all(np.isfinite(env.data.qvel))
    _, _, terminated, _, info = env.step(hold_action(observation, control_mode))
    assert terminated is False and info["sim_diverged"] is False


# -- rendering ----------------------------------------------------------------------------------


def test_render_rgb_array_composite(make_sim_env: Callable[..., SimEnv]) -> None:
    env = make_sim_env(render_mode="rgb_array")
    observation, _ = env.reset(seed=0)
    for _ in range(2):
        frame = env.render()
        assert isinstance(frame, np.ndarray)
        assert frame.shape == (360, 960, 3) and frame.dtype == np.uint8
        # the right-hand column shows the last observation's camera images at 320x180
        for rows, camera in ((slice(0, 180), "shoulder"), (slice(180, 360), "wrist")):
            expected = resize_nearest(observation[f"{camera}_rgb"], 320, 180)
            np.testing.assert_array_equal(frame[rows, 640:], expected)
        assert frame[:, :640].std() > 1.0  # the overview is not blank
        observation, *_ = env.step(primitive("close_gripper"))


def test_render_without_render_mode_returns_none(make_sim_env: Callable[..., SimEnv]) -> None:
    env = make_sim_env()
    env.reset(seed=0)
    assert env.render() is None


def test_ee_delta_moves_the_tcp_along_the_commanded_axis(
    make_sim_env: Callable[..., SimEnv],
) -> None:
    """+x at full scale for 10 periods moves the TCP 0.25 m/s x 0.5 s = 12.5 cm along base x."""
    env = make_sim_env(control_mode="ee_delta")
    observation, _ = env.reset(seed=0)
    start = observation["tcp_pose"].copy()
    action = np.array([1, 0, 0, 0, 0, 0, 1], dtype=np.float32)
    for _ in range(10):
        observation, *_ = env.step(action)
    for _ in range(10):  # let the servos settle on the last target
        observation, *_ = env.step(np.array([0, 0, 0, 0, 0, 0, 1], dtype=np.float32))
    moved = observation["tcp_pose"][:3] - start[:3]
    np.testing.assert_allclose(moved, [0.125, 0.0, 0.0], atol=2e-3)
    np.testing.assert_allclose(np.abs(observation["tcp_pose"][3:]), np.abs(start[3:]), atol=1e-2)
