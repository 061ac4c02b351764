"""Reserved seed ranges: demonstrations and evaluations never share a layout.

A trial's seed fixes its objects and their layout (:class:`agentic_env.contract.trial.TrialSpec`),
so a policy evaluated on a seed it was trained on is tested on a scene it has seen. Every
command that records demonstrations (``agentic-env collect``, ``train-policy``, the π0.5
script) draws from :data:`DEMONSTRATION_SEEDS`; everything that evaluates (sweeps,
``--agent policy``, ``lerobot-eval`` through the plugin) uses :data:`EVALUATION_SEEDS`.
Datasets record the seeds they hold, and :func:`check_disjoint` refuses an evaluation that
would reuse one.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentic_env.errors import InvalidConfigError

#: Seeds an evaluation may use: every paper sweep, CI sweep and ``lerobot-eval`` default
#: (LeRobot starts at seed 1000) lies here.
EVALUATION_SEEDS = range(0, 1_000_000)
#: Seeds reserved for demonstrations (scripted-expert data for imitation learning).
DEMONSTRATION_SEEDS = range(1_000_000, 2_000_000)
#: First demonstration seed: the default of every collecting command.
DEMONSTRATION_SEED_START = DEMONSTRATION_SEEDS.start


def describe(seeds: range) -> str:
    """``"1000000-1999999"``: a range as people write it (both ends included)."""
    return f"{seeds.start}-{seeds.stop - 1}"


def check_demonstration_seeds(seeds: Iterable[int]) -> None:
    """Refuse demonstration seeds outside :data:`DEMONSTRATION_SEEDS`, naming both ranges."""
    outside = sorted(s for s in seeds if s not in DEMONSTRATION_SEEDS)
    if outside:
        raise InvalidConfigError(
            f"demonstration seed(s) {_short(outside)} lie outside the demonstration range "
            f"{describe(DEMONSTRATION_SEEDS)} (evaluations use {describe(EVALUATION_SEEDS)}); "
            f"start collecting at --seed-start {DEMONSTRATION_SEED_START}")


def check_evaluation_seeds(seeds: Iterable[int]) -> None:
    """Refuse evaluation seeds outside :data:`EVALUATION_SEEDS`, naming both ranges."""
    outside = sorted(s for s in seeds if s not in EVALUATION_SEEDS)
    if outside:
        raise InvalidConfigError(
            f"evaluation seed(s) {_short(outside)} lie outside the evaluation range "
            f"{describe(EVALUATION_SEEDS)}: {describe(DEMONSTRATION_SEEDS)} is reserved for "
            f"demonstrations")


def check_disjoint(evaluation: Iterable[int], training: Iterable[int],
                   dataset: str = "the training data") -> None:
    """Refuse an evaluation that reuses a layout ``dataset`` was trained on.

    Args:
        evaluation: the seeds about to be evaluated.
        training: the seeds the policy's demonstrations came from (as the dataset records).
        dataset: how to name the training data in the error.
    """
    shared = sorted(set(evaluation) & set(training))
    if shared:
        raise InvalidConfigError(
            f"evaluation seed(s) {_short(shared)} are layouts {dataset} was trained on; "
            f"evaluate on {describe(EVALUATION_SEEDS)} and collect demonstrations from "
            f"{describe(DEMONSTRATION_SEEDS)}")


def _short(seeds: list[int], limit: int = 5) -> str:
    text = ", ".join(str(s) for s in seeds[:limit])
    return text + (f" and {len(seeds) - limit} more" if len(seeds) > limit else "")
