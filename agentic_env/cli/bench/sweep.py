"""``agentic-env bench-sweep``: episodes per minute with 1 and 2 workers, and harness overhead.

The command line of :mod:`agentic_env.bench.sweep`: runs a sweep file's episodes directly, with
1 and with 2 workers and prints the figures, and records them into the results database
``--db`` (default ``runs/bench_sweep.db``) as one measurement keyed by the sweep's name and
how many episodes it ran (the episodes themselves go to temporary databases, removed: they
are the harness's load, not results); ``agentic-env report DB`` shows it::

    agentic-env bench-sweep [sweeps/ci.yaml] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import time

from agentic_env.bench.store import measurement, record_measurements
from agentic_env.bench.sweep import bench
from agentic_env.cli.bench import add_db_argument, print_report_command
from agentic_env.harness.sweep import load_sweep

DEFAULT_SWEEP = pathlib.Path("sweeps") / "ci.yaml"


def main(argv: list[str] | None = None) -> int:
    """Print the harness benchmark for a sweep file and record it in ``--db``."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-sweep",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=pathlib.Path, nargs="?", default=DEFAULT_SWEEP)
    parser.add_argument("--limit", type=int, default=None, help="first N episodes only")
    add_db_argument(parser, "bench_sweep", "measurement")
    args = parser.parse_args(argv)
    os.environ.setdefault("MUJOCO_GL", "egl")  # headless; before mujoco is imported
    sweep = load_sweep(args.file)
    start = time.perf_counter()
    result = bench(sweep, args.limit)
    wall = time.perf_counter() - start
    print(f"episodes: {result.episodes}")
    print(f"direct (no harness, serial): {result.direct_s:.1f} s, "
          f"{result.direct_s / result.episodes:.2f} s/episode")
    print(f"pool, 1 worker:  {result.pool1_s:.1f} s, {result.per_minute_1:.2f} episodes/min")
    print(f"pool, 2 workers: {result.pool2_s:.1f} s, {result.per_minute_2:.2f} episodes/min")
    print(f"scaling 2 vs 1 workers: {result.scaling:.2f}x")
    print(f"harness overhead vs direct: {result.overhead_s:.2f} s/episode "
          f"({result.overhead_pct:.1f} % of direct)")
    print(f"harness overhead inside the 1-worker sweep: {result.inside_overhead_s:.3f} "
          "s/episode (wall minus the episode function's own time)")
    record_measurements(args.db, [measurement(
        "bench-sweep", {"sweep": sweep.name, "episodes": result.episodes},
        {**result.figures(), "file": str(args.file)}, wall)])
    print_report_command(args.db, "measurements")
    return 0

