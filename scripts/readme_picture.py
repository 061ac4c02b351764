"""Regenerate ``docs/tour.png``: the composite view mid-pick above both cameras' RGB and depth.

Usage: ``MUJOCO_GL=egl .venv/bin/python scripts/readme_picture.py``
"""

from __future__ import annotations

from pathlib import Path

import imageio.v2 as imageio
import numpy as np

from agentic_env.envs.sim_env import SimEnv
from agentic_env.experts import expert_actions
from agentic_env.visualize import colorize_depth, depth_display_range, resize_nearest


def main() -> None:
    """Run the expert's first pick on seed 0 and save the picture."""
    env = SimEnv(task="tabletop", render_mode="rgb_array")
    env.reset(seed=0)
    first_pick = next(iter(expert_actions(env.task, env.scene_state)))
    observation, *_ = env.step(first_pick)
    composite = env.render()
    tiles = []
    for camera in ("shoulder", "wrist"):
        depth = observation[f"{camera}_depth"]
        tiles.append(resize_nearest(observation[f"{camera}_rgb"], 240, 135))
        tiles.append(resize_nearest(colorize_depth(depth, *depth_display_range(depth)), 240, 135))
    picture = np.concatenate([composite, np.concatenate(tiles, axis=1)], axis=0)
    out = Path("docs/tour.png")
    out.parent.mkdir(exist_ok=True)
    imageio.imwrite(out, picture)
    env.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
