"""Headless demo: the scripted ground-truth expert puts every cube in the bin.

Writes, under a run folder (default ``runs/demo-<time>``):

* ``demo.mp4`` — composite video (overview, shoulder and wrist cameras) at ``--fps``;
* ``shoulder_rgb.png``, ``shoulder_depth.png``, ``wrist_rgb.png``, ``wrist_depth.png`` — the
  first observation of both cameras, depth colour-mapped (near blue, far red, no return black);
* ``overview.png`` — the final composite frame; ``summary.json`` — outcome per primitive.

Run ``python -m agentic_env.cli.demo --help`` for options.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import imageio.v2 as imageio
import numpy as np
from tqdm import tqdm

from agentic_env.envs.sim_env import SimEnv
from agentic_env.experts import expert_actions
from agentic_env.visualize import colorize_depth, depth_display_range


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="agentic-env demo", description="Scripted expert on AgenticEnv/Tabletop-v0."
    )
    parser.add_argument("--out", type=Path, default=None, help="run folder (default runs/demo-*)")
    parser.add_argument("--seed", type=int, default=0, help="layout seed (default 0)")
    parser.add_argument("--fps", type=int, default=10, help="video frame rate (default 10)")
    parser.add_argument("--no-video", action="store_true", help="skip the MP4")
    return parser.parse_args(argv)


def save_camera_pictures(observation: dict[str, np.ndarray], out: Path) -> list[Path]:
    """Write each camera's RGB and colour-mapped depth as PNGs; return the paths."""
    written = []
    for camera in ("shoulder", "wrist"):
        rgb_path, depth_path = out / f"{camera}_rgb.png", out / f"{camera}_depth.png"
        depth = observation[f"{camera}_depth"]
        imageio.imwrite(rgb_path, observation[f"{camera}_rgb"])
        imageio.imwrite(depth_path, colorize_depth(depth, *depth_display_range(depth)))
        written += [rgb_path, depth_path]
    return written


def main(argv: list[str] | None = None) -> int:
    """Run the demo; return a process exit code (0 when every cube ends in the bin)."""
    args = _parse(argv)
    out = args.out or Path("runs") / time.strftime("demo-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    env = SimEnv(task="tabletop", render_mode="rgb_array")
    writer = None
    try:
        observation, info = env.reset(seed=args.seed)
        pictures = save_camera_pictures(observation, out)
        if not args.no_video:
            writer = imageio.get_writer(out / "demo.mp4", fps=args.fps, macro_block_size=8)
            every = max(1, round(env.metadata["render_fps"] / args.fps))
            periods = [0]

            def grab(sim: SimEnv) -> None:
                periods[0] += 1
                if periods[0] % every == 0:
                    writer.append_data(sim.render())

            env.add_control_listener(grab)
            writer.append_data(env.render())
        print(f"instruction: {info['instruction']}")
        outcomes = []
        actions = expert_actions(env.task, env.scene_state)
        with tqdm(actions, desc="expert", unit="primitive",
                  total=2 * len(env.task.cubes)) as bar:
            for action in bar:
                observation, _, terminated, _, info = env.step(action)
                outcome = info["primitive"]
                outcomes.append(outcome)
                status = "ok" if outcome["ok"] else outcome["reason"]
                bar.set_postfix(last=f"{outcome['name']}:{status}",
                                progress=f"{info['progress']:.2f}")
                if terminated:
                    break
        imageio.imwrite(out / "overview.png", env.render())
        summary = {"seed": args.seed, "success": info["success"], "progress": info["progress"],
                   "sim_time": info["sim_time"], "primitives": outcomes}
        (out / "summary.json").write_text(json.dumps(summary, indent=2))
    finally:
        if writer is not None:
            writer.close()
        env.close()
    print(f"success: {info['success']}  progress: {info['progress']:.2f}  "
          f"sim time: {info['sim_time']:.1f} s")
    print(f"wrote {out}/: " + ", ".join(p.name for p in [*pictures, out / "overview.png"])
          + ("" if args.no_video else ", demo.mp4") + ", summary.json")
    return 0 if info["success"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
