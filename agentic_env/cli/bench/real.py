"""``agentic-env bench-real``: its arguments and printout; the measurement (RealEnv + twin
against the sim env, observation latency split into capture and pipeline) is
:mod:`agentic_env.bench.real`. It runs offline, against the MuJoCo twin devices (the arm and
gripper over a pseudo-terminal), and records its figures into the results database ``--db``
(default ``runs/bench_real.db``) as one measurement keyed by repeats and seed;
``agentic-env report DB`` shows it."""

from __future__ import annotations

import argparse
import os
import time

from agentic_env.bench.store import measurement, record_measurements
from agentic_env.cli.bench import add_db_argument, print_report_command


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the figures and record them in ``--db``; returns the exit
    code."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-real", description=__doc__)
    parser.add_argument("--repeats", type=int, default=30, help="observations timed per env")
    parser.add_argument("--seed", type=int, default=0)
    add_db_argument(parser, "bench_real", "measurement")
    args = parser.parse_args(argv)
    os.environ.setdefault("MUJOCO_GL", "egl")
    from agentic_env.bench.real import SIM, latency_figures, observation_latency

    start = time.perf_counter()
    samples, (width, height) = observation_latency(args.repeats, args.seed)
    wall = time.perf_counter() - start
    figures = latency_figures(samples, (width, height))
    print(f"observation latency, {args.repeats} observations, two RGB-D cameras at "
          f"{width}x{height} (twin devices: 1280x720 BGRA + 848x480 RGB)")
    print(f"{'':42}{'mean ms':>9}{'median':>9}{'p95':>9}")
    for name in samples:
        cell = figures["paths"][name.strip()]
        print(f"{name:42}{cell['mean_ms']:9.1f}{cell['median_ms']:9.1f}{cell['p95_ms']:9.1f}")
    print(f"overhead ratio RealEnv+twin / SimEnv: {figures['overhead_ratio']:.2f}")
    print(f"real pipeline without the twin's rendering: {figures['pipeline_ms']:.1f} ms "
          f"({figures['pipeline_ratio']:.2f} x {SIM})")
    record_measurements(args.db, [measurement("bench-real", {"repeats": args.repeats,
                                                             "seed": args.seed},
                                              figures, wall)])
    print_report_command(args.db, "measurements")
    return 0
