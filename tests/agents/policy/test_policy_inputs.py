"""The policy agent's parts that need no lerobot: the error naming the extra, checkpoint
folders, camera resampling, and the registration."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from agentic_env.agents.base import agent_entry
from agentic_env.agents.policy.checkpoint import require_lerobot, resolve_checkpoint
from agentic_env.agents.policy.observation import resample
from agentic_env.errors import AgenticEnvError, InvalidConfigError


def test_a_missing_lerobot_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "lerobot", None)  # import lerobot -> ImportError
    with pytest.raises(AgenticEnvError, match=r"'vla' extra"):
        require_lerobot()


def test_a_checkpoint_is_found_in_a_training_run(tmp_path: Path) -> None:
    folder = tmp_path / "checkpoints" / "last" / "pretrained_model"
    folder.mkdir(parents=True)
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_text("{}")
    assert resolve_checkpoint(tmp_path) == folder
    assert resolve_checkpoint(folder) == folder
    with pytest.raises(InvalidConfigError, match="model.safetensors"):
        resolve_checkpoint(tmp_path / "elsewhere")


def test_cameras_are_area_resampled_to_the_policys_size() -> None:
    image = np.zeros((360, 640, 3), np.uint8)
    image[:, 320:] = 200
    small = resample(image, 64, 36)
    assert small.shape == (36, 64, 3) and small.dtype == np.uint8
    assert small[:, :32].max() == 0 and small[:, 32:].min() == 200
    depth = np.full((360, 640, 1), 1234, np.uint16)
    assert (resample(depth, 64, 36) == 1234).all()
    with pytest.raises(InvalidConfigError, match="aspect"):
        resample(image, 64, 64)


def test_the_policy_agent_acts_in_the_recorded_action_space() -> None:
    entry = agent_entry("policy")
    assert entry.control_mode == "joint_position"
    assert entry.check_options({"checkpoint": "x"})["max_steps"] > 0
    assert agent_entry("agenticlab").control_mode == "primitive"
