"""A tiny ACT policy for the policy tests, trained once per process on one short collected
demonstration (needs lerobot)."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from agentic_env.datasets.collect import CollectConfig, collect

#: One stacking demonstration at 64 x 36 (the policy's cameras; the harness renders 640 x
#: 360, which the agent resamples).
CONFIG = CollectConfig(task="stacking", width=64, height=36)
#: Its trial seed.
SEED = 1000


@functools.cache
def trained_tiny_policy() -> tuple[Path, Path]:
    """(dataset folder, checkpoint folder) of a policy trained for two steps."""
    from agentic_env.agents.policy.training import TrainConfig, train_act

    scratch = Path(tempfile.mkdtemp(prefix="agentic-env-policy-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    dataset = scratch / "dataset"
    collect(dataset, CONFIG, 1, seed_start=SEED, progress=False)
    result = train_act(dataset, scratch / "checkpoint",
                       TrainConfig(steps=2, batch_size=2, chunk_size=10))
    return dataset, Path(result["checkpoint"])
