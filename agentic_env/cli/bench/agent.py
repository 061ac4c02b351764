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
processes; results are also written as JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import statistics
import sys
import traceback
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from tqdm import tqdm

from agentic_env.agents.base import agent_entry
from agentic_env.agents.models.registry import parse_module_map
from agentic_env.cli.bench import interventions as bench_interventions
from agentic_env.cli.realism import add_realism_argument
from agentic_env.cli.run import parse_agent_options
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.sim.settings import available_settings
from agentic_env.tasks import BENCHMARK_TASKS
from agentic_env.tasks.instructions import CATEGORIES


def _run(spec: EpisodeSpec) -> EpisodeResult:
    """One episode; a crash is recorded as a failed episode with its traceback."""
    from agentic_env.harness.runner import run_episode

    try:
        return run_episode(spec)
    except Exception:  # the benchmark goes on; the traceback is in the results
        return EpisodeResult(spec, success=False, progress=0.0, score=0.0, failure="error",
                             failure_detail="the episode crashed",
                             error=traceback.format_exc())


def run_all(specs: list[EpisodeSpec], workers: int) -> list[EpisodeResult]:
    """Run ``specs`` on ``workers`` spawned processes, with a progress bar."""
    context = multiprocessing.get_context("spawn")
    results = []
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = [pool.submit(_run, spec) for spec in specs]
        for future in tqdm(as_completed(futures), total=len(futures), desc="episodes",
                           unit="ep"):
            results.append(future.result())
    order = {spec: index for index, spec in enumerate(specs)}
    return sorted(results, key=lambda r: order[r.spec])


def summarise(label: str, results: Iterable[EpisodeResult]) -> dict[str, float | str | int]:
    """One table row: success rate, means of score, actions, replans, wall time, model
    calls, their latency (s, summed over the episode's calls) and tokens per episode; for
    agents judged
    by ALRM's trace judge also its success rate (sum of scores / 2n) and the share of
    episodes where judge and world state disagree (``nan`` when none was judged; printed
    as ``-``)."""
    results = list(results)
    judged = [(r.judge_score, r.success) for r in results if r.judge_score is not None]
    return {
        "config": label,
        "episodes": len(results),
        "success": sum(r.success for r in results) / len(results),
        "score": statistics.fmean(r.score for r in results),
        "actions": statistics.fmean(r.actions for r in results),
        "replans": statistics.fmean(r.replans for r in results),
        "wall_s": statistics.fmean(r.wall_s for r in results),
        "calls": statistics.fmean(len(r.calls) for r in results),
        "model_s": statistics.fmean(r.model_s for r in results),
        "tokens": statistics.fmean(r.input_tokens + r.output_tokens for r in results),
        "judge": (sum(score for score, _ in judged) / (2 * len(judged)) if judged
                  else float("nan")),
        "disagree": (sum((score == 2) != ok for score, ok in judged) / len(judged)
                     if judged else float("nan")),
    }


def format_rows(rows: list[dict[str, float | str | int]]) -> str:
    """A fixed-width text table of :func:`summarise` rows."""
    lines = [f"{'config':<46}{'n':>4}{'success':>9}{'score':>7}{'actions':>9}{'replans':>9}"
             f"{'wall s':>8}{'calls':>7}{'model s':>9}{'tokens':>8}{'judge':>7}"
             f"{'disagree':>9}"]
    for row in rows:
        lines.append(f"{row['config']:<46}{row['episodes']:>4}{row['success']:>9.0%}"
                     f"{row['score']:>7.2f}{row['actions']:>9.1f}{row['replans']:>9.1f}"
                     f"{row['wall_s']:>8.1f}{row['calls']:>7.1f}{row['model_s']:>9.2f}"
                     f"{row['tokens']:>8.0f}"
                     f"{_share(row['judge']):>7}{_share(row['disagree']):>9}")
    return "\n".join(lines)


def _share(value: float) -> str:
    """A rate as a percentage, ``-`` when there was nothing to measure (``nan``)."""
    return "-" if math.isnan(value) else f"{value:.0%}"


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
    groups: dict[str, list[EpisodeSpec]] = {}
    main_labels = []
    for task in args.tasks:
        for setting in settings:
            for category in args.instruction_categories:
                label = (f"{task} / {setting} / {args.model}{' ' + args.modules if modules else ''}"
                         f" / " + (category or "full"))
                main_labels.append(label)
                groups[label] = [EpisodeSpec(task, setting, seed=s, model=args.model,
                                             modules=modules, instruction_category=category,
                                             **common)
                                 for s in seeds]
    for task in args.ablation_tasks:
        for rate in args.checker_errors:
            for mode in ("full", "goal"):
                groups[f"{task} / checker={rate:g} / {mode}"] = [
                    EpisodeSpec(task, settings[0], seed=s, model=f"sim-oracle?checker={rate:g}",
                                verification=mode, **common) for s in seeds]
    parts = (bench_interventions.groups(args, kinds, args.tasks, settings[0], seeds, common)
             if kinds else {})
    specs = [spec for group in [*groups.values(), *parts.values()] for spec in group]
    results = dict(zip(specs, run_all(specs, args.workers), strict=True))
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
    return 0
