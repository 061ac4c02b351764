"""One realism default: the env, the episode spec, the Gymnasium id, sweeps, the commands and
the LeRobot env all read :data:`agentic_env.sim.realism.BENCHMARK_REALISM` (stored specs from
before the switch: ``tests/sim/realism/test_world.py``)."""

from __future__ import annotations

import argparse

import gymnasium as gym

from agentic_env.cli.realism import add_realism_argument
from agentic_env.datasets.collect import CollectConfig
from agentic_env.envs.lerobot.config import AgenticEnvConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.sweep import AXES
from agentic_env.sim.realism import BENCHMARK_REALISM


def test_every_entry_point_defaults_to_the_benchmark_world() -> None:
    assert BENCHMARK_REALISM == "realistic"
    env = gym.make("agentic_env:AgenticEnv/Tabletop-v0").unwrapped
    try:
        assert isinstance(env, SimEnv) and env.realism == BENCHMARK_REALISM
        assert env.world is not None  # the realistic world's sensors exist
    finally:
        env.close()
    assert EpisodeSpec("sorting").realism == BENCHMARK_REALISM
    assert AXES["realism"] == [BENCHMARK_REALISM]
    assert AgenticEnvConfig().realism == BENCHMARK_REALISM
    assert CollectConfig(task="sorting").realism == BENCHMARK_REALISM
    parser = argparse.ArgumentParser()
    add_realism_argument(parser)
    assert parser.parse_args([]).realism == BENCHMARK_REALISM

