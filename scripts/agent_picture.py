"""Regenerate ``docs/agent.png``: one AgenticLab episode, offline, as three pictures.

Left: the shoulder image the detector got for the first pick, with its point and box drawn;
middle: the first grasp candidate drawn over the local point cloud, as the grasp planner's
VLM saw it; right: the last frame of the episode's video.

Usage: ``MUJOCO_GL=egl .venv/bin/python scripts/agent_picture.py``
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import imageio.v3 as iio
import numpy as np

from agentic_env.agents.perception import draw_detections
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.runner import run_episode
from agentic_env.visualize import resize_nearest

HEIGHT = 300


def _fit(image: np.ndarray) -> np.ndarray:
    width = int(round(image.shape[1] * HEIGHT / image.shape[0]))
    return resize_nearest(image, width, HEIGHT)


def main() -> None:
    """Run sorting seed 0 with a trace and compose the picture from it."""
    with tempfile.TemporaryDirectory() as folder:
        result = run_episode(EpisodeSpec("sorting", seed=0), trace_root=Path(folder))
        trace = Path(result.trace_dir)
        detector = sorted(trace.glob("calls/*-detector.json"))[0]
        answer = json.loads(detector.read_text())["parsed"]
        shoulder = iio.imread(str(detector).replace(".json", "-0.png"))
        marked = draw_detections(shoulder, [answer["point"]], [answer["box"]],
                                 ["detector: box", "point"])
        grasp = iio.imread(sorted(trace.glob("calls/*-grasp-0.png"))[0])
        last = iio.imread(trace / "video.mp4")[-1]
    gap = np.full((HEIGHT, 8, 3), 255, np.uint8)
    picture = np.concatenate([_fit(marked), gap, _fit(grasp), gap, _fit(last)], axis=1)
    out = Path("docs/agent.png")
    iio.imwrite(out, picture)
    print(f"wrote {out} {picture.shape[1]}x{picture.shape[0]}; success={result.success}")


if __name__ == "__main__":
    main()
