"""agentic_env: a MuJoCo benchmark of closed-loop VLM/LLM agents on a simulated UR5e workcell.

Importing the package registers the Gymnasium ids (lazily: nothing heavy is imported until
an env is made)::

    import gymnasium as gym
    import agentic_env  # noqa: F401

    env = gym.make("AgenticEnv/Tabletop-v0", render_mode="rgb_array")
"""

from __future__ import annotations

from agentic_env.registry import register_envs

__version__ = "0.1.0"

register_envs()
