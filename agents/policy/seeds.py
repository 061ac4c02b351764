"""The demonstration seeds a policy checkpoint was trained on, and the check that an
evaluation trial is none of them (:mod:`agentic_env.contract.seeds`).

A checkpoint records its dataset's seeds in its ``pretrained_model/`` folder
(:data:`~agentic_env.contract.seeds.SEEDS_FILE`: ``agentic-env train-policy`` and
``scripts/train_pi05_lora.sh`` write it); for any other ``lerobot-train`` checkpoint, the
dataset its ``train_config.json`` names (``dataset.root``) is asked for its seeds.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentic_env.agents.policy.checkpoint import resolve_checkpoint
from agentic_env.contract.seeds import check_evaluation_seeds, check_unseen, read_seeds
from agentic_env.errors import InvalidConfigError

#: The training configuration ``lerobot-train`` saves beside each checkpoint's weights.
TRAIN_CONFIG = "train_config.json"


def training_seeds(folder: Path) -> tuple[int, ...] | None:
    """The demonstration seeds of the checkpoint in ``folder`` (a ``pretrained_model/``):
    recorded there, else recorded by the dataset ``lerobot-train`` trained it on, else
    ``None`` (a checkpoint or dataset made before seeds were recorded)."""
    seeds = read_seeds(folder)
    if seeds is not None or not (folder / TRAIN_CONFIG).is_file():
        return seeds
    dataset = json.loads((folder / TRAIN_CONFIG).read_text()).get("dataset") or {}
    root = dataset.get("root")
    return read_seeds(Path(root) / "meta") if root else None


def check_unseen_trial(checkpoint: str | Path, seed: int) -> None:
    """Refuse to evaluate the checkpoint at ``checkpoint`` on trial ``seed`` when ``seed`` is
    not an evaluation seed or is one of its demonstrations' (a layout it was trained on); a
    checkpoint that records no seeds only gets a warning. A missing checkpoint is left to the
    agent, which reports it as its failure.

    Raises:
        InvalidConfigError: naming the seed and both ranges.
    """
    try:
        folder = resolve_checkpoint(checkpoint)
    except InvalidConfigError:
        check_evaluation_seeds([seed])
        return
    check_unseen([seed], training_seeds(folder), f"the checkpoint {folder}")
