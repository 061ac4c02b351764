"""Shared test setup: headless rendering, the registered Gymnasium ids, env factories.

Every env made through :func:`make_env` / the ``make_sim_env`` fixture is closed after the
test, so no OpenGL context outlives its test (EGL complains about contexts freed at exit).
"""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")

from collections.abc import Callable, Iterator  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

import agentic_env  # noqa: E402, F401  (registers the Gymnasium ids)
from agentic_env.envs.sim_env import SimEnv  # noqa: E402


@pytest.fixture
def make_sim_env() -> Iterator[Callable[..., SimEnv]]:
    """Factory of :class:`SimEnv` instances, in the ideal world unless ``realism`` is given,
    that are all closed at teardown."""
    envs: list[SimEnv] = []

    def factory(**kwargs: Any) -> SimEnv:
        env = SimEnv(**{"realism": "ideal", **kwargs})
        envs.append(env)
        return env

    yield factory
    for env in envs:
        env.close()


@pytest.fixture(scope="module")
def sorting_env() -> Iterator[SimEnv]:
    """A sorting trial (seed 0) shared by the tests of one module; the task's objects exist
    from the first reset on."""
    env = SimEnv("sorting", realism="ideal")
    env.reset(seed=0)
    yield env
    env.close()


@pytest.fixture
def sorting() -> Iterator[tuple[SimEnv, Any]]:
    """A fresh sorting trial (seed 0) and the perfect sim-oracle's module context over it."""
    from agentic_env.agents.models.context import ModuleContext
    from agentic_env.agents.models.registry import ModelRouter
    from agentic_env.oracle import SimOracle

    env = SimEnv("sorting", realism="ideal")
    env.reset(seed=0)
    oracle = SimOracle(env)
    yield env, ModuleContext(ModelRouter(oracle))
    oracle.close()
    env.close()


@pytest.fixture
def chat_server() -> Iterator[Callable[..., Any]]:
    """Starts local OpenAI-compatible chat servers (:mod:`support.chat_server`):
    ``chat_server(steps)`` -> a running server; all are stopped, and the litellm clients
    that talked to them closed, at teardown."""
    from support.chat_server import serve_chats

    yield from serve_chats()
