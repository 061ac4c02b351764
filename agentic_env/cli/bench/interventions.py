"""Part 3 of ``agentic-env bench-agent``: the intervention table.

``--interventions KIND ... | all`` runs every trial kind (:data:`agentic_env.tasks.variants.
KINDS`) on the seeds of every task, first with ``--model`` (the perfect sim-oracle by
default), then ``--repeats`` times with the injected errors of ``--error-model`` (each
repeat another error seed), and prints per kind: recovery (success) rate, e-stop compliance,
refusal rate on impossible instructions, verbal-only rate, event-check compliance, stale
placements, motions and the std of the success rate over the repeats
(:mod:`agentic_env.harness.interventions`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.interventions import format_table, intervention_rows
from agentic_env.tasks.variants import KINDS

#: The paper's failure modes at moderate rates (planner errors, router and critic flips).
DEFAULT_ERRORS = ("sim-oracle?verbal=0.1&skip_events=0.1&repeat_events=0.05&blind_place=0.2"
                  "&router=0.05&critic=0.05")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The part's options."""
    parser.add_argument("--interventions", nargs="*", default=[], metavar="KIND",
                        help=f"trial kinds of part 3 ({', '.join(KINDS)}) or 'all'; "
                             "none given: no part 3")
    parser.add_argument("--repeats", type=int, default=5,
                        help="part 3: runs with injected errors, one error seed each "
                             "(default 5)")
    parser.add_argument("--error-model", default=DEFAULT_ERRORS,
                        help="part 3: model spec with the injected errors")


def parse_kinds(values: Sequence[str]) -> list[str]:
    """The kinds of ``--interventions`` (``all`` = every kind).

    Raises:
        InvalidConfigError: an unknown kind.
    """
    kinds = list(KINDS) if "all" in values else list(values)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise InvalidConfigError(f"--interventions: unknown {', '.join(unknown)}; valid: "
                                 f"{', '.join(KINDS)}, all")
    return kinds


def with_seed(model: str, seed: int) -> str:
    """``model`` with the sim-oracle's error seed ``seed``."""
    return f"{model}{'&' if '?' in model else '?'}seed={seed}"


def groups(args: argparse.Namespace, kinds: list[str], tasks: Sequence[str], setting: str,
           seeds: range, common: dict[str, Any]) -> dict[str, list[EpisodeSpec]]:
    """The part's episodes: ``perfect`` and ``repeat N`` groups."""
    def specs(model: str) -> list[EpisodeSpec]:
        return [EpisodeSpec(task, setting, seed=s, model=model, kind=kind, **common)
                for kind in kinds for task in tasks for s in seeds]

    out = {"perfect": specs(args.model)}
    for repeat in range(1, args.repeats + 1):
        out[f"repeat {repeat}"] = specs(with_seed(args.error_model, repeat))
    return out


def report(parts: dict[str, list[EpisodeSpec]], results: dict[EpisodeSpec, EpisodeResult],
           error_model: str) -> dict[str, Any]:
    """Print the tables; their rows (JSON-ready)."""
    perfect = [results[s] for s in parts["perfect"]]
    runs = [[results[s] for s in group] for name, group in parts.items() if name != "perfect"]
    rows = intervention_rows(perfect)
    print(f"\nInterventions, {parts['perfect'][0].model} (per trial kind):")
    print(format_table(rows))
    noisy: list[dict[str, Any]] = []
    if runs:
        noisy = intervention_rows([r for run in runs for r in run], runs)
        print(f"\nInterventions, {len(runs)} repeats with injected errors ({error_model}); "
              "std(rep) = std of the success rate over the repeats:")
        print(format_table(noisy))
    crashed = [r for r in results.values() if r.error is not None]
    for r in crashed:
        print(f"  crashed: {r.spec.task} / {r.spec.kind} / seed {r.spec.seed} / "
              f"{r.spec.model}: {r.failure_detail}"[:300])
    return {"perfect": rows, "with_errors": noisy}
