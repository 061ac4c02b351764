"""The tiny policy the policy tests load (trained once per process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.tiny_policy import trained_tiny_policy


@pytest.fixture(scope="session")
def tiny_policy() -> tuple[Path, Path]:
    """(dataset folder, checkpoint folder) of a policy trained for two steps."""
    pytest.importorskip("lerobot")
    return trained_tiny_policy()
