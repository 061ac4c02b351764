"""The collection the policy tests train their tiny policy on."""

from __future__ import annotations

from agentic_env.datasets.collect import CollectConfig

#: One stacking demonstration at 64 x 36 (the policy's cameras; the harness renders 640 x
#: 360, which the agent resamples).
CONFIG = CollectConfig(task="stacking", width=64, height=36)
#: Its trial seed.
SEED = 1000
