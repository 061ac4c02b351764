"""Reserved seed ranges: demonstrations and evaluations never share a layout.

A trial's seed fixes its objects and their layout (:class:`agentic_env.contract.trial.TrialSpec`),
so a policy evaluated on a seed it was trained on is tested on a scene it has seen. Every
command that records demonstrations (``agentic-env collect``, ``train-policy``, the π0.5
script) draws from :data:`DEMONSTRATION_SEEDS`; everything that evaluates (sweeps,
``--agent policy``, ``lerobot-eval`` through the plugin) uses :data:`EVALUATION_SEEDS`.
Datasets record the seeds they hold (:data:`SEEDS_FILE` in their ``meta/``), a checkpoint
records its dataset's (the same file in its ``pretrained_model/``), and
:func:`check_unseen` refuses an evaluation that would reuse one.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

from agentic_env.errors import InvalidConfigError

logger = logging.getLogger(__name__)

#: Seeds an evaluation may use: every paper sweep, CI sweep and ``lerobot-eval`` default
#: (LeRobot starts at seed 1000) lies here.
EVALUATION_SEEDS = range(0, 1_000_000)
#: Seeds reserved for demonstrations (scripted-expert data for imitation learning).
DEMONSTRATION_SEEDS = range(1_000_000, 2_000_000)
#: Seeds of the emulated models' calibration replica (:mod:`agentic_env.oracle.replica`):
#: no evaluated or demonstrated layout is ever calibrated on.
CALIBRATION_SEEDS = range(2_000_000, 3_000_000)
#: First demonstration seed: the default of every collecting command.
DEMONSTRATION_SEED_START = DEMONSTRATION_SEEDS.start
#: The file that records the trial seeds of a dataset's episodes: in the dataset's ``meta/``
#: (LeRobot reads only its own files there) and in a checkpoint's ``pretrained_model/``.
SEEDS_FILE = "demonstration_seeds.json"


def describe(seeds: range) -> str:
    """``"1000000-1999999"``: a range as people write it (both ends included)."""
    return f"{seeds.start}-{seeds.stop - 1}"


def check_demonstration_seeds(seeds: Iterable[int]) -> None:
    """Refuse demonstration seeds outside :data:`DEMONSTRATION_SEEDS`, naming both ranges."""
    _check_within(seeds, DEMONSTRATION_SEEDS, "demonstration",
                  f"(evaluations use {describe(EVALUATION_SEEDS)}); start collecting at "
                  f"--seed-start {DEMONSTRATION_SEED_START}")


def check_evaluation_seeds(seeds: Iterable[int]) -> None:
    """Refuse evaluation seeds outside :data:`EVALUATION_SEEDS`, naming both ranges."""
    _check_within(seeds, EVALUATION_SEEDS, "evaluation",
                  f": {describe(DEMONSTRATION_SEEDS)} is reserved for demonstrations")


def check_calibration_seeds(seeds: Iterable[int]) -> None:
    """Refuse calibration seeds outside :data:`CALIBRATION_SEEDS`, naming the ranges."""
    _check_within(seeds, CALIBRATION_SEEDS, "calibration",
                  f": {describe(EVALUATION_SEEDS)} is for evaluations and "
                  f"{describe(DEMONSTRATION_SEEDS)} for demonstrations")


def _check_within(seeds: Iterable[int], allowed: range, kind: str, advice: str) -> None:
    """Refuse ``seeds`` outside ``allowed``: "<kind> seed(s) ... lie outside ... <advice>"."""
    outside = sorted(s for s in seeds if s not in allowed)
    if outside:
        raise InvalidConfigError(
            f"{kind} seed(s) {_short(outside)} lie outside the {kind} range "
            f"{describe(allowed)}{'' if advice.startswith(':') else ' '}{advice}")


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


def check_unseen(evaluation: Iterable[int], training: Iterable[int] | None,
                 dataset: str = "the training data") -> None:
    """Refuse evaluation seeds outside :data:`EVALUATION_SEEDS` or among ``training``.

    Args:
        evaluation: the seeds about to be evaluated.
        training: the seeds the policy's demonstrations came from; ``None`` when unknown (a
            dataset or checkpoint made before seeds were recorded): then only the range is
            checked, and a warning says that disjointness cannot be.
        dataset: how to name the training data in the error or warning.

    Raises:
        InvalidConfigError: naming both ranges.
    """
    evaluation = list(evaluation)
    check_evaluation_seeds(evaluation)
    if training is None:
        logger.warning("%s records no demonstration seeds (made before they were recorded): "
                       "cannot check that evaluation seed(s) %s were never trained on; "
                       "collect demonstrations from %s and train again to have it checked",
                       dataset, _short(sorted(evaluation)), describe(DEMONSTRATION_SEEDS))
        return
    check_disjoint(evaluation, training, dataset)


def write_seeds(folder: Path, seeds: Iterable[int], source: str) -> Path:
    """Record ``seeds`` in ``folder / SEEDS_FILE`` (sorted, with the ranges and ``source``:
    where they were read from, e.g. the dataset folder); returns the file."""
    path = Path(folder) / SEEDS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "seeds": sorted(int(s) for s in seeds), "source": source,
        "demonstration_range": describe(DEMONSTRATION_SEEDS),
        "evaluation_range": describe(EVALUATION_SEEDS)}))
    return path


def read_seeds(folder: Path) -> tuple[int, ...] | None:
    """The seeds recorded in ``folder / SEEDS_FILE``; ``None`` when there is no such file.

    Raises:
        InvalidConfigError: the file is not a seeds record (names the file).
    """
    path = Path(folder) / SEEDS_FILE
    if not path.is_file():
        return None
    try:
        seeds = json.loads(path.read_text())["seeds"]
        return tuple(int(s) for s in seeds)
    except (ValueError, KeyError, TypeError) as error:
        raise InvalidConfigError(f"{path} is not a seeds record ({error}); it holds "
                                 '{"seeds": [...]} as written by agentic-env collect') from None


def _short(seeds: list[int], limit: int = 5) -> str:
    text = ", ".join(str(s) for s in seeds[:limit])
    return text + (f" and {len(seeds) - limit} more" if len(seeds) > limit else "")
