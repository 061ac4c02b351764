"""Part 3 of ``agentic-env bench-agent``: the intervention table's options and printing.

``--interventions KIND ... | all`` runs every trial kind (:data:`agentic_env.tasks.variants.
KINDS`) on the seeds of every task, first with ``--model`` (the perfect sim-oracle by
default), then ``--repeats`` times with the injected errors of ``--error-model`` (each
repeat another error seed), and prints per kind: recovery (success) rate, e-stop compliance,
refusal rate on impossible instructions, verbal-only rate, event-check compliance, stale
placements, motions and the std of the success rate over the repeats
(:mod:`agentic_env.bench.interventions`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from agentic_env.bench.interventions import DEFAULT_ERRORS, intervention_tables
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.interventions import format_table
from agentic_env.tasks.variants import KINDS


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


def report(parts: dict[str, list[EpisodeSpec]], results: dict[EpisodeSpec, EpisodeResult],
           error_model: str) -> dict[str, Any]:
    """Print the tables; their rows (JSON-ready)."""
    tables = intervention_tables(parts, results)
    print(f"\nInterventions, {parts['perfect'][0].model} (per trial kind):")
    print(format_table(tables["perfect"]))
    if tables["with_errors"]:
        repeats = len(parts) - 1
        print(f"\nInterventions, {repeats} repeats with injected errors ({error_model}); "
              "std(rep) = std of the success rate over the repeats:")
        print(format_table(tables["with_errors"]))
    for r in (r for r in results.values() if r.error is not None):
        print(f"  crashed: {r.spec.task} / {r.spec.kind} / seed {r.spec.seed} / "
              f"{r.spec.model}: {r.failure_detail}"[:300])
    return tables
