"""The policy agent's inputs: the error naming the extra, checkpoint folders, camera
resampling, the registration, and the check of a policy's cameras, image sizes, state and
action against the env's before the first step (only the last test needs lerobot)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from agentic_env.agents.base import AgentSetup, TaskContext, agent_entry, make_agent
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.policy.checkpoint import require_lerobot, resolve_checkpoint
from agentic_env.agents.policy.inputs import (
    PolicyInputError,
    check_inputs,
    env_features,
    input_problems,
)
from agentic_env.agents.policy.observation import policy_frame, resample
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.oracle import SimOracle


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
    assert entry.check_options({"resize": True})["resize"] is True
    assert entry.options is not None and entry.options["resize"] is False
    assert agent_entry("agenticlab").control_mode == "primitive"


@pytest.fixture(scope="module")
def env_obs() -> dict[str, np.ndarray]:
    """A stacking trial's first observation, cameras at 128 x 72."""
    env = SimEnv(task="stacking", scene=SceneConfig.at_resolution(128, 72),
                 control_mode="joint_position", max_episode_steps=10_000, realism="ideal")
    try:
        obs, _ = env.reset(seed=0)
    finally:
        env.close()
    return obs


#: A policy that reads what the exporter writes at 128 x 72 and emits the 7-D action.
MATCHING = {"observation.state": ("STATE", (7,)),
            "observation.images.shoulder": ("VISUAL", (3, 72, 128)),
            "observation.images.wrist": ("VISUAL", (3, 72, 128))}


def test_a_policy_that_fits_the_env_is_accepted(env_obs: dict[str, np.ndarray]) -> None:
    assert input_problems(MATCHING, (7,), env_obs) == []
    depth = {**MATCHING, "observation.depth.wrist": ("VISUAL", (1, 72, 128))}
    assert input_problems(depth, (7,), env_obs) == []
    assert env_features(env_obs)["observation.images.wrist"] == (3, 72, 128)
    placeholder = {**MATCHING, "observation.images.empty_camera_0": ("VISUAL", (3, 480, 640))}
    assert input_problems(placeholder, (7,), env_obs) == []
    assert set(policy_frame(env_obs, placeholder)) == set(MATCHING)


def test_another_image_size_is_refused_unless_resize_is_asked(
        env_obs: dict[str, np.ndarray]) -> None:
    small = {**MATCHING, "observation.images.wrist": ("VISUAL", (3, 36, 64))}
    (problem,) = input_problems(small, (7,), env_obs)
    assert problem.startswith("policy expects observation.images.wrist 3x36x64, the env "
                              "gives 3x72x128")
    assert "--resolution 128x72" in problem and "--agent-option resize=true" in problem
    with pytest.raises(PolicyInputError, match="3x36x64"):
        check_inputs(small, (7,), env_obs)
    assert input_problems(small, (7,), env_obs, resize=True) == []
    frame = policy_frame(env_obs, small, resize=True)
    assert frame["observation.images.wrist"].shape == (36, 64, 3)
    with pytest.raises(InvalidConfigError, match="resize=True"):
        policy_frame(env_obs, small)


def test_another_aspect_ratio_is_refused_even_with_resize(
        env_obs: dict[str, np.ndarray]) -> None:
    square = {**MATCHING, "observation.images.shoulder": ("VISUAL", (3, 64, 64))}
    (problem,) = input_problems(square, (7,), env_obs, resize=True)
    assert "observation.images.shoulder 3x64x64, the env gives 3x72x128" in problem
    assert "aspect" in problem
    grey = {**MATCHING, "observation.images.shoulder": ("VISUAL", (1, 72, 128))}
    (problem,) = input_problems(grey, (7,), env_obs, resize=True)
    assert "other channels" in problem


def test_a_camera_the_env_lacks_is_refused_naming_its_cameras(
        env_obs: dict[str, np.ndarray]) -> None:
    front = {**MATCHING, "observation.images.front": ("VISUAL", (3, 72, 128))}
    (problem,) = input_problems(front, (7,), env_obs)
    assert problem == ("policy expects camera observation.images.front 3x72x128, which the "
                       "env does not have: its cameras are shoulder, wrist")


def test_other_state_and_action_dimensions_are_refused(
        env_obs: dict[str, np.ndarray]) -> None:
    eight = {**MATCHING, "observation.state": ("STATE", (8,))}
    problems = input_problems(eight, (14,), env_obs)
    assert problems == [
        "policy expects observation.state (8,), the env gives (7,): six joints, rad; gripper "
        "width, m",
        "policy emits action (14,), the env's joint_position action is (7,): six joint "
        "targets, rad; gripper width target, m"]
    with pytest.raises(PolicyInputError) as refused:
        check_inputs(eight, (14,), env_obs)
    assert "(8,)" in str(refused.value) and "(14,)" in str(refused.value)
    language = {**MATCHING, "observation.language": ("LANGUAGE", (1,))}
    (problem,) = input_problems(language, (7,), env_obs)
    assert "observation.language" in problem and "observation.state" in problem


def _agent_run(checkpoint: Path, width: int, height: int, **options: object
               ) -> tuple[str | None, str, int]:
    """(failure, detail, actions) of the policy agent on an env at ``width`` x ``height``."""
    env = SimEnv(task="stacking", scene=SceneConfig.at_resolution(width, height),
                 control_mode="joint_position", max_episode_steps=10_000, realism="ideal")
    oracle = SimOracle(env)
    try:
        agent = make_agent("policy", AgentSetup(
            models=ModuleContext(ModelRouter(oracle)),
            options={"checkpoint": str(checkpoint), "max_steps": 3, **options}))
        env.reset(seed=0)
        report = agent.run(EnvRobotIO(env), "stack the blocks", TaskContext("", "stacking"))
        return report.failure, report.failure_detail, report.actions
    finally:
        oracle.close()
        env.close()


def test_the_agent_checks_before_the_first_step_and_resizes_when_asked(
        env_obs: dict[str, np.ndarray], tmp_path: Path) -> None:
    """A policy built for 64 x 36 cameras on an env rendering 128 x 72."""
    pytest.importorskip("lerobot")
    from support.tiny_policy import build_policy, save_checkpoint

    small_env = SimEnv(task="stacking", scene=SceneConfig.at_resolution(64, 36),
                       control_mode="joint_position", max_episode_steps=10_000, realism="ideal")
    try:
        small_obs, _ = small_env.reset(seed=0)
    finally:
        small_env.close()
    folder = save_checkpoint(*build_policy("act", small_obs, tmp_path), tmp_path / "ckpt")
    failure, detail, actions = _agent_run(folder, 128, 72)
    assert (failure, actions) == ("policy", 0)
    assert "policy expects observation.images.shoulder 3x36x64, the env gives 3x72x128" in detail
    assert "policy expects observation.images.wrist 3x36x64" in detail
    failure, detail, actions = _agent_run(folder, 128, 72, resize=True)
    assert (failure, actions) == ("limits", 3), detail
    failure, detail, actions = _agent_run(folder, 48, 48, resize=True)
    assert (failure, actions) == ("policy", 0)
    assert "aspect" in detail
