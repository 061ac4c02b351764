"""A missing package, checkpoint or hub model becomes the project's error, which the policy
agent reports as a ``policy`` failure naming the install or the path to use (the hub is
offline in these tests: conftest.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from support.tiny_policy import CONFIG, build_policy, save_checkpoint, save_lora_adapter

from agentic_env.agents.base import AgentSetup, TaskContext, make_agent
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.policy.loading import (
    PolicyDependencyError,
    PolicyWeightsError,
    check_checkpoint_path,
    hub_references,
    load_errors,
)
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.oracle import SimOracle

pytest.importorskip("lerobot")
pytest.importorskip("transformers")
pytest.importorskip("peft")


@pytest.fixture(scope="module")
def env_obs() -> dict[str, np.ndarray]:
    env = _small_env()
    try:
        obs, _ = env.reset(seed=0)
    finally:
        env.close()
    return obs


def _small_env() -> SimEnv:
    return SimEnv(task=CONFIG.task, scene=SceneConfig.at_resolution(CONFIG.width, CONFIG.height),
                  control_mode="joint_position", max_episode_steps=10_000, realism="ideal")


def _refusal(checkpoint: Path | str) -> tuple[str | None, str, int]:
    """(failure, detail, actions) of the policy agent given ``checkpoint``."""
    env = _small_env()
    oracle = SimOracle(env)
    try:
        agent = make_agent("policy", AgentSetup(
            models=ModuleContext(ModelRouter(oracle)),
            options={"checkpoint": str(checkpoint), "max_steps": 2}))
        env.reset(seed=0)
        report = agent.run(EnvRobotIO(env), "stack the blocks", TaskContext("", CONFIG.task))
        return report.failure, report.failure_detail, report.actions
    finally:
        oracle.close()
        env.close()


def test_a_missing_checkpoint_names_the_path_and_how_to_get_one(tmp_path: Path) -> None:
    failure, detail, actions = _refusal(tmp_path / "nowhere")
    assert (failure, actions) == ("policy", 0)
    assert f"no policy checkpoint at {tmp_path / 'nowhere'}" in detail
    assert "agentic-env train-policy" in detail and "checkpoint=DIR" in detail
    with pytest.raises(PolicyWeightsError, match=r"hf download lerobot/pi05_base"):
        check_checkpoint_path(Path("lerobot/pi05_base"))


def test_a_missing_peft_names_the_extra(env_obs: dict[str, np.ndarray], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    adapter, _ = save_lora_adapter(env_obs, tmp_path)
    monkeypatch.setitem(sys.modules, "peft", None)  # import peft -> ImportError
    failure, detail, actions = _refusal(adapter)
    assert (failure, actions) == ("policy", 0)
    assert "needs the Python package 'peft'" in detail
    assert "pip install -e '.[vla]'" in detail


def test_a_missing_transformers_names_the_extra(env_obs: dict[str, np.ndarray],
                                                tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """LeRobot checks transformers when SmolVLA's backbone is built; without it its own
    ImportError asks for ``lerobot[smolvla]``, which the agent turns into the project's."""
    from lerobot.utils import import_utils

    folder = save_checkpoint(*build_policy("smolvla", env_obs, tmp_path), tmp_path / "ckpt")
    monkeypatch.setitem(import_utils._require_package_cache, "transformers", False)
    failure, detail, _ = _refusal(folder)
    assert failure == "policy"
    assert "needs the Python package 'transformers'" in detail
    assert "pip install -e '.[vla]'" in detail
    with pytest.raises(PolicyDependencyError), load_errors(folder):
        import_utils.require_package("transformers", extra="smolvla")


def test_a_lora_base_on_the_hub_while_offline_names_where_to_point(
        env_obs: dict[str, np.ndarray], tmp_path: Path) -> None:
    adapter, _ = save_lora_adapter(env_obs, tmp_path)
    config_file = adapter / "adapter_config.json"
    config = json.loads(config_file.read_text())
    config["base_model_name_or_path"] = "lerobot/act_base"
    config_file.write_text(json.dumps(config))
    assert hub_references(adapter) == [("lerobot/act_base",
                                        "base_model_name_or_path in adapter_config.json")]
    failure, detail, actions = _refusal(adapter)
    assert (failure, actions) == ("policy", 0)
    assert "lerobot/act_base (base_model_name_or_path in adapter_config.json)" in detail
    assert "HF_HUB_OFFLINE is set" in detail and "hf download NAME --local-dir DIR" in detail


def test_a_smolvla_backbone_on_the_hub_while_offline_names_where_to_point(
        env_obs: dict[str, np.ndarray], tmp_path: Path) -> None:
    folder = save_checkpoint(*build_policy("smolvla", env_obs, tmp_path), tmp_path / "ckpt")
    config_file = folder / "config.json"
    config = json.loads(config_file.read_text())
    config["vlm_model_name"] = "HuggingFaceTB/SmolVLM2-500M-Video-Instruct"
    config_file.write_text(json.dumps(config))
    failure, detail, _ = _refusal(folder)
    assert failure == "policy"
    assert ("HuggingFaceTB/SmolVLM2-500M-Video-Instruct (vlm_model_name in config.json)"
            in detail)
    # the processor still names the local tokenizer folder: not a hub model
    assert "tokenizer_name" not in detail


def test_hub_references_name_each_model_fetched_by_name(tmp_path: Path) -> None:
    """π0.5's preprocessor names PaliGemma's tokenizer; a local folder is no hub model."""
    local = tmp_path / "smolvlm"
    local.mkdir()
    (tmp_path / "config.json").write_text(json.dumps({"type": "smolvla",
                                                      "vlm_model_name": str(local)}))
    (tmp_path / "policy_preprocessor.json").write_text(json.dumps({"steps": [
        {"registry_name": "tokenizer_processor",
         "config": {"tokenizer_name": "google/paligemma-3b-pt-224"}}]}))
    assert hub_references(tmp_path) == [
        ("google/paligemma-3b-pt-224", "tokenizer_name in policy_preprocessor.json")]
    with pytest.raises(PolicyWeightsError, match="google/paligemma-3b-pt-224"), \
            load_errors(tmp_path):
        raise OSError("We couldn't connect to 'https://huggingface.co'")
