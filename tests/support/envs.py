"""Env helpers shared by the tests: the registered ids, the checker advice the contract
knowingly departs from, and a scripted-expert runner."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agentic_env.envs.sim_env import SimEnv
from agentic_env.experts import expert_actions
from agentic_env.registry import register_envs

TABLETOP_ID = "AgenticEnv/Tabletop-v0"
# check_env's advice on space bounds, which the contract knowingly departs from: calibration
# matrices and the TCP pose are unbounded Boxes, and joint_position actions (and primitive
# poses) are absolute radians / metres rather than [-1, 1]. Any other warning fails.
EXPECTED_CHECKER_ADVICE = (
    r".*A Box observation space (minimum|maximum) value is -?infinity",
    r".*For Box action spaces, we recommend using a symmetric and normalized space",
)



def make_registered(env_id: str = TABLETOP_ID, **kwargs: Any) -> gym.Env:
    """``gym.make`` after registering the ids; picklable by reference for spawned workers."""
    register_envs()
    return gym.make(env_id, **kwargs)


def run_expert(env: SimEnv) -> tuple[dict[str, Any], list[str]]:
    """Step the scripted expert of a reset env until the episode ends; every primitive must
    succeed. Returns the last info and the PDDL step each primitive performed."""
    steps: list[str] = []
    info: dict[str, Any] = {}
    for action in expert_actions(env.task, env.scene_state):
        _, _, terminated, truncated, info = env.step(action)
        assert info["primitive"]["ok"], info["primitive"]
        steps.append(info["symbolic_step"])
        if terminated or truncated:
            break
    return info, steps
