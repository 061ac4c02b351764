"""Importing the package on a machine without a display picks headless rendering, so a new
user's first ``gym.make(...).reset()`` renders without setting ``MUJOCO_GL``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SHOW = "import os, agentic_env; print(os.environ.get('MUJOCO_GL', ''))"


def _gl_after_import(**env: str) -> str:
    base = {k: v for k, v in os.environ.items()
            if k not in ("MUJOCO_GL", "DISPLAY", "WAYLAND_DISPLAY")}
    done = subprocess.run([sys.executable, "-c", SHOW], env={**base, **env},
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_no_display_and_no_backend_chooses_a_headless_one() -> None:
    assert _gl_after_import() in ("egl", "osmesa")


@pytest.mark.parametrize(("env", "expected"), [({"MUJOCO_GL": "osmesa"}, "osmesa"),
                                               ({"DISPLAY": ":0"}, "")])
def test_a_chosen_backend_or_a_display_is_left_alone(env: dict[str, str],
                                                     expected: str) -> None:
    assert _gl_after_import(**env) == expected
