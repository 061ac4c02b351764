"""``agentic-env bench-sweep``: episodes per minute with 1 and 2 workers, and harness overhead.

The command line of :mod:`agentic_env.bench.sweep`: runs a sweep file's episodes directly, with
1 and with 2 workers and prints the figures::

    agentic-env bench-sweep [sweeps/ci.yaml] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import pathlib

from agentic_env.bench.sweep import bench
from agentic_env.harness.sweep import load_sweep

DEFAULT_SWEEP = pathlib.Path("sweeps") / "ci.yaml"


def main(argv: list[str] | None = None) -> int:
    """Print the harness benchmark for a sweep file."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-sweep",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=pathlib.Path, nargs="?", default=DEFAULT_SWEEP)
    parser.add_argument("--limit", type=int, default=None, help="first N episodes only")
    args = parser.parse_args(argv)
    os.environ.setdefault("MUJOCO_GL", "egl")  # headless; before mujoco is imported
    result = bench(load_sweep(args.file), args.limit)
    print(f"episodes: {result.episodes}")
    print(f"direct (no harness, serial): {result.direct_s:.1f} s, "
          f"{result.direct_s / result.episodes:.2f} s/episode")
    print(f"pool, 1 worker:  {result.pool1_s:.1f} s, {result.per_minute_1:.2f} episodes/min")
    print(f"pool, 2 workers: {result.pool2_s:.1f} s, {result.per_minute_2:.2f} episodes/min")
    print(f"scaling 2 vs 1 workers: {result.scaling:.2f}x")
    print(f"harness overhead vs direct: {result.overhead_s:.2f} s/episode "
          f"({100 * result.overhead_s * result.episodes / result.direct_s:.1f} % of direct)")
    print(f"harness overhead inside the 1-worker sweep: {result.inside_overhead_s:.3f} "
          "s/episode (wall minus the episode function's own time)")
    return 0

