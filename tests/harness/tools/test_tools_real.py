"""The tool episode on the real-robot path: RealEnv with its safety layer and per-step
confirmation, on the MuJoCo twin drivers, judged by the twin's world."""

from __future__ import annotations

import pytest

pytest.importorskip("serial")

from agentic_env.agents.skills.result import SkillCode  # noqa: E402
from agentic_env.envs.sim_env import SimEnv  # noqa: E402
from agentic_env.errors import InvalidConfigError  # noqa: E402
from agentic_env.experts import expert_actions
from agentic_env.harness.episode import EpisodeSpec  # noqa: E402
from agentic_env.harness.tools.backends import RealOptions, open_episode  # noqa: E402
from agentic_env.oracle.tool_reference import primitive_call  # noqa: E402

SPEC = EpisodeSpec(task="sorting", seed=3, agent="mcp:primitives", model="test-client",
                   realism="ideal")


def first_expert_call() -> tuple[str, dict]:
    env = SimEnv(task="sorting", realism="ideal")
    try:
        env.reset(seed=SPEC.seed)
        return primitive_call(next(iter(expert_actions(env.task, env.scene_state))))
    finally:
        env.close()


def test_a_tool_episode_through_realenv_on_the_twin():
    answers = iter(["y", "n"])  # the operator confirms the pick, declines the next step
    episode = open_episode(SPEC, backend="real", real=RealOptions(twin=True,
                                                                  confirm_each_step=True),
                           ask=lambda _prompt: next(answers))
    try:
        assert episode.instruction
        name, arguments = first_expert_call()
        result = episode.call(name, arguments)
        assert result.ok, result.render()
        declined = episode.call("home", {})
        assert declined.code is SkillCode.ESTOP and "declined" in declined.message
        assert episode.call("finish", {"success": False}).ok
        result = episode.score("test-client")
    finally:
        episode.close()
    assert result.n_done == 1 and result.actions == 2 and not result.success
    assert result.failure == "execution"


def test_hardware_needs_a_robot_host():
    with pytest.raises(InvalidConfigError, match="--robot-host"):
        open_episode(SPEC, backend="real", real=RealOptions(), ask=None)
