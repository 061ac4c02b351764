"""LeRobot's own ``lerobot-record``, ``lerobot-replay`` and ``lerobot-rollout`` with the
``agentic_ur5e`` robot on the digital twin, found without any discovery flag: the recorded
dataset is read by the project's reader and accepted by its training, replaying it reproduces
the motion, and the policy trained on it drives the twin."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lerobot_robot_agentic_ur5e import POS_NAMES, AgenticUR5e
from support.lerobot_plugins import CAMERAS_ARG, HEIGHT, WIDTH

from agentic_env.contract.features import CAMERAS, video_key
from agentic_env.datasets.lerobot_format import vector_features
from agentic_env.datasets.reader import DatasetReader
from agentic_env.robot.constants import HOME_JOINT_POSITIONS

TASK = "swing the arm"
ROBOT_ARGS = ["--robot.type=agentic_ur5e", "--robot.twin=true", f"--robot.cameras={CAMERAS_ARG}"]


def _console_script(name: str) -> str:
    return os.path.join(os.path.dirname(sys.executable), name)


def _watch_robots(monkeypatch: pytest.MonkeyPatch, module: Any
                  ) -> tuple[list[AgenticUR5e], list[np.ndarray], list[dict[str, float]]]:
    """Make ``module``'s ``make_robot_from_config`` keep the robots it builds, the states they
    observe and the actions they send (as sent, after the safety layer)."""
    robots: list[AgenticUR5e] = []
    observed: list[np.ndarray] = []
    sent: list[dict[str, float]] = []
    make_robot = module.make_robot_from_config

    def make_and_watch(config: Any) -> AgenticUR5e:
        robot = make_robot(config)
        read, send = robot.get_observation, robot.send_action

        def get_observation() -> dict[str, Any]:
            observation = read()
            observed.append(np.array([observation[name] for name in robot.state_names]))
            return observation

        def send_action(action: dict[str, Any]) -> dict[str, float]:
            sent.append(send(action))
            return sent[-1]

        robot.get_observation, robot.send_action = get_observation, send_action
        robots.append(robot)
        return robot

    monkeypatch.setattr(module, "make_robot_from_config", make_and_watch)
    return robots, observed, sent


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two 3-second episodes recorded by ``lerobot-record`` with the scripted teleoperator."""
    root = tmp_path_factory.mktemp("lerobot-record") / "dataset"
    command = [_console_script("lerobot-record"), *ROBOT_ARGS,
               "--teleop.type=agentic_scripted", "--teleop.fps=20",
               "--dataset.repo_id=local/agentic_ur5e_twin", f"--dataset.root={root}",
               f"--dataset.single_task={TASK}", "--dataset.num_episodes=2",
               "--dataset.episode_time_s=3", "--dataset.reset_time_s=0", "--dataset.fps=20",
               "--dataset.push_to_hub=false", "--dataset.num_image_writer_threads_per_camera=1",
               "--display_data=false", "--play_sounds=false"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return root


def test_lerobot_record_writes_the_exporters_features(recorded: Path) -> None:
    info = json.loads((recorded / "meta/info.json").read_text())
    assert info["robot_type"] == "agentic_ur5e" and info["total_episodes"] == 2
    features, exporter = info["features"], vector_features()
    for name in ("observation.state", "action"):
        assert features[name]["names"] == exporter[name]["names"]
    for camera in CAMERAS:
        assert features[video_key(camera)]["shape"] == [HEIGHT, WIDTH, 3]


def test_the_projects_reader_reads_the_recording(recorded: Path) -> None:
    reader = DatasetReader(recorded)
    assert len(reader) == 2 and reader.tasks == [TASK]
    assert reader.cameras == {} and reader.collection == {}  # the exporter's own files
    first = reader.frames(0)
    length = len(first["index"])
    assert length >= 3
    np.testing.assert_allclose(first["observation.state"][0, :6], HOME_JOINT_POSITIONS,
                               atol=1e-3)
    # the action of a frame is what the next frame's state moved towards
    step = np.abs(first["observation.state"][1:, :6] - first["action"][:-1, :6])
    assert step.max() < 0.05
    frames = list(reader.video(0, "shoulder"))
    assert len(frames) == length and frames[0].shape == (HEIGHT, WIDTH, 3)
    assert frames[0].std() > 5.0


@pytest.fixture(scope="module")
def trained(recorded: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The project's ACT training, one step on the recording."""
    from agentic_env.agents.policy.training import TrainConfig, train_act

    return train_act(recorded, tmp_path_factory.mktemp("act"), TrainConfig(
        steps=1, batch_size=2, chunk_size=4, dim_model=32, dim_feedforward=64,
        n_encoder_layers=1, n_heads=2))


def test_the_projects_training_accepts_the_recording(trained: dict[str, Any]) -> None:
    assert trained["steps"] == 1 and math.isfinite(trained["loss"])
    assert (Path(trained["checkpoint"]) / "model.safetensors").is_file()


def test_lerobot_replay_drives_the_twin_through_the_recorded_motion(
        recorded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lerobot.scripts import lerobot_replay

    robots, observed, _ = _watch_robots(monkeypatch, lerobot_replay)
    monkeypatch.setattr(sys, "argv", ["lerobot-replay", *ROBOT_ARGS,
                                      "--dataset.repo_id=local/agentic_ur5e_twin",
                                      f"--dataset.root={recorded}", "--dataset.episode=0",
                                      "--dataset.fps=20", "--play_sounds=false"])
    lerobot_replay.main()
    recorded_states = DatasetReader(recorded).frames(0)["observation.state"]
    assert isinstance(robots[0], AgenticUR5e) and not robots[0].is_connected
    assert len(observed) == len(recorded_states)
    # same twin layout, same start, same actions: the same states, to float32 rounding
    np.testing.assert_allclose(np.stack(observed), recorded_states, atol=1e-4)


def test_lerobot_rollout_runs_the_trained_policy_on_the_twin(
        trained: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """``lerobot-rollout`` keeps only ``.pos``/``.vel`` scalar features: the robot runs with
    ``feature_names=lerobot``, and the policy trained on exporter-named data drives it."""
    from lerobot.rollout import context
    from lerobot.scripts import lerobot_rollout

    robots, _, sent = _watch_robots(monkeypatch, context)
    monkeypatch.setattr(sys, "argv", [
        # rate-limited at 1.9 rad/s (the primitives' 1.88 needs no more), starting or stopping
        # takes 38 rad/s^2, under the 60 cap: the barely trained policy's first target, a
        # jump from rest, is followed at full speed instead of refused (at pi rad/s: 62.8)
        "lerobot-rollout", *ROBOT_ARGS, "--robot.feature_names=lerobot",
        "--robot.max_joint_speed=1.9",
        "--strategy.type=base", f"--policy.path={trained['checkpoint']}", f"--task={TASK}",
        "--duration=4", "--fps=20", "--return_to_initial_position=false"])
    lerobot_rollout.main()
    robot = robots[0]
    assert not robot.is_connected
    # the policy's actions only; how many fit in the wall-clock duration depends on the
    # machine (the first inference alone can take seconds on a loaded CPU)
    assert len(sent) >= 1 and set(sent[0]) == set(POS_NAMES)
    joints = np.array([[action[name] for name in POS_NAMES[:6]] for action in sent])
    # the policy moved the arm, through the safety layer, near the recorded motion
    assert np.abs(joints - HOME_JOINT_POSITIONS).max() > 1e-3
    assert np.abs(joints - HOME_JOINT_POSITIONS).max() < 0.5


def test_record_then_lerobot_train_then_lerobot_eval_on_the_suite(
        recorded: Path, tmp_path: Path) -> None:
    """The LeRobot user's loop with LeRobot's own three commands and no project flag: the twin
    recording trains an ACT with ``lerobot-train``, and ``lerobot-eval`` runs it on the
    benchmark suite at evaluation seeds (LeRobot's default 1000, never a demonstration)."""
    offline = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = tmp_path / "train"
    train = [_console_script("lerobot-train"), "--dataset.repo_id=local/agentic_ur5e_twin",
             f"--dataset.root={recorded}", "--policy.type=act", "--policy.device=cpu",
             "--policy.push_to_hub=false", "--policy.pretrained_backbone_weights=null",
             "--policy.dim_model=32", "--policy.dim_feedforward=64", "--policy.n_heads=2",
             "--policy.n_encoder_layers=1", "--policy.chunk_size=4",
             "--policy.n_action_steps=4", "--steps=2", "--batch_size=2", "--save_freq=2",
             "--num_workers=0", "--wandb.enable=false",
             f"--output_dir={out}"]
    done = subprocess.run(train, capture_output=True, text=True, timeout=600, env=offline)
    assert done.returncode == 0, done.stderr[-3000:]
    checkpoint = out / "checkpoints" / "last" / "pretrained_model"
    assert (checkpoint / "model.safetensors").is_file()
    evaluate = [_console_script("lerobot-eval"), "--env.type=agentic_env",
                "--env.task=stacking", "--env.setting=lab",
                f"--env.observation_width={WIDTH}", f"--env.observation_height={HEIGHT}",
                "--env.episode_length=4", f"--env.video_dir={tmp_path}/videos",
                f"--env.episode_log={tmp_path}/episodes.jsonl", f"--policy.path={checkpoint}",
                "--policy.device=cpu", "--eval.n_episodes=1", "--eval.batch_size=1",
                f"--output_dir={tmp_path}/eval"]
    done = subprocess.run(evaluate, capture_output=True, text=True, timeout=600, env=offline)
    assert done.returncode == 0, done.stderr[-3000:]
    info = json.loads((tmp_path / "eval" / "eval_info.json").read_text())
    assert [(t["task_group"], t["task_id"]) for t in info["per_task"]] == [("lab", "stacking")]
    record = json.loads((tmp_path / "episodes.jsonl").read_text().splitlines()[0])
    assert record["seed"] == 1000 and record["failure"] == "limits"
