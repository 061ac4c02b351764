"""Scripted-expert benchmark over tasks x settings (``agentic-env bench-tasks``).

Runs the privileged scripted expert (Fast Downward reference plan, ground-truth grasps,
replanning after failed steps) for ``--seeds`` seeds in every task x setting cell, in
``--workers`` spawned processes (:mod:`agentic_env.bench.tasks`), and prints the success rate
and mean wall time per episode of each cell (target: >= 90 % success everywhere). Writes every
episode to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict
from pathlib import Path

from agentic_env.bench.tasks import SUCCESS_TARGET, format_table, run_expert_episodes, summarise


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
    parser.add_argument("--resolution", type=int, default=320,
                        help="camera width in pixels (16:9; default 320)")
    parser.add_argument("--out", type=Path, default=Path("runs/bench_tasks.json"))
    parser.add_argument("--strict", action="store_true", help="exit 1 if a cell misses")
    args = parser.parse_args(argv)
    results = run_expert_episodes(args.tasks, args.settings, args.seeds, args.resolution,
                                  args.workers)
    rows = summarise(results)
    print(format_table(rows))
    for failure in (r for r in results if r.error):
        print(f"error in {failure.task}/{failure.setting}/seed {failure.seed}: {failure.error}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"cells": rows, "episodes": [asdict(r) for r in results]},
                                   indent=2))
    print(f"JSON report: {args.out}")
    missed = any(row["success_rate"] < SUCCESS_TARGET for row in rows)
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
