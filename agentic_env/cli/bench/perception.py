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
    parser.add_argument("-v", "--verbose", action="store_true", help="log every pick")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(message)s")
    start = time.perf_counter()
    for task in args.tasks:
        worlds = {world: bench.run(args.layouts, args.seed, args.camera, task, world)
                  for world in args.worlds}
        sources = None
        if "realistic" in worlds and not args.no_attribution:
            failed = [r for r in worlds["realistic"] if not r.lifted]
            sources = bench.attribute_failures(failed, args.camera, task)
        print(bench.compare_report(task, worlds, sources))
    print(f"wall time {time.perf_counter() - start:.0f} s")
    return 0
