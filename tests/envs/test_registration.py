"""Making the envs where ``agentic_env`` was never imported, and quiet GL teardown at exit.

Gymnasium 1.x has no plugin entry points: a fresh interpreter or a spawned vector-env worker
finds the ids by the module named in them (``agentic_env:AgenticEnv/...``).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv

from agentic_env.contract.workcell import SceneConfig
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405

SORTING_ID = "agentic_env:AgenticEnv/Sorting-v0"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (headless EGL rendering)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "MUJOCO_GL": "egl"})


def test_a_fresh_interpreter_makes_an_env_by_its_module_qualified_id() -> None:
    result = _python("""
        import sys
        import gymnasium as gym

        env = gym.make("agentic_env:AgenticEnv/Sorting-v0")
        assert "agentic_env" in sys.modules
        env.reset(seed=0)
        env.close()
        print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_spawned_vector_env_workers_make_envs_from_plain_gym_make_calls() -> None:
    scene = SceneConfig(shoulder_camera=azure_kinect_color(64, 36),
                        wrist_camera=realsense_d405(64, 36))
    make = functools.partial(gym.make, SORTING_ID, scene=scene)
    envs = AsyncVectorEnv([make, make], context="spawn")
    try:
        observations, _ = envs.reset(seed=0)
        assert observations["shoulder_rgb"].shape == (2, 36, 64, 3)
        _, rewards, _, _, _ = envs.step(envs.action_space.sample())
        assert np.asarray(rewards).shape == (2,)
    finally:
        envs.close()


@pytest.mark.parametrize("closed", ["first", "second", "neither"])
def test_exit_with_unclosed_envs_prints_no_gl_teardown_errors(closed: str) -> None:
    result = _python(f"""
        import gymnasium as gym

        envs = [gym.make("agentic_env:AgenticEnv/Sorting-v0", render_mode="rgb_array")
                for _ in range(2)]
        for env in envs:
            env.reset(seed=0)  # renders both cameras
            env.render()  # and the overview
        closed = {closed!r}
        if closed != "neither":
            envs[0 if closed == "first" else 1].close()
    """)
    assert result.returncode == 0, result.stderr
    assert "Exception ignored" not in result.stderr and "EGL" not in result.stderr, result.stderr
