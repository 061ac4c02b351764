"""Pick-success benchmark of the grasp candidates (``agentic-env bench-grasp``).

The command line of :mod:`agentic_env.bench.grasp`: runs it over ``--layouts``
layouts of each ``--tasks`` task in each ``--worlds`` world (the same picks in each) and
prints the lifted picks per object kind side by side, then where each failure of the
realistic world came from (each failed pick repeated with one effect of the realistic world
at a time), and the wall time::

    agentic-env bench-grasp --layouts 10 --seed 30000 --tasks sorting stacking
"""

from __future__ import annotations

import argparse
import logging
import time

from agentic_env.bench import grasp as bench
from agentic_env.bench.store import measurement, record_measurements
from agentic_env.cli.bench import add_db_argument, print_report_command
from agentic_env.sim.realism import REALISM_LEVELS


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its report; returns the exit code."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-grasp",
                                     description=(bench.__doc__ or "").splitlines()[0])
    parser.add_argument("--layouts", type=int, default=20, help="layouts (seeds) per task")
    parser.add_argument("--seed", type=int, default=0, help="first layout seed")
    parser.add_argument("--camera", choices=("shoulder", "wrist"), default="shoulder",
                        help="plan from the shoulder camera, or from the wrist camera after "
                        "moving above the object")
    parser.add_argument("--tasks", nargs="+", default=["sorting"],
                        help="tasks whose layouts are used (sorting, stacking, tabletop, ...)")
    parser.add_argument("--worlds", nargs="+", default=list(REALISM_LEVELS),
                        choices=REALISM_LEVELS, help="worlds to compare (default: both)")
    parser.add_argument("--no-attribution", action="store_true",
                        help="skip repeating the realistic world's failures per effect")
    add_db_argument(parser, "bench_grasp", "measurement")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every pick")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(message)s")
    start = time.perf_counter()
    for task in args.tasks:
        worlds, seconds = {}, {}
        for world in args.worlds:
            began = time.perf_counter()
            worlds[world] = bench.run(args.layouts, args.seed, args.camera, task, world)
            seconds[world] = time.perf_counter() - began
        sources = None
        if "realistic" in worlds and not args.no_attribution:
            failed = [r for r in worlds["realistic"] if not r.lifted]
            sources = bench.attribute_failures(failed, args.camera, task)
        print(bench.compare_report(task, worlds, sources))
        record_measurements(args.db, [
            measurement("bench-grasp", {"task": task, "world": world, "layouts": args.layouts,
                                        "seed": args.seed, "camera": args.camera},
                        bench.figures(results, sources if world == "realistic" else None),
                        seconds[world])
            for world, results in worlds.items()])
    print(f"wall time {time.perf_counter() - start:.0f} s")
    print_report_command(args.db, "measurements")
    return 0
