"""Scripted-expert benchmark over tasks x settings (``agentic-env bench-tasks``).

Runs the privileged scripted expert (Fast Downward reference plan, ground-truth grasps,
replanning after failed steps) for ``--seeds`` seeds in every task x setting cell, on
``--workers`` spawned processes of the harness's pool (:mod:`agentic_env.bench.tasks`), and
prints the success rate and mean wall time per episode of each cell (target: >= 90 % success
everywhere). Every episode is recorded into the results database ``--db`` (default
``runs/bench_tasks.db``; ``agentic-env report DB`` shows them); the cells and episodes are
also written to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from agentic_env.bench.tasks import (
    DEFAULT_RESOLUTION,
    SUCCESS_TARGET,
    expert_specs,
    format_table,
    run_expert_episodes,
    summarise,
)
from agentic_env.cli.bench import add_db_argument, print_report_command
from agentic_env.cli.realism import add_realism_argument


def main(argv: list[str] | None = None) -> int:
    """Run the sweep; return 1 with ``--strict`` if a cell misses the target."""
    from agentic_env.registry import ENV_IDS
    from agentic_env.sim.settings import available_settings

    tasks = [task for task in ENV_IDS.values() if task != "tabletop"]
    parser = argparse.ArgumentParser(prog="agentic-env bench-tasks", description=__doc__)
    parser.add_argument("--tasks", nargs="+", default=tasks, help=f"default: {tasks}")
    parser.add_argument("--settings", nargs="+", default=available_settings())
    parser.add_argument("--seeds", type=int, default=20, help="seeds per cell (default 20)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--resolution", type=int, default=DEFAULT_RESOLUTION,
                        help=f"camera width in pixels (16:9; default {DEFAULT_RESOLUTION})")
    add_realism_argument(parser)
    parser.add_argument("--out", type=Path, default=Path("runs/bench_tasks.json"))
    add_db_argument(parser, "bench_tasks")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a cell misses")
    args = parser.parse_args(argv)
    specs = expert_specs(args.tasks, args.settings, args.seeds, args.resolution, args.realism)
    results = run_expert_episodes(specs, args.workers, args.db)
    rows = summarise(results)
    print(format_table(rows))
    for failure in (r for r in results if r.failure == "error"):
        print(f"error in {failure.spec.task}/{failure.spec.setting}/seed {failure.spec.seed}: "
              f"{failure.failure_detail}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"cells": rows, "episodes": [r.to_dict() for r in results]},
                                   indent=2, default=str))
    print(f"JSON report: {args.out}")
    print_report_command(args.db)
    missed = any(row["success_rate"] < SUCCESS_TARGET for row in rows)
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
