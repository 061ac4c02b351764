"""The benchmark as a lerobot-eval environment: registered with LeRobot, observations as
LeRobot's evaluation loop turns them into the policy's features."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from support.tiny_policy import CONFIG, trained_tiny_policy

pytest.importorskip("lerobot")


def _config(length: int) -> object:
    from lerobot.envs.configs import EnvConfig

    import agentic_env.envs.lerobot  # noqa: F401  (registers the env type)

    return EnvConfig.get_choice_class("agentic_env")(
        task=CONFIG.task, observation_width=CONFIG.width, observation_height=CONFIG.height,
        episode_length=length)


def test_lerobot_builds_the_env_and_the_policy_reads_its_observations() -> None:
    from lerobot.envs.factory import make_env
    from lerobot.envs.utils import env_to_policy_features, preprocess_observation

    from agentic_env.agents.policy.checkpoint import load_policy

    config = _config(3)
    envs = make_env(config, n_envs=1)
    env = envs["agentic_env"][0]  # single-task envs: one suite named after the env type
    try:
        obs, _ = env.reset(seed=[0])
        instruction = env.call("task_description")[0]
        assert instruction
        batch = preprocess_observation(obs)
        loaded = load_policy(trained_tiny_policy()[1])
        for name, (_kind, shape) in loaded.input_features.items():
            assert tuple(batch[name].shape[1:]) == shape
        features = env_to_policy_features(config)
        assert tuple(features["action"].shape) == loaded.action_shape
        obs, _, terminated, truncated, info = env.step(obs["agent_pos"].astype(np.float64))
        assert not terminated[0]
    finally:
        env.close()


@pytest.mark.slow
def test_lerobot_eval_runs_a_policy_on_the_benchmark(tmp_path: object) -> None:
    checkpoint = trained_tiny_policy()[1]
    command = [os.path.join(os.path.dirname(sys.executable), "lerobot-eval"),
               "--env.discover_packages_path=agentic_env.envs.lerobot", "--env.type=agentic_env",
               f"--env.task={CONFIG.task}", f"--env.observation_width={CONFIG.width}",
               f"--env.observation_height={CONFIG.height}", "--env.episode_length=5",
               f"--policy.path={checkpoint}", "--policy.device=cpu", "--eval.n_episodes=1",
               "--eval.batch_size=1", f"--output_dir={tmp_path}/eval"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "'pc_success': 0.0" in done.stdout + done.stderr
