"""SB3 baseline: the wrapper passes check_env; a short PPO run trains on the fixed reach."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3.common.env_checker import check_env  # noqa: E402

from agentic_env.errors import InvalidConfigError  # noqa: E402
from agentic_env.rl.train import TrainConfig, summary, train  # noqa: E402
from agentic_env.rl.wrapper import ReachPickConfig, ReachPickEnv  # noqa: E402


@pytest.mark.parametrize("config", [
    ReachPickConfig(task="reach", episode_steps=5),
    ReachPickConfig(task="pick", episode_steps=5),
    ReachPickConfig(task="pick", observation="state_image", episode_steps=5),
])
def test_wrapper_passes_sb3_check_env(config: ReachPickConfig) -> None:
    env = ReachPickEnv(config)
    try:
        check_env(env, warn=True)
    finally:
        env.close()


def test_reaching_the_goal_is_rewarded_and_succeeds() -> None:
    env = ReachPickEnv(ReachPickConfig(task="reach", episode_steps=60))
    try:
        obs, info = env.reset(seed=0)
        rewards = []
        for _ in range(60):
            to_goal = obs[13:16]  # goal - TCP, metres
            obs, reward, terminated, truncated, info = env.step(np.clip(to_goal * 20, -1, 1))
            rewards.append(reward)
        assert truncated and not terminated
        assert info["is_success"] and info["distance"] < 0.02
        assert rewards[-1] > 0.8 > rewards[0]
    finally:
        env.close()


def test_workspace_box_keeps_the_tcp_above_the_table() -> None:
    config = ReachPickConfig(task="reach", episode_steps=40)
    env = ReachPickEnv(config)
    try:
        env.reset(seed=1)
        for _ in range(40):
            obs, *_ = env.step(np.array([0.0, 0.0, -1.0], np.float32))
        assert obs[8] >= config.workspace_low[2] - 0.005  # TCP z, metres
    finally:
        env.close()


def test_config_errors_name_the_valid_values() -> None:
    with pytest.raises(InvalidConfigError, match="reach, pick"):
        ReachPickConfig(task="push")
    with pytest.raises(InvalidConfigError, match="state, state_image"):
        ReachPickConfig(observation="depth")
    with pytest.raises(InvalidConfigError, match="ppo, sac"):
        TrainConfig(algo="dqn")


@pytest.mark.slow
def test_short_ppo_run_trains_on_the_fixed_reach() -> None:
    config = TrainConfig(env=ReachPickConfig(task="reach", episode_steps=50), algo="ppo",
                         steps=3072, eval_episodes=3)
    result = train(config)
    losses = result.losses()
    assert losses and all(math.isfinite(v) for v in losses)
    first, last = result.window_means()
    assert last > first + 2.0  # the return of a 50-step episode rises
    assert summary(config, result)["losses_finite"]
