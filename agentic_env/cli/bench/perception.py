"""Pick-success benchmark of the grasp candidates (``agentic-env bench-grasp``).

The command line of :mod:`agentic_env.harness.grasp_bench`: runs it over ``--layouts``
layouts and prints the success table and the wall time.
"""

from __future__ import annotations

import argparse
import logging
import time

from agentic_env.harness import grasp_bench as bench


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its report; returns the exit code."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-grasp",
                                     description=(bench.__doc__ or "").splitlines()[0])
    parser.add_argument("--layouts", type=int, default=20, help="sorting layouts (seeds)")
    parser.add_argument("--seed", type=int, default=0, help="first layout seed")
    parser.add_argument("--camera", choices=("shoulder", "wrist"), default="shoulder",
                        help="plan from the shoulder camera, or from the wrist camera after "
                        "moving above the object")
    parser.add_argument("--task", default="sorting",
                        help="task whose layouts are used (sorting, tabletop, stacking, ...)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every pick")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(message)s")
    start = time.perf_counter()
    results = bench.run(args.layouts, args.seed, args.camera, args.task)
    print(bench.report(results))
    print(f"wall time {time.perf_counter() - start:.0f} s")
    return 0
