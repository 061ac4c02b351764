"""``agentic-env bench-world``: the realistic world's budget, measured per agent, task and setting.

Runs every ``--agents`` agent with the perfect sim-oracle (every model answer exact, so every
failure is the world's or the agent's own logic) on every ``--tasks`` task in every
``--settings`` setting, on the seeds ``--seeds START:COUNT``, in the ideal world, the
realistic one and the realistic one with each ``--effects`` effect alone (the same layouts),
and prints per agent x task x setting (:mod:`agentic_env.bench.world`,
:mod:`agentic_env.bench.world_budget`):

* success in the ideal and the realistic world, and recoveries (successes that needed more
  actions than the reference plan or a replan) in each;
* the world's failure rate: trials that succeed in the ideal world and fail in the realistic
  one, of the ideal world's successes, with their causes (no detection, depth hole, false
  obstacle, calibration offset, slip, collision, other) from each first failure's sentence;
* the same count per effect alone, then per effect which causes it produces and where
  (``--effects-on broken``: each effect alone only on the trials the realistic world broke,
  to tell which effect reproduces each of its failures at a fraction of the episodes);
* the paper's bound beside lab sorting (AgenticLab with a perfect model: realistic success
  >= 75 %, PASS or MISS; ``--bound-seeds`` runs that cell on more seeds), and whether the
  realistic world still fails somewhere;
* every realistic failure with its cause, first failing source and sentence.

Episodes run in spawned worker processes; every one is recorded in the results database
``--db`` (default ``runs/bench_world.db``; ``agentic-env report DB`` shows them) and the
results are also written as JSON::

    agentic-env bench-world --seeds 52000:2 --bound-seeds 52002:8 --workers 2
    agentic-env bench-world --seeds 52000:1 --effects none --settings lab --tasks sorting
    agentic-env bench-world --seeds 52000:1 --effects-on broken   # effects where it broke
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agentic_env.agents.base import agent_names
from agentic_env.bench.agent import run_all
from agentic_env.bench.world import effect_specs, episode_record, load_results, world_specs
from agentic_env.bench.world_budget import (
    REALISTIC,
    bound_line,
    classify_failure,
    format_budget,
    format_effects,
    still_fails_line,
    world_cells,
    world_of,
)
from agentic_env.cli.bench import add_db_argument, print_report_command
from agentic_env.cli.bench.agent import parse_seeds, parse_settings
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.realism.world import WORLD_EFFECTS
from agentic_env.sim.settings import available_settings
from agentic_env.tasks import BENCHMARK_TASKS

#: The built-in agents measured by default.
DEFAULT_AGENTS = ("agenticlab", "mallvi", "alrm", "planner-executor")


def parse_effects(text: str) -> tuple[str, ...]:
    """A comma-separated list of world effects to run alone; ``all`` = every effect of
    :data:`~agentic_env.sim.realism.world.WORLD_EFFECTS`, ``none`` = none.

    Raises:
        InvalidConfigError: an unknown effect (the message lists the valid ones).
    """
    if text.strip() == "all":
        return WORLD_EFFECTS
    if text.strip() == "none":
        return ()
    effects = tuple(dict.fromkeys(e.strip() for e in text.split(",") if e.strip()))
    unknown = [e for e in effects if e not in WORLD_EFFECTS]
    if unknown or not effects:
        raise InvalidConfigError(f"--effects {text!r}: unknown {', '.join(unknown) or 'none'}; "
                                 f"valid: all, none, {', '.join(WORLD_EFFECTS)}")
    return effects


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentic-env bench-world", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="34000:2",
                        help="START:COUNT, or COUNT from seed 0 (default 34000:2)")
    parser.add_argument("--settings", default=",".join(available_settings()),
                        help="comma-separated settings (default all: "
                             f"{','.join(available_settings())})")
    parser.add_argument("--tasks", nargs="+", default=list(BENCHMARK_TASKS),
                        choices=(*BENCHMARK_TASKS, "sorting-cluttered"),
                        help="tasks (default the five benchmark tasks; sorting-cluttered is "
                             "Fig. 8a's clutter, where the paper's real robot misgrasps)")
    parser.add_argument("--agents", nargs="+", default=list(DEFAULT_AGENTS),
                        help=f"registered agents (default {' '.join(DEFAULT_AGENTS)}; "
                             f"registered: {', '.join(agent_names())})")
    parser.add_argument("--effects", default="all",
                        help="world effects to run alone, comma-separated, 'all' or 'none' "
                             f"(default all: {','.join(WORLD_EFFECTS)})")
    parser.add_argument("--effects-on", choices=("all", "broken"), default="all",
                        help="run the effects alone on every trial, or only on those the "
                             "realistic world broke (cheaper; default all)")
    parser.add_argument("--bound-seeds", default="0",
                        help="START:COUNT: more seeds for the bound's cell (agenticlab, "
                             "sorting, lab), beside --seeds (default none)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("bench_world.json"))
    add_db_argument(parser, "bench_world")
    parser.add_argument("--results", type=Path, default=None,
                        help="print the budget of a results file this command wrote instead "
                             "of running episodes (the other options are ignored)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run every world and print the budget; 2 on a usage error."""
    args = _parser().parse_args(argv)
    try:
        if args.results is not None:
            results = load_results(args.results)
            worlds = {world_of(r.spec) for r in results}
            effects = tuple(effect for effect in WORLD_EFFECTS if effect in worlds)
            source = f"results {args.results}"
        else:
            seeds, settings = parse_seeds(args.seeds), parse_settings(args.settings)
            effects, bound_seeds = parse_effects(args.effects), parse_seeds(args.bound_seeds)
            source = f"seeds {args.seeds}, settings {', '.join(settings)}" + (
                f", bound cell also seeds {args.bound_seeds}" if bound_seeds else "")
    except InvalidConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.results is None:
        everywhere = args.effects_on == "all"
        results = run_all(world_specs(args.agents, args.tasks, settings, seeds,
                                      effects if everywhere else (), bound_seeds), args.workers,
                          args.db)
        if not everywhere:
            results += run_all(effect_specs(results, effects), args.workers, args.db)
            source += ", effects alone on the trials the realistic world broke"
    cells = world_cells(results)
    print(f"\nPerfect sim-oracle, {source}; world fails = realistic failures / ideal "
          "successes; per effect alone the same count")
    print(format_budget(cells, effects))
    if effects:
        print("\nEach effect alone: the ideal world's successes it breaks, by cause")
        print(format_effects(cells, effects))
    print()
    print(bound_line(cells))
    print(still_fails_line(cells))
    failures = [r for r in results if world_of(r.spec) == REALISTIC and not r.success]
    if failures:
        print("\nRealistic-world failures:")
        for r in failures:
            print(f"  {r.spec.agent} / {r.spec.task} / {r.spec.setting} / seed {r.spec.seed}: "
                  f"{classify_failure(r.failure, r.failure_detail)}: {r.failure}: "
                  f"{r.failure_detail}")
    if args.results is None:
        args.out.write_text(json.dumps({"episodes": [episode_record(r) for r in results]}, indent=2)
                            + "\n")
        print(f"results: {args.out}")
        print_report_command(args.db)
    return 0
