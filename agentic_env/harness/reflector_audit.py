"""MALLVI's Reflector measured against the simulator's truth (privileged harness code).

Every ``reflection`` decision of a ``mallvi`` episode (the Reflector's ``task_complete`` on
one move) is compared, at the moment it is made, with the truth of that move in the
simulator (:func:`~agentic_env.agents.models.oracle_mallvi.subtask_truth`). Per task and
injected Reflector error rate this gives the Reflector's precision and recall ("complete" is
the positive class), its false-"complete" rate (a failed move waved through: the dangerous
error) and the episodes' success rate, i.e. the compounding curve of Reflector errors.

``python -m agentic_env.harness.reflector_audit --tasks sorting stacking --seeds 5000:3
--rates 0 0.2`` prints the table and writes it as JSON.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agentic_env.agents.models.oracle_mallvi import subtask_truth
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.runner import run_episode


@dataclass(frozen=True)
class Judged:
    """One Reflector verdict and the truth it is scored against.

    Attributes:
        index: the move's place in the decomposition. attempt: 1 = first try.
        verdict: the Reflector said ``task_complete``. truth: the move holds in the sim.
        actor_ok: the Actor's primitives all ran.
    """

    index: int
    attempt: int
    verdict: bool
    truth: bool
    actor_ok: bool


def audit_episode(spec: EpisodeSpec) -> tuple[bool, list[Judged]]:
    """Run ``spec`` (a ``mallvi`` episode); its success and every verdict with its truth."""
    judged: list[Judged] = []

    def hook(env: SimEnv, event: dict[str, Any]) -> None:
        if event.get("kind") == "reflection":
            truth = subtask_truth(env, str(event["source"]), str(event["destination"]),
                                  event.get("place_point"))
            judged.append(Judged(int(event["index"]), int(event["attempt"]),
                                 bool(event["task_complete"]), truth,
                                 bool(event.get("actor_ok"))))

    result = run_episode(spec, video=False, on_agent_event=hook)
    return result.success, judged


def confusion(judged: Iterable[Judged]) -> dict[str, float | int | None]:
    """Counts and rates of verdicts against the truth ("complete" positive); a rate with
    an empty denominator is ``None``."""
    items = list(judged)
    tp = sum(j.verdict and j.truth for j in items)
    fp = sum(j.verdict and not j.truth for j in items)
    fn = sum(not j.verdict and j.truth for j in items)
    tn = sum(not j.verdict and not j.truth for j in items)

    def rate(num: int, den: int) -> float | None:
        return None if den == 0 else num / den

    return {"verdicts": len(items), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "precision": rate(tp, tp + fp), "recall": rate(tp, tp + fn),
            "false_complete": rate(fp, fp + tn)}


def audit_specs(tasks: Sequence[str], seeds: Sequence[int], rates: Sequence[float],
                setting: str = "lab") -> list[EpisodeSpec]:
    """The ``mallvi`` episodes of the audit: every task x seed x Reflector error rate."""
    def model(rate: float) -> str:
        return "sim-oracle" if rate == 0 else f"sim-oracle?reflector={rate:g}"
    return [EpisodeSpec(task, setting, seed=seed, agent="mallvi", model=model(rate))
            for task in tasks for rate in rates for seed in seeds]


def rows(specs: Sequence[EpisodeSpec], outcomes: Sequence[tuple[bool, list[Judged]]]
         ) -> list[dict[str, Any]]:
    """One row per task x model: episodes, success rate and the verdicts' confusion."""
    groups: dict[tuple[str, str], list[tuple[bool, list[Judged]]]] = {}
    for spec, outcome in zip(specs, outcomes, strict=True):
        groups.setdefault((spec.task, spec.model), []).append(outcome)
    return [{"task": task, "model": model, "episodes": len(group),
             "success": sum(ok for ok, _ in group) / len(group),
             **confusion(j for _, judged in group for j in judged)}
            for (task, model), group in groups.items()]


def format_rows(table: Sequence[dict[str, Any]]) -> str:
    """The audit as a fixed-width text table."""
    def num(value: float | None) -> str:
        return "  -  " if value is None else f"{value:5.2f}"
    lines = [f"{'task':<10} {'model':<28} {'eps':>3} {'succ':>5} {'verd':>4} {'tp':>3} "
             f"{'fp':>3} {'fn':>3} {'tn':>3} {'prec':>5} {'rec':>5} {'falseC':>6}"]
    for r in table:
        lines.append(f"{r['task']:<10} {r['model']:<28} {r['episodes']:>3} "
                     f"{num(r['success'])} {r['verdicts']:>4} {r['tp']:>3} {r['fp']:>3} "
                     f"{r['fn']:>3} {r['tn']:>3} {num(r['precision'])} {num(r['recall'])} "
                     f"{num(r['false_complete']):>6}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the audit and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="+", default=["sorting", "stacking"])
    parser.add_argument("--seeds", default="5000:3", help="START:COUNT")
    parser.add_argument("--rates", nargs="+", type=float, default=[0.0, 0.2])
    parser.add_argument("--setting", default="lab")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("reflector_audit.json"))
    args = parser.parse_args(argv)
    start, _, count = args.seeds.partition(":")
    seeds = list(range(int(start), int(start) + int(count)))
    specs = audit_specs(args.tasks, seeds, args.rates, args.setting)
    with ProcessPoolExecutor(args.workers,
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        outcomes = list(pool.map(audit_episode, specs))
    table = rows(specs, outcomes)
    print(format_rows(table))
    args.out.write_text(json.dumps({"rows": table, "episodes": [
        {"spec": s.to_dict(), "success": ok, "verdicts": [asdict(j) for j in judged]}
        for s, (ok, judged) in zip(specs, outcomes, strict=True)]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
