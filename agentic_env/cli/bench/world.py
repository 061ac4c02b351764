"""``agentic-env bench-world``: what the realistic world breaks, per agent and task.

Runs every ``--agents`` agent with the perfect sim-oracle (every model answer exact, so every
failure is the world's or the agent's own logic) on every ``--tasks`` task in every
``--settings`` setting, on the seeds ``--seeds START:COUNT``, once in the ideal world and once
in the realistic one (the same layouts), and prints per agent and task:

* success in each world, and the realistic world's own failures: episodes that succeed in
  the ideal world and fail in the realistic one (the world's share of the failures);
* recoveries: successful episodes that needed more actions than the reference plan or a
  replan (a step failed and the agent coped), in each world;
* every realistic failure with its first failing source and sentence.

Episodes run in spawned worker processes; the results are also written as JSON::

    agentic-env bench-world --seeds 34000:2 --settings kitchen,outdoor --workers 2
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from agentic_env.agents.base import agent_names
from agentic_env.cli.bench.agent import parse_seeds, parse_settings, run_all
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.sim.realism import REALISM_LEVELS
from agentic_env.tasks import BENCHMARK_TASKS

#: The built-in agents measured by default.
DEFAULT_AGENTS = ("agenticlab", "mallvi", "alrm", "planner-executor")


def recovered(result: EpisodeResult) -> bool:
    """A success that needed more than the reference plan's actions, or a replan: some step
    failed or was undone and the agent coped."""
    return result.success and (result.replans > 0 or result.n_extra > 0)


def world_table(results: list[EpisodeResult]) -> list[dict[str, object]]:
    """Per agent and task: successes and recoveries in each world, the episodes the
    realistic world alone broke, and the realistic failures' first sources."""
    cells: dict[tuple[str, str], dict[str, dict[tuple[str, int], EpisodeResult]]] = \
        defaultdict(lambda: defaultdict(dict))
    for result in results:
        spec = result.spec
        cells[spec.agent, spec.task][spec.realism][spec.setting, spec.seed] = result
    rows = []
    for (agent, task), worlds in cells.items():
        ideal, realistic = worlds.get("ideal", {}), worlds.get("realistic", {})
        broken = [key for key, result in realistic.items()
                  if not result.success and key in ideal and ideal[key].success]
        sources: dict[str, int] = defaultdict(int)
        for result in realistic.values():
            if not result.success:
                sources[result.failure or "unknown"] += 1
        rows.append({
            "agent": agent, "task": task, "episodes": len(realistic),
            "ideal_success": sum(r.success for r in ideal.values()),
            "realistic_success": sum(r.success for r in realistic.values()),
            "broken_by_world": len(broken),
            "ideal_recovered": sum(recovered(r) for r in ideal.values()),
            "realistic_recovered": sum(recovered(r) for r in realistic.values()),
            "realistic_failure_sources": dict(sorted(sources.items())),
        })
    return rows


def format_table(rows: list[dict[str, object]]) -> str:
    """The table as text, one line per agent and task, then the totals per agent."""
    head = (f"{'agent':<17} {'task':<14} {'n':>3}  {'ideal':>5} {'real.':>5}  "
            f"{'world broke':>11}  {'recovered ideal/real.':>21}  realistic failures by source")
    lines = [head, "-" * len(head)]
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for row in rows:
        numbers = [row["episodes"], row["ideal_success"], row["realistic_success"],
                   row["broken_by_world"], row["ideal_recovered"], row["realistic_recovered"]]
        for index, value in enumerate(numbers):
            totals[str(row["agent"])][index] += int(value)  # type: ignore[call-overload]
        sources = ", ".join(f"{k} {v}" for k, v in row["realistic_failure_sources"].items()) \
            or "-"  # type: ignore[union-attr]
        lines.append(f"{row['agent']:<17} {row['task']:<14} {numbers[0]:>3}  {numbers[1]:>5} "
                     f"{numbers[2]:>5}  {numbers[3]:>11}  {numbers[4]:>10}/{numbers[5]:<10}  "
                     f"{sources}")
    lines.append("-" * len(head))
    for agent, (n, ideal, real, broke, rec_i, rec_r) in totals.items():
        lines.append(f"{agent:<17} {'all':<14} {n:>3}  {ideal:>5} {real:>5}  {broke:>11}  "
                     f"{rec_i:>10}/{rec_r:<10}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentic-env bench-world", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="34000:2",
                        help="START:COUNT, or COUNT from seed 0 (default 34000:2)")
    parser.add_argument("--settings", default="kitchen,outdoor",
                        help="comma-separated settings (default kitchen,outdoor)")
    parser.add_argument("--tasks", nargs="+", default=list(BENCHMARK_TASKS),
                        choices=BENCHMARK_TASKS)
    parser.add_argument("--agents", nargs="+", default=list(DEFAULT_AGENTS),
                        help=f"registered agents (default {' '.join(DEFAULT_AGENTS)}; "
                             f"registered: {', '.join(agent_names())})")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("bench_world.json"))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run both worlds and print the table; 2 on a usage error."""
    args = _parser().parse_args(argv)
    try:
        seeds, settings = parse_seeds(args.seeds), parse_settings(args.settings)
    except InvalidConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    specs = [EpisodeSpec(task, setting, seed=seed, agent=agent, realism=realism)
             for agent in args.agents for task in args.tasks for setting in settings
             for seed in seeds for realism in REALISM_LEVELS]
    results = run_all(specs, args.workers)
    rows = world_table(results)
    print(f"\nPerfect sim-oracle, seeds {args.seeds}, settings {', '.join(settings)}: "
          "successes per world")
    print(format_table(rows))
    failures = [r for r in results if r.spec.realism == "realistic" and not r.success]
    if failures:
        print("\nRealistic-world failures:")
        for r in failures:
            print(f"  {r.spec.agent} / {r.spec.task} / {r.spec.setting} / seed {r.spec.seed}: "
                  f"{r.failure}: {r.failure_detail}")
    args.out.write_text(json.dumps({"rows": rows, "episodes": [
        {"spec": r.spec.to_dict(), "success": r.success, "failure": r.failure,
         "failure_detail": r.failure_detail, "actions": r.actions, "replans": r.replans,
         "n_extra": r.n_extra} for r in results]}, indent=2) + "\n")
    print(f"results: {args.out}")
    return 0
