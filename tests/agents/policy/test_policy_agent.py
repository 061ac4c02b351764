"""The policy agent: a LeRobot checkpoint loads, sees the exporter's features, and runs an
episode through the harness, deterministically for a seed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.tiny_policy import CONFIG, SEED

from agentic_env.agents.base import AgentSetup, TaskContext, make_agent
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.policy.checkpoint import load_policy
from agentic_env.agents.policy.observation import policy_batch, policy_frame
from agentic_env.contract.features import frame_features, video_key
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.harness.runner import run_episode
from agentic_env.oracle import SimOracle

pytest.importorskip("lerobot")



def _small_env() -> SimEnv:
    """A joint_position env with the collection's cameras (64 x 36)."""
    scene = SceneConfig.at_resolution(CONFIG.width, CONFIG.height)
    return SimEnv(task=CONFIG.task, scene=scene, control_mode="joint_position",
                  max_episode_steps=10_000, realism=CONFIG.realism)


def test_the_policy_reads_the_exporters_features_and_normalisation(
        tiny_policy: tuple[Path, Path]) -> None:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    dataset, checkpoint = tiny_policy
    info = json.loads((dataset / "meta/info.json").read_text())["features"]
    stats = json.loads((dataset / "meta/stats.json").read_text())
    loaded = load_policy(checkpoint)
    assert set(loaded.input_features) == {"observation.state", video_key("shoulder"),
                                          video_key("wrist")}
    for name, (kind, shape) in loaded.input_features.items():
        stored = info[name]["shape"]
        assert shape == ((stored[2], stored[0], stored[1]) if kind == "VISUAL"
                         else tuple(stored))
    assert loaded.action_shape == tuple(info["action"]["shape"])

    env = _small_env()
    try:
        obs, _ = env.reset(seed=SEED)  # the demonstration's first frame
    finally:
        env.close()
    frame = policy_frame(obs, loaded.input_features)
    recorded = LeRobotDataset("local/tiny", root=dataset, video_backend="pyav")[0]
    np.testing.assert_array_equal(frame["observation.state"],
                                  recorded["observation.state"].numpy())
    for cam in ("shoulder", "wrist"):
        image = frame[video_key(cam)].transpose(2, 0, 1) / 255.0
        assert image.shape == tuple(recorded[video_key(cam)].shape)
        # the same view, up to the video codec
        assert np.abs(image - recorded[video_key(cam)].numpy()).mean() < 0.05

    batch = loaded.preprocessor(policy_batch(obs, loaded.input_features, "stack them"))
    state = frame_features(obs)["observation.state"]
    mean = np.asarray(stats["observation.state"]["mean"], np.float32)
    std = np.asarray(stats["observation.state"]["std"], np.float32)
    np.testing.assert_allclose(batch["observation.state"][0].numpy(),
                               (state - mean) / (std + 1e-8), rtol=1e-4, atol=1e-4)
    shoulder = batch[video_key("shoulder")]
    assert shoulder.shape == (1, 3, CONFIG.height, CONFIG.width)
    assert shoulder.dtype.is_floating_point


def _run(checkpoint: Path, seed: int, steps: int) -> tuple[np.ndarray, int]:
    """Final joint positions and actions of the agent on a small env."""
    env = _small_env()
    oracle = SimOracle(env)  # never asked: the policy queries no model
    try:
        agent = make_agent("policy", AgentSetup(
            models=ModuleContext(ModelRouter(oracle)),
            options={"checkpoint": str(checkpoint), "max_steps": steps}, seed=seed))
        env.reset(seed=seed)
        robot_io = EnvRobotIO(env)
        report = agent.run(robot_io, "stack the blocks", TaskContext("", CONFIG.task))
        return robot_io.observe()["joint_positions"], report.actions
    finally:
        oracle.close()
        env.close()


def test_the_policy_is_deterministic_for_a_seed(tiny_policy: tuple[Path, Path]) -> None:
    _, checkpoint = tiny_policy
    first, actions = _run(checkpoint, 3, 15)
    second, _ = _run(checkpoint, 3, 15)
    assert actions == 15
    np.testing.assert_array_equal(first, second)


def test_a_policy_episode_runs_through_the_harness(tiny_policy: tuple[Path, Path],
                                                  tmp_path: Path) -> None:
    """The harness renders 640 x 360; the 64 x 36 policy runs on it because resize is asked
    (without it the agent refuses: test_policy_inputs)."""
    _, checkpoint = tiny_policy
    spec = EpisodeSpec(task="stacking", seed=0, agent="policy", agent_options=(
        ("checkpoint", str(checkpoint)), ("max_steps", 12), ("resize", True)), realism="ideal")
    result = run_episode(spec, trace_root=tmp_path, video=False)
    assert result.error is None
    assert result.actions == 12
    assert not result.success
    assert result.failure == "limits"
    assert "12 control periods" in result.failure_detail
    assert result.sim_s >= 12 / 20  # twelve 20 Hz control periods after the reset
    assert (tmp_path / spec.key()).is_dir()


def test_the_policy_runs_a_real_trial_on_the_twin(tiny_policy: tuple[Path, Path],
                                                  tmp_path: Path) -> None:
    """``agentic-env trial --backend real --agent policy``: the real env is built in the
    policy's control mode and its checkpoint comes from ``--agent-option``. A policy trained
    for two steps asks for wild joint targets: the real env's safety layer refuses the first
    one, the arm stays stopped and the trial is stored, scored, as an execution failure."""
    from agentic_env.cli import setup_sheet
    from agentic_env.cli import trial as trial_cli
    from agentic_env.harness.db import ResultStore

    pytest.importorskip("serial")
    assert setup_sheet.main(["--task", CONFIG.task, "--seed", "0", "--out",
                             str(tmp_path / "sheet")]) == 0
    db = tmp_path / "db.sqlite"
    code = trial_cli.main([str(tmp_path / "sheet" / "trial.json"), "--backend", "real",
                           "--twin", "--rubric", "auto", "--agent", "policy",
                           "--agent-option", f"checkpoint={tiny_policy[1]}",
                           "--agent-option", "max_steps=12", "--agent-option", "resize=true",
                           "--db", str(db),
                           "--out", str(tmp_path / "out")], ask=lambda _prompt: "")
    assert code == 0
    with ResultStore(db) as store:
        (row,) = store.episodes()
    assert row["agent"] == "policy" and row["actions"] == 0 and row["success"] == 0
    assert row["failure"] == "execution" and "safety fault" in row["failure_detail"]
