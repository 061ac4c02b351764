"""``agentic-env bench-robosuite``: env steps per second against robosuite, in both worlds.

The command line of :mod:`agentic_env.bench.robosuite` (which says how to install robosuite
beside this project): prints the steps per second of each simulator and the ratios, and
writes them as JSON, and records one measurement per world of this env (keyed by world,
steps, rounds and seed) into the results database ``--db`` (default
``runs/bench_robosuite.db``; ``agentic-env report DB`` shows them)::

    MUJOCO_GL=egl agentic-env bench-robosuite --robosuite-python rs/bin/python
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from agentic_env.bench.robosuite import (
    CONTROL_HZ,
    RESOLUTION,
    ROBOSUITE_RATIO_TARGET,
    run,
    world_figures,
)
from agentic_env.bench.store import measurement, record_measurements
from agentic_env.cli.bench import add_db_argument, print_report_command
from agentic_env.errors import InvalidConfigError


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="agentic-env bench-robosuite",
                                     description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robosuite-python", type=Path, required=True,
                        help="a Python interpreter with robosuite installed")
    parser.add_argument("--steps", type=int, default=60, help="timed steps per run")
    parser.add_argument("--rounds", type=int, default=3, help="turns of every simulator")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/bench_robosuite.json"))
    add_db_argument(parser, "bench_robosuite", "measurement")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.rounds < 1:
        parser.error("--steps and --rounds must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison, print it, write it as JSON and record it per world in ``--db``;
    1 when the target is missed, 2 when robosuite did not run (nothing recorded)."""
    args = _parse_args(argv)
    start = time.perf_counter()
    try:
        result = run(args.robosuite_python, args.steps, args.rounds, args.seed)
    except InvalidConfigError as error:
        print(f"bench-robosuite: {error}", file=sys.stderr)
        return 2
    version = result["simulators"]["robosuite"].get("version", "?")
    print(f"env steps/s, two RGB-D cameras at {RESOLUTION[0]}x{RESOLUTION[1]}, "
          f"{CONTROL_HZ} Hz, median of {args.rounds} rounds of {args.steps} steps")
    for name, figures in result["simulators"].items():
        label = f"robosuite {version} Lift (Panda)" if name == "robosuite" else f"this env, {name}"
        print(f"  {label:<36} {figures['steps_per_s']:7.1f} steps/s   reset "
              f"{figures['reset_s']:.2f} s")
    for number, (ratios, steps) in enumerate(
            zip(result["per_round"], result["steps_per_round"], strict=True), start=1):
        print(f"  round {number}: " + ", ".join(f"{realism} / robosuite {ratio:.2f}x"
                                                for realism, ratio in ratios.items())
              + " (steps/s: " + ", ".join(f"{name} {value:.1f}"
                                          for name, value in steps.items()) + ")")
    for realism, ratio in result["ratio_to_robosuite"].items():
        check = ""
        if realism == "realistic":
            check = (f"  (target >= {ROBOSUITE_RATIO_TARGET:g}: "
                     f"{'PASS' if ratio >= ROBOSUITE_RATIO_TARGET else 'MISS'})")
        print(f"  {realism} / robosuite (median of rounds): {ratio:.2f}x{check}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    wall = time.perf_counter() - start
    record_measurements(args.db, [
        measurement("bench-robosuite", {"world": realism, "steps": args.steps,
                                        "rounds": args.rounds, "seed": args.seed},
                    figures, wall)
        for realism, figures in world_figures(result).items()])
    print_report_command(args.db, "measurements")
    return 0 if result["ratio_to_robosuite"]["realistic"] >= ROBOSUITE_RATIO_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
