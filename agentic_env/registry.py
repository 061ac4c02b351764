"""Gymnasium registration of the env ids (lazy string entry points)."""

from __future__ import annotations

import gymnasium as gym

#: Registered ids and the task each one runs.
ENV_IDS: dict[str, str] = {
    "AgenticEnv/Tabletop-v0": "tabletop",
    "AgenticEnv/Stacking-v0": "stacking",
    "AgenticEnv/Crossword-v0": "crossword",
    "AgenticEnv/Reorientation-v0": "reorientation",
    "AgenticEnv/Sorting-v0": "sorting",
    "AgenticEnv/Kitchen-v0": "kitchen",
}


def register_envs() -> None:
    """Register every id in :data:`ENV_IDS` (idempotent)."""
    for env_id, task in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point="agentic_env.envs.sim_env:SimEnv",
                kwargs={"task": task},
                disable_env_checker=False,
            )
