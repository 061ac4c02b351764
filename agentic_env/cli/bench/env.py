"""``agentic-env bench``: performance and reliability of the simulated workcell.

The command line of :mod:`agentic_env.bench.env` (control loop, observation, pick primitive,
pick success and import time, each figure beside its baseline and target): prints the table
and writes the JSON report, and records the run into the results database ``--db`` (default
``runs/bench.db``) as one measurement keyed by seed, ``--quick`` and the counts (its figures:
the JSON report's document); ``agentic-env report DB`` shows it. Rendering needs a headless
OpenGL backend: run with ``MUJOCO_GL=egl`` (or ``osmesa``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from agentic_env.bench.env import FULL_COUNTS, QUICK_COUNTS, run_benchmark
from agentic_env.bench.store import measurement, record_measurements
from agentic_env.cli.bench import add_db_argument, print_report_command


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="agentic-env bench",
        description="Benchmark the simulated workcell: control-loop and rendering overhead, "
        "pick speed and success rate, import time. Run with MUJOCO_GL=egl when headless.",
    )
    parser.add_argument("--out", type=Path, default=Path("runs/bench.json"),
                        help="JSON report path (parent folders are created; default: "
                        "%(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="small counts, for a smoke test (the figures are noisy)")
    parser.add_argument("--picks", type=int, default=None,
                        help=f"random cube poses of the success rate (default "
                        f"{FULL_COUNTS.picks}, {QUICK_COUNTS.picks} with --quick)")
    parser.add_argument("--periods", type=int, default=None,
                        help=f"control periods per timed repeat (default {FULL_COUNTS.periods}, "
                        f"{QUICK_COUNTS.periods} with --quick)")
    parser.add_argument("--seed", type=int, default=0, help="first layout seed (default 0)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when a target is missed")
    add_db_argument(parser, "bench", "measurement")
    args = parser.parse_args(argv)
    for name in ("picks", "periods"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON report and record it in ``--db``.

    Returns:
        0, or 1 with ``--strict`` when a target was missed.
    """
    args = _parse_args(argv)
    counts = QUICK_COUNTS if args.quick else FULL_COUNTS
    overrides = {name: getattr(args, name) for name in ("picks", "periods")
                 if getattr(args, name) is not None}
    counts = dataclasses.replace(counts, **overrides)
    start = time.perf_counter()
    document = run_benchmark(counts, seed=args.seed, progress=not args.no_progress,
                             quick=args.quick)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2, allow_nan=False) + "\n")
    print(f"JSON report: {args.out}")
    params = {"seed": args.seed, "quick": args.quick, "counts": dataclasses.asdict(counts)}
    record_measurements(args.db, [measurement("bench", params, document,
                                              time.perf_counter() - start)])
    print_report_command(args.db, "measurements")
    return 1 if args.strict and not document["all_targets_met"] else 0


if __name__ == "__main__":
    sys.exit(main())
