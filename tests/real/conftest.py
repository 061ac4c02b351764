"""Shared fixtures of the real-env tests: a ``RealEnv`` over the simulated twin."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from agentic_env.real.real_env import RealEnv
    from agentic_env.real.twin import Twin


@pytest.fixture
def twin_env() -> Iterator[tuple[RealEnv, Twin]]:
    """A reset ``RealEnv`` on the twin (seed 0) and the twin, closed after the test."""
    pytest.importorskip("serial")
    from agentic_env.real.twin import make_twin_env

    env, twin = make_twin_env(seed=0)
    with env:
        env.reset()
        yield env, twin
