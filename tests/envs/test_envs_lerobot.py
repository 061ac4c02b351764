"""The benchmark as a lerobot-eval environment: registered with LeRobot, observations as
LeRobot's evaluation loop turns them into the policy's features, the suite, seeds, scores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.tiny_policy import CONFIG, trained_tiny_policy

from agentic_env.contract.features import CAMERAS, depth_key, video_key
from agentic_env.contract.seeds import DEMONSTRATION_SEED_START, EVALUATION_SEEDS, describe
from agentic_env.errors import InvalidConfigError
from agentic_env.tasks import BENCHMARK_TASKS

pytest.importorskip("lerobot")


def _config(length: int, **fields: object) -> object:
    from agentic_env.envs.lerobot import AgenticEnvConfig

    fields = {"task": CONFIG.task, **fields}
    return AgenticEnvConfig(observation_width=CONFIG.width, observation_height=CONFIG.height,
                            episode_length=length, **fields)


def test_lerobot_builds_the_env_and_the_policy_reads_its_observations() -> None:
    from lerobot.envs.factory import make_env
    from lerobot.envs.utils import env_to_policy_features, preprocess_observation

    from agentic_env.agents.policy.checkpoint import load_policy

    config = _config(3, render="frames")
    envs = make_env(config, n_envs=1)
    env = envs["lab"][CONFIG.task]  # groups are settings, task ids are task names
    try:
        obs, _ = env.reset(seed=[1000], options={"lerobot_new_rollout": True})
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


def test_the_suite_is_every_selected_task_in_every_selected_setting() -> None:
    from lerobot.envs.factory import make_env

    envs = make_env(_config(3, task="all", setting="all"), n_envs=2)
    assert list(envs) == ["lab", "kitchen", "outdoor"]
    for group in envs.values():
        assert list(group) == list(BENCHMARK_TASKS)
        assert all(env.num_envs == 2 and not env.built for env in group.values())
    envs = make_env(_config(3, task="stacking,sorting", setting="kitchen"), n_envs=1)
    assert {group: list(tasks) for group, tasks in envs.items()} == {
        "kitchen": ["stacking", "sorting"]}


@pytest.mark.parametrize(("field", "value", "valid"), [
    ("task", "stackin", "crossword"), ("setting", "beach", "outdoor"), ("task", ",", "all")])
def test_an_unknown_selection_is_refused_naming_the_valid_ones(field: str, value: str,
                                                               valid: str) -> None:
    with pytest.raises(InvalidConfigError, match=valid):
        _config(3, **{field: value})


def test_resets_refuse_demonstration_seeds_naming_both_ranges() -> None:
    from agentic_env.envs.lerobot import LeRobotBenchmarkEnv

    env = LeRobotBenchmarkEnv(CONFIG.task, width=CONFIG.width, height=CONFIG.height,
                              render_mode=None)
    try:
        with pytest.raises(InvalidConfigError) as refused:
            env.reset(seed=DEMONSTRATION_SEED_START)
        for seeds in ("0-999999", "1000000-1999999"):
            assert seeds in str(refused.value)
        env.reset(seed=1000)  # LeRobot's default first seed is an evaluation seed
        env.reset()
        assert env.sim.trial is not None and env.sim.trial.seed in EVALUATION_SEEDS
    finally:
        env.close()
    assert describe(EVALUATION_SEEDS) == "0-999999"


def test_depth_and_tcp_pose_reach_the_policy_as_the_exporter_names_them() -> None:
    from lerobot.envs.factory import make_env
    from lerobot.envs.utils import env_to_policy_features, preprocess_observation

    config = _config(3, depth=True, tcp_pose=True, render="frames")
    expected = {name: tuple(feature.shape)
                for name, feature in env_to_policy_features(config).items() if name != "action"}
    height, width = CONFIG.height, CONFIG.width
    assert expected == {"observation.state": (7,), "observation.tcp_pose": (7,),
                        **{video_key(cam): (3, height, width) for cam in CAMERAS},
                        **{depth_key(cam): (1, height, width) for cam in CAMERAS}}
    env = make_env(config, n_envs=1)["lab"][CONFIG.task]
    try:
        obs, _ = env.reset(seed=[1000])
        sim = env.call("sim")[0]
        preprocessor, _ = config.get_env_processors()
        batch = preprocessor(preprocess_observation(obs))
        assert {name: tuple(batch[name].shape[1:]) for name in expected} == expected
        truth = sim.observe()
        np.testing.assert_allclose(batch["observation.tcp_pose"][0].numpy(), truth["tcp_pose"],
                                   atol=1e-6)
        depth_mm = batch[depth_key("shoulder")][0, 0].numpy()
        returns = depth_mm[depth_mm > 0]  # 0: no return
        assert returns.size and 300 < np.median(returns) < 3000  # millimetres, not metres
    finally:
        env.close()


def test_the_last_reward_is_the_progress_score_and_the_failure_is_logged(tmp_path: Path
                                                                          ) -> None:
    from agentic_env.envs.lerobot import LeRobotBenchmarkEnv

    log = tmp_path / "episodes.jsonl"
    env = LeRobotBenchmarkEnv(CONFIG.task, width=CONFIG.width, height=CONFIG.height,
                              episode_length=3, render_mode=None, episode_log=str(log))
    try:
        obs, _ = env.reset(seed=1000)
        rewards, info = [], {}
        for _ in range(3):
            obs, reward, terminated, truncated, info = env.step(
                obs["agent_pos"].astype(np.float64))
            rewards.append(reward)
        assert truncated and not terminated
        reference = env.sim.progress_score()  # the same reference plan
        record = json.loads(log.read_text())
        assert rewards[:2] == [0.0, 0.0] and rewards[2] == info["progress_score"]
        assert record["progress_score"] == info["progress_score"] == reference.score
        assert record["score_counts"]["n_required"] == reference.n_required > 0
        assert (record["failure"], info["failure"]) == ("limits", "limits")
        assert "3 control periods" in record["failure_detail"]
        assert (record["task"], record["setting"], record["seed"]) == (CONFIG.task, "lab", 1000)
        assert record["instruction"] == env.task_description
    finally:
        env.close()


@pytest.mark.slow
def test_lerobot_eval_runs_the_suite_without_any_project_flag(tmp_path: Path) -> None:
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        distribution("lerobot_env_agentic")
    except PackageNotFoundError:
        pytest.skip("the lerobot_env_agentic plugin is not installed (scripts/setup.sh)")
    checkpoint = trained_tiny_policy()[1]
    command = [os.path.join(os.path.dirname(sys.executable), "lerobot-eval"),
               "--env.type=agentic_env", "--env.task=stacking,sorting", "--env.setting=lab",
               f"--env.observation_width={CONFIG.width}",
               f"--env.observation_height={CONFIG.height}", "--env.episode_length=4",
               f"--env.video_dir={tmp_path}/plugin-videos",
               f"--env.episode_log={tmp_path}/episodes.jsonl",
               f"--policy.path={checkpoint}", "--policy.device=cpu", "--eval.n_episodes=1",
               "--eval.batch_size=1", f"--output_dir={tmp_path}/eval"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    info = json.loads((tmp_path / "eval" / "eval_info.json").read_text())
    per_task = {(t["task_group"], t["task_id"]): t["metrics"] for t in info["per_task"]}
    assert set(per_task) == {("lab", "stacking"), ("lab", "sorting")}
    records = [json.loads(line) for line in
               (tmp_path / "episodes.jsonl").read_text().splitlines()]
    for record in records:
        metrics = per_task[("lab", record["task"])]
        assert metrics["successes"] == [record["success"]]
        assert metrics["sum_rewards"] == [record["progress_score"]]
        assert record["seed"] == 1000 and record["failure"] == "limits"
        video = Path(record["video"])
        assert video.parent == tmp_path / "plugin-videos" / f"lab_{record['task']}"
        assert video.stat().st_size > 0
    assert info["per_group"]["lab"]["n_episodes"] == 2
