"""Shared test setup: headless rendering, the registered Gymnasium ids, env factories.

Every env made through :func:`make_env` / the ``make_sim_env`` fixture is closed after the
test, so no OpenGL context outlives its test (EGL complains about contexts freed at exit).
"""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")

from collections.abc import Callable, Iterator  # noqa: E402
from typing import Any  # noqa: E402

import gymnasium as gym  # noqa: E402
import pytest  # noqa: E402

import agentic_env  # noqa: E402, F401  (registers the Gymnasium ids)
from agentic_env.envs.sim_env import SimEnv  # noqa: E402
from agentic_env.registry import register_envs  # noqa: E402

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


@pytest.fixture
def make_sim_env() -> Iterator[Callable[..., SimEnv]]:
    """Factory of :class:`SimEnv` instances that are all closed at teardown."""
    envs: list[SimEnv] = []

    def factory(**kwargs: Any) -> SimEnv:
        env = SimEnv(**kwargs)
        envs.append(env)
        return env

    yield factory
    for env in envs:
        env.close()


def run_expert(env: SimEnv) -> tuple[dict[str, Any], list[str]]:
    """Step the scripted expert of a reset env until the episode ends; every primitive must
    succeed. Returns the last info and the PDDL step each primitive performed."""
    steps: list[str] = []
    info: dict[str, Any] = {}
    for action in env.task.expert_actions(env.scene_state):
        _, _, terminated, truncated, info = env.step(action)
        assert info["primitive"]["ok"], info["primitive"]
        steps.append(info["symbolic_step"])
        if terminated or truncated:
            break
    return info, steps
