"""Every benchmark task in every setting: the Gymnasium contract, trial specs, instructions."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from support.envs import EXPECTED_CHECKER_ADVICE

from agentic_env.contract.trial import TrialSpec
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.registry import ENV_IDS
from agentic_env.sim.settings import available_settings
from agentic_env.tasks.base import SymbolicTask
from agentic_env.tasks.instructions import CATEGORIES

BENCHMARK_TASKS = [task for task in ENV_IDS.values() if task != "tabletop"]
SMALL = SceneConfig(shoulder_camera=azure_kinect_color(64, 36),
                    wrist_camera=realsense_d405(64, 36))


def _small_env(make_sim_env: Callable[..., SimEnv], task: str, setting: str = "lab") -> SimEnv:
    return make_sim_env(task=task, setting=setting, scene=SMALL)


@pytest.mark.parametrize("setting", available_settings())
@pytest.mark.parametrize("task", BENCHMARK_TASKS)
def test_every_task_and_setting_passes_check_env(
    make_sim_env: Callable[..., SimEnv], task: str, setting: str
) -> None:
    env = _small_env(make_sim_env, task, setting)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for pattern in EXPECTED_CHECKER_ADVICE:
            warnings.filterwarnings("ignore", message=pattern, category=UserWarning)
        check_env(env, skip_render_check=True)
    _, info = env.reset(seed=1)
    assert info["trial"]["setting"] == setting and info["goal_total"] > 0


@pytest.mark.parametrize("task", BENCHMARK_TASKS)
def test_trial_spec_round_trip_rebuilds_the_scene_bitwise(
    make_sim_env: Callable[..., SimEnv], task: str
) -> None:
    first = _small_env(make_sim_env, task)
    observation, info = first.reset(seed=7)
    spec = TrialSpec.from_json(TrialSpec.from_dict(info["trial"]).to_json())
    second = _small_env(make_sim_env, task)
    rebuilt, rebuilt_info = second.reset(seed=123, options={"trial": spec})
    for key in observation:
        np.testing.assert_array_equal(observation[key], rebuilt[key], err_msg=key)
    assert rebuilt_info["trial"] == info["trial"]
    assert rebuilt_info["instruction"] == info["instruction"]


@pytest.mark.parametrize("task", BENCHMARK_TASKS)
def test_every_instruction_category_states_the_same_goal(
    make_sim_env: Callable[..., SimEnv], task: str
) -> None:
    env = _small_env(make_sim_env, task)
    goals, texts = [], set()
    for category in CATEGORIES:
        _, info = env.reset(seed=5, options={"instruction_category": category})
        assert info["instruction_category"] == category
        assert len(info["instruction"]) > 10
        goals.append(info["trial"]["goal"])
        texts.add(info["instruction"])
    assert all(goal == goals[0] for goal in goals)
    assert len(texts) == len(CATEGORIES)  # each category words it differently


@pytest.mark.parametrize("task", BENCHMARK_TASKS)
def test_goal_is_not_met_at_reset_and_has_a_plan(
    make_sim_env: Callable[..., SimEnv], task: str
) -> None:
    env = _small_env(make_sim_env, task)
    _, info = env.reset(seed=2)
    assert not info["success"]
    assert isinstance(env.task, SymbolicTask)
    assert len(env._scorer.reference()) >= 2


def test_wrong_task_trial_is_rejected(make_sim_env: Callable[..., SimEnv]) -> None:
    env = _small_env(make_sim_env, "stacking")
    _, info = env.reset(seed=0)
    spec = dict(info["trial"], task="tabletop")
    with pytest.raises(ValueError, match="make the env with that task"):
        env.reset(options={"trial": spec})
    with pytest.raises(ValueError, match="valid: trial, instruction_category, disturbances"):
        env.reset(options={"colour": "red"})
