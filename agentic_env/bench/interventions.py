"""Part 3 of ``agentic-env bench-agent``: the intervention trials.

Every trial kind (:data:`agentic_env.tasks.variants.KINDS`) on the seeds of every task,
first with one model (the perfect sim-oracle by default), then once per repeat with injected
errors (each repeat another error seed, :func:`with_seed`); the tables per kind (recovery
(success) rate, e-stop compliance, refusal rate on impossible instructions, verbal-only rate,
event-check compliance, stale placements, motions and the std of the success rate over the
repeats) are :mod:`agentic_env.harness.interventions`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.interventions import intervention_rows

#: The paper's failure modes at moderate rates (planner errors, router and critic flips).
DEFAULT_ERRORS = ("sim-oracle?verbal=0.1&skip_events=0.1&repeat_events=0.05&blind_place=0.2"
                  "&router=0.05&critic=0.05")


def with_seed(model: str, seed: int) -> str:
    """``model`` with the sim-oracle's error seed ``seed``."""
    return f"{model}{'&' if '?' in model else '?'}seed={seed}"


def intervention_groups(kinds: Sequence[str], tasks: Sequence[str], setting: str, seeds: range,
                        model: str, error_model: str, repeats: int, common: dict[str, Any]
                        ) -> dict[str, list[EpisodeSpec]]:
    """The part's episodes: a ``perfect`` group with ``model`` and ``repeat N`` groups
    (N = 1..``repeats``) with ``error_model`` at error seed N; ``common``: the
    :class:`EpisodeSpec` fields every episode shares."""
    def specs(spec_model: str) -> list[EpisodeSpec]:
        return [EpisodeSpec(task, setting, seed=s, model=spec_model, kind=kind, **common)
                for kind in kinds for task in tasks for s in seeds]

    out = {"perfect": specs(model)}
    for repeat in range(1, repeats + 1):
        out[f"repeat {repeat}"] = specs(with_seed(error_model, repeat))
    return out


def intervention_tables(parts: dict[str, list[EpisodeSpec]],
                        results: dict[EpisodeSpec, EpisodeResult]
                        ) -> dict[str, list[dict[str, Any]]]:
    """The table rows (JSON-ready) of the ``perfect`` group and, over the repeats, of the
    runs with injected errors (``with_errors``: empty without repeats)."""
    perfect = [results[s] for s in parts["perfect"]]
    runs = [[results[s] for s in group] for name, group in parts.items() if name != "perfect"]
    noisy = intervention_rows([r for run in runs for r in run], runs) if runs else []
    return {"perfect": intervention_rows(perfect), "with_errors": noisy}
