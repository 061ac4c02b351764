"""``agentic-env bench-real``: its arguments and printout; the measurement (RealEnv + twin
against the sim env, observation latency split into capture and pipeline) is
:mod:`agentic_env.bench.real`."""

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
