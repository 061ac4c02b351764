"""``agentic-env bench-agent``: an agent with the sim-oracle, measured.

Part 1 runs ``--agent`` (default AgenticLab) with ``--model`` (default the perfect
sim-oracle) over the seeds ``--seeds START:COUNT`` of every task in every ``--settings``
setting (verification ``full``; with ``--instruction-categories``, in each of those paraphrase
categories) and prints success rate, progress score, actions, replans, wall time and model
calls per task x setting (x category), then each failed episode with its failure. Part 2
injects action-checker errors (rates ``--checker-errors``, default 0.1 and 0.3; the flag with
no rates skips part 2) in the ``full`` and ``goal`` verification modes on the ablation tasks
in the first setting, so the compounding of module errors and the verification ablation show
in one table. Part 3 (``--interventions``, :mod:`agentic_env.cli.bench.interventions`) runs
trial kinds with events and prints the intervention table. Episodes run in spawned worker
processes (:mod:`agentic_env.bench.agent`); each is recorded into the results database
``--db`` (default ``runs/bench_agent.db``; ``agentic-env report DB`` shows them), and the
tables and episodes are also written as JSON (``--out``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agentic_env.agents.base import agent_entry
from agentic_env.agents.models.registry import parse_module_map
from agentic_env.bench.agent import checker_groups, format_rows, run_all, summarise, task_groups
from agentic_env.bench.interventions import intervention_groups
from agentic_env.cli.bench import add_db_argument, print_report_command
from agentic_env.cli.bench import interventions as bench_interventions
from agentic_env.cli.realism import add_realism_argument
from agentic_env.cli.run import parse_agent_options
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.settings import available_settings
from agentic_env.tasks import BENCHMARK_TASKS
from agentic_env.tasks.instructions import CATEGORIES


def parse_seeds(text: str) -> range:
    """``"START:COUNT"`` (or ``"COUNT"``, from 0) as the range of seeds.

    Raises:
        InvalidConfigError: not two non-negative integers.
    """
    start, sep, count = text.partition(":")
    if not sep:
        start, count = "0", text
    if not (start.isdigit() and count.isdigit()):
        raise InvalidConfigError(f"--seeds {text!r}: write START:COUNT (e.g. 5000:20) or COUNT")
    return range(int(start), int(start) + int(count))


def parse_settings(text: str) -> list[str]:
    """A comma-separated list of settings.

    Raises:
        InvalidConfigError: an unknown setting (the message lists the valid ones).
    """
    settings = [s.strip() for s in text.split(",") if s.strip()]
    valid = available_settings()
    unknown = [s for s in settings if s not in valid]
    if unknown or not settings:
        raise InvalidConfigError(f"--settings {text!r}: unknown {', '.join(unknown) or 'none'};"
                                 f" valid: {', '.join(valid)}")
    return settings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentic-env bench-agent", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="0:10",
                        help="START:COUNT, or COUNT from seed 0 (default 0:10)")
    parser.add_argument("--settings", default="lab",
                        help="comma-separated settings, e.g. kitchen,outdoor (default lab)")
    parser.add_argument("--tasks", nargs="+", default=list(BENCHMARK_TASKS),
                        choices=BENCHMARK_TASKS)
    parser.add_argument("--agent", default="agenticlab",
                        help="registered agent or module:attr (default agenticlab)")
    parser.add_argument("--agent-option", action="append", default=[], metavar="KEY=VALUE",
                        help="agent switch, repeatable (as for agentic-env run)")
    parser.add_argument("--instruction-categories", nargs="+", default=[None],
                        choices=CATEGORIES, metavar="CATEGORY",
                        help="paraphrase categories of part 1, each its own row (default: "
                        "the task's default instruction); e.g. ALRM's canonical lexical "
                        "syntactic semantic high_level")
    parser.add_argument("--model", default="sim-oracle",
                        help="model spec of part 1 (default: the perfect sim-oracle)")
    parser.add_argument("--modules", default="",
                        help="per-module overrides of part 1, as for agentic-env run, e.g. "
                        "'parser=sim-oracle?names=described' (a parser naming things its own "
                        "way)")
    parser.add_argument("--ablation-tasks", nargs="*", default=["sorting", "stacking"],
                        choices=BENCHMARK_TASKS)
    parser.add_argument("--checker-errors", nargs="*", type=float, default=[0.1, 0.3],
                        help="checker error rates of part 2 (default 0.1 0.3); give the flag "
                             "with no rates to skip part 2")
    bench_interventions.add_arguments(parser)
    add_realism_argument(parser)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("bench_agent.json"))
    add_db_argument(parser, "bench_agent")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its tables; 2 on a usage error."""
    args = _parser().parse_args(argv)
    try:
        seeds, settings = parse_seeds(args.seeds), parse_settings(args.settings)
        given = parse_agent_options(args.agent_option)
        agent_entry(args.agent).check_options(given)
        kinds = bench_interventions.parse_kinds(args.interventions)
        modules = tuple(sorted(parse_module_map(args.modules).items())) if args.modules \
            else ()
    except InvalidConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    common = {"agent": args.agent, "agent_options": tuple(sorted(given.items())),
              "realism": args.realism}
    groups = task_groups(args.tasks, settings, seeds, args.model, modules, args.modules,
                         args.instruction_categories, common)
    main_labels = list(groups)
    groups |= checker_groups(args.ablation_tasks, settings[0], seeds, args.checker_errors,
                             common)
    parts = (intervention_groups(kinds, args.tasks, settings[0], seeds, args.model,
                                 args.error_model, args.repeats, common) if kinds else {})
    specs = [spec for group in [*groups.values(), *parts.values()] for spec in group]
    results = dict(zip(specs, run_all(specs, args.workers, args.db), strict=True))
    print(f"\nPer episode ({args.agent}, {args.model}, full verification):")
    for label in main_labels:
        for spec in groups[label]:
            r = results[spec]
            print(f"  {spec.task:<14} {spec.setting:<8} {spec.instruction_category or '':<10} "
                  f"seed {spec.seed:<5} success "
                  f"{r.success!s:<6} score {r.score:4.2f}  actions {r.actions:3d}  replans "
                  f"{r.replans}  {r.wall_s:6.1f} s  {r.failure or ''}")
    rows = [summarise(label, (results[s] for s in group)) for label, group in groups.items()]
    print("\n" + format_rows(rows))
    failed = [results[s] for label in main_labels for s in groups[label]
              if not results[s].success]
    if failed:
        print("\nFailures:")
        for r in failed:
            print(f"  {r.spec.task} / {r.spec.setting} / "
                  f"{r.spec.instruction_category or 'default'} / seed {r.spec.seed}: "
                  f"{r.failure}: {r.failure_detail}"[:300])
    tables = bench_interventions.report(parts, results, args.error_model) if parts else {}
    args.out.write_text(json.dumps({"rows": rows, "interventions": tables, "episodes": [
        results[s].to_dict() for s in specs]}, indent=1, default=str))
    print(f"\nwrote {args.out}")
    print_report_command(args.db)
    return 0
