"""Every LeRobot policy family the benchmark loads builds in the project's environment from
LeRobot's own configs (tiny dimensions, no downloaded weights, no network) and acts on the
env's observation; a checkpoint of one loads through the project's loading and the policy
agent, a LoRA adapter on its base policy included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.tiny_policy import (
    CONFIG,
    FAMILIES,
    build_policy,
    save_checkpoint,
    save_lora_adapter,
    use_tiny_pi05_backbone,
)

from agentic_env.agents.base import AgentSetup, TaskContext, make_agent
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.policy.checkpoint import load_policy
from agentic_env.agents.policy.observation import policy_batch
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.oracle import SimOracle

pytest.importorskip("lerobot")
pytest.importorskip("transformers")
pytest.importorskip("peft")


def _small_env(width: int = CONFIG.width, height: int = CONFIG.height) -> SimEnv:
    """A joint_position env whose cameras render ``width`` x ``height``."""
    return SimEnv(task=CONFIG.task, scene=SceneConfig.at_resolution(width, height),
                  control_mode="joint_position", max_episode_steps=10_000, realism="ideal")


@pytest.fixture(scope="module")
def obs() -> dict[str, np.ndarray]:
    """The first observation of a stacking trial at 64 x 36."""
    env = _small_env()
    try:
        first, _ = env.reset(seed=0)
    finally:
        env.close()
    return first


def _act(policy: object, preprocessor: object, postprocessor: object, features: dict,
         obs: dict[str, np.ndarray]) -> np.ndarray:
    import torch

    batch = preprocessor(policy_batch(obs, features, "stack the blocks"))
    with torch.inference_mode():
        return postprocessor(policy.select_action(batch)).numpy()


@pytest.mark.parametrize("kind", FAMILIES)
def test_each_policy_family_acts_on_the_envs_observation(
        kind: str, obs: dict[str, np.ndarray], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    if kind == "pi05":
        use_tiny_pi05_backbone(monkeypatch)
    policy, preprocessor, postprocessor = build_policy(kind, obs, tmp_path)
    assert policy.config.type == kind
    assert sum(p.numel() for p in policy.parameters()) < 20_000_000
    features = {name: (feature.type.name, tuple(feature.shape))
                for name, feature in policy.config.input_features.items()}
    assert set(features) == {"observation.state", "observation.images.shoulder",
                             "observation.images.wrist"}
    action = _act(policy, preprocessor, postprocessor, features, obs)
    assert action.shape == (1, 7) and np.isfinite(action).all()


@pytest.mark.parametrize("kind", ["smolvla", "diffusion"])
def test_a_checkpoint_loads_offline_and_the_agent_runs_it(
        kind: str, obs: dict[str, np.ndarray], tmp_path: Path) -> None:
    """SmolVLA's VLM and tokenizer come from the local folder its config names."""
    policy, preprocessor, postprocessor = build_policy(kind, obs, tmp_path)
    folder = save_checkpoint(policy, preprocessor, postprocessor, tmp_path / "checkpoint")
    loaded = load_policy(folder)
    assert loaded.policy_type == kind and loaded.action_shape == (7,)
    report, actions = _run_agent(folder, steps=3)
    assert report.failure == "limits", report.failure_detail
    assert actions == 3


def _run_agent(checkpoint: Path, steps: int, **options: object) -> tuple[object, int]:
    """The policy agent's report and actions on a 64 x 36 env for ``steps`` periods."""
    env = _small_env()
    oracle = SimOracle(env)  # never asked: the policy queries no model
    try:
        agent = make_agent("policy", AgentSetup(
            models=ModuleContext(ModelRouter(oracle)),
            options={"checkpoint": str(checkpoint), "max_steps": steps, **options}, seed=1))
        env.reset(seed=1)
        report = agent.run(EnvRobotIO(env), "stack the blocks", TaskContext("", CONFIG.task))
        return report, report.actions
    finally:
        oracle.close()
        env.close()


def test_a_lora_adapter_loads_on_its_base_policy(obs: dict[str, np.ndarray],
                                                 tmp_path: Path) -> None:
    from peft import PeftModel

    adapter, wrapped = save_lora_adapter(obs, tmp_path)
    assert (adapter / "adapter_model.safetensors").is_file()
    assert not (adapter / "model.safetensors").exists()
    loaded = load_policy(adapter)
    assert isinstance(loaded.policy, PeftModel)
    lora = {name: p for name, p in loaded.policy.named_parameters() if "lora_B" in name}
    trained = dict(wrapped.named_parameters())
    assert lora and all(np.array_equal(p.detach().numpy(), trained[name].detach().numpy())
                        for name, p in lora.items())
    features = loaded.input_features
    expected = _act(wrapped, loaded.preprocessor, loaded.postprocessor, features, obs)
    np.testing.assert_allclose(
        _act(loaded.policy, loaded.preprocessor, loaded.postprocessor, features, obs),
        expected, rtol=1e-5, atol=1e-6)
    report, actions = _run_agent(adapter, steps=3)
    assert report.failure == "limits", report.failure_detail
    assert actions == 3
