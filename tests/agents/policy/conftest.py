"""A tiny ACT policy, trained once per session on one short collected demonstration."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.tiny_policy import CONFIG, SEED

from agentic_env.datasets.collect import collect


@pytest.fixture(scope="session")
def tiny_policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(dataset folder, checkpoint folder) of a policy trained for two steps."""
    pytest.importorskip("lerobot")
    from agentic_env.agents.policy.training import TrainConfig, train_act

    root = tmp_path_factory.mktemp("policy")
    dataset = root / "dataset"
    collect(dataset, CONFIG, 1, seed_start=SEED, progress=False)
    result = train_act(dataset, root / "checkpoint", TrainConfig(steps=2, batch_size=2,
                                                                 chunk_size=10))
    assert result["steps"] == 2
    yield dataset, Path(result["checkpoint"])
