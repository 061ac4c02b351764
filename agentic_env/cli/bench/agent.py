"""``agentic-env bench-agent``: the AgenticLab pipeline with the sim-oracle, measured.

Part 1 runs the perfect sim-oracle over ``--seeds`` seeds of every task in the lab setting
(verification ``full``) and prints success rate, progress score, actions, replans and wall
time per episode. Part 2 injects action-checker errors (rates ``--checker-errors``) in the
``full`` and ``goal`` verification modes on the ablation tasks, so the compounding of module
errors and the verification ablation show in one table. Episodes run in spawned worker
processes; results are also written as JSON.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import traceback
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from tqdm import tqdm

from agentic_env.agents.episode import EpisodeResult, EpisodeSpec
from agentic_env.cli.run import TASKS


def _run(spec: EpisodeSpec) -> EpisodeResult:
    """One episode; a crash is recorded as a failed episode with its traceback."""
    from agentic_env.agents.runner import run_episode

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
    """One table row: success rate, means of score, actions, replans and wall time."""
    results = list(results)
    return {
        "config": label,
        "episodes": len(results),
        "success": sum(r.success for r in results) / len(results),
        "score": statistics.fmean(r.score for r in results),
        "actions": statistics.fmean(r.actions for r in results),
        "replans": statistics.fmean(r.replans for r in results),
        "wall_s": statistics.fmean(r.wall_s for r in results),
    }


def format_rows(rows: list[dict[str, float | str | int]]) -> str:
    """A fixed-width text table of :func:`summarise` rows."""
    lines = [f"{'config':<38}{'n':>4}{'success':>9}{'score':>7}{'actions':>9}{'replans':>9}"
             f"{'wall s':>8}"]
    for row in rows:
        lines.append(f"{row['config']:<38}{row['episodes']:>4}{row['success']:>9.0%}"
                     f"{row['score']:>7.2f}{row['actions']:>9.1f}{row['replans']:>9.1f}"
                     f"{row['wall_s']:>8.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its tables."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-agent", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--ablation-tasks", nargs="*", default=["sorting", "stacking"],
                        choices=TASKS)
    parser.add_argument("--checker-errors", nargs="*", type=float, default=[0.1, 0.3])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("bench_agent.json"))
    args = parser.parse_args(argv)
    groups: dict[str, list[EpisodeSpec]] = {}
    for task in args.tasks:
        groups[f"{task} / oracle / full"] = [EpisodeSpec(task, seed=s)
                                             for s in range(args.seeds)]
    for task in args.ablation_tasks:
        for rate in args.checker_errors:
            for mode in ("full", "goal"):
                groups[f"{task} / checker={rate:g} / {mode}"] = [
                    EpisodeSpec(task, seed=s, model=f"sim-oracle?checker={rate:g}",
                                verification=mode) for s in range(args.seeds)]
    specs = [spec for group in groups.values() for spec in group]
    results = dict(zip(specs, run_all(specs, args.workers), strict=True))
    print("\nPer episode (perfect sim-oracle, lab, full verification):")
    for task in args.tasks:
        for spec in groups[f"{task} / oracle / full"]:
            r = results[spec]
            print(f"  {task:<14} seed {spec.seed:<3} success {r.success!s:<6} score "
                  f"{r.score:4.2f}  actions {r.actions:3d}  replans {r.replans}  "
                  f"{r.wall_s:6.1f} s  {r.failure or ''}")
    rows = [summarise(label, (results[s] for s in group)) for label, group in groups.items()]
    print("\n" + format_rows(rows))
    args.out.write_text(json.dumps({"rows": rows, "episodes": [
        results[s].to_dict() for s in specs]}, indent=1, default=str))
    print(f"\nwrote {args.out}")
    return 0
