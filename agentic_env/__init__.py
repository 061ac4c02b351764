"""agentic_env: a MuJoCo benchmark of closed-loop VLM/LLM agents on a simulated UR5e workcell.

Importing the package registers the Gymnasium ids (lazily: nothing heavy is imported until
an env is made)::

    import gymnasium as gym
    import agentic_env  # noqa: F401

    env = gym.make("AgenticEnv/Tabletop-v0", render_mode="rgb_array")

Without a display and without ``MUJOCO_GL`` set, importing the package chooses headless
rendering (``egl`` where the EGL library is installed, else ``osmesa``) before MuJoCo picks
GLFW, which needs a display; a ``MUJOCO_GL`` you set is kept.
"""

from __future__ import annotations

import ctypes.util
import os

from agentic_env.registry import register_envs

__version__ = "0.1.0"


def _headless_gl_default() -> None:
    """Set ``MUJOCO_GL`` for offscreen rendering when nothing chose a backend and there is no
    display (MuJoCo reads it when it first loads its GL context module)."""
    if "MUJOCO_GL" in os.environ or os.environ.get("DISPLAY") or os.environ.get(
            "WAYLAND_DISPLAY"):
        return
    os.environ["MUJOCO_GL"] = "egl" if ctypes.util.find_library("EGL") else "osmesa"


_headless_gl_default()
register_envs()
