"""``agentic-env bench-real``: observation latency through RealEnv + twin vs the sim env.

Both envs observe the same simulated cell (Tabletop, one seed) at the same configured
resolution. The sim env renders at that resolution directly; RealEnv asks the twin drivers
for frames at the devices' native resolutions and formats (Azure Kinect 1280x720 BGRA, D405
848x480), then converts, crops, resizes, adjusts intrinsics, applies the calibration and
reads the arm and the gripper (over the pseudo-terminal serial link). The figures split
RealEnv's time into the twin's capture (rendering native frames: on hardware the devices do
this) and the real pipeline itself (:mod:`agentic_env.bench.real`).
"""

from __future__ import annotations

import argparse
import os

import numpy as np


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures; returns the exit code."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-real", description=__doc__)
    parser.add_argument("--repeats", type=int, default=30, help="observations timed per env")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    os.environ.setdefault("MUJOCO_GL", "egl")
    from agentic_env.bench.real import observation_latency

    samples, (width, height) = observation_latency(args.repeats, args.seed)
    print(f"observation latency, {args.repeats} observations, two RGB-D cameras at "
          f"{width}x{height} (twin devices: 1280x720 BGRA + 848x480 RGB)")
    print(f"{'':42}{'mean ms':>9}{'median':>9}{'p95':>9}")
    means = {}
    for name, values in samples.items():
        array = np.array(values)
        means[name] = array.mean()
        print(f"{name:42}{array.mean():9.1f}{np.median(array):9.1f}"
              f"{np.percentile(array, 95):9.1f}")
    sim_mean = means["SimEnv.observe"]
    pipeline = (means["  frame fitting (convert, crop, resize)"]
                + means["  arm state + gripper read (pty)"])
    print(f"overhead ratio RealEnv+twin / SimEnv: {means['RealEnv+twin observe'] / sim_mean:.2f}")
    print(f"real pipeline without the twin's rendering: {pipeline:.1f} ms "
          f"({pipeline / sim_mean:.2f} x SimEnv.observe)")
    return 0
