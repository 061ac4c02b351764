"""Regenerate ``docs/world.png``: the same trial seen in the ideal and the realistic world.

Rows: ideal, realistic. Columns: the shoulder camera's RGB and depth at reset, then the wrist
camera's RGB and depth 22 cm above the first object (the close view agents take). Depth is
colour-mapped over one range per camera for both rows; black is no return (0).

Usage: ``MUJOCO_GL=egl .venv/bin/python scripts/world_picture.py``
"""

from __future__ import annotations

from pathlib import Path

import imageio.v2 as imageio
import numpy as np

from agentic_env.contract.actions import move_to, top_down_pose
from agentic_env.envs.sim_env import SimEnv
from agentic_env.sim.realism import REALISM_LEVELS
from agentic_env.visualize import colorize_depth, resize_nearest

TASK, SETTING, SEED = "sorting", "kitchen", 30002
#: Depth colour ranges (near, far) per camera, metres.
RANGES = {"shoulder": (0.6, 1.3), "wrist": (0.1, 0.3)}


def views(realism: str) -> dict[str, dict[str, np.ndarray]]:
    """Both cameras' observations of the trial in world ``realism``."""
    env = SimEnv(TASK, setting=SETTING, realism=realism)
    try:
        shoulder, info = env.reset(seed=SEED)
        above = env.scene_state.body_position(info["trial"]["objects"][0]["name"]).copy()
        above[2] += 0.22
        wrist, *_ = env.step(move_to(top_down_pose(above)))
    finally:
        env.close()
    return {"shoulder": shoulder, "wrist": wrist}


def main() -> None:
    """Render both worlds and save the picture."""
    rows = []
    for realism in REALISM_LEVELS:
        observed = views(realism)
        tiles = []
        for camera, (near, far) in RANGES.items():
            obs = observed[camera]
            tiles.append(resize_nearest(obs[f"{camera}_rgb"], 320, 180))
            tiles.append(resize_nearest(colorize_depth(obs[f"{camera}_depth"], near, far),
                                        320, 180))
        rows.append(np.concatenate(tiles, axis=1))
    out = Path("docs/world.png")
    imageio.imwrite(out, np.concatenate(rows, axis=0))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
