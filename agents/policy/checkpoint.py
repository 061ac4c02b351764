"""Loading a LeRobot policy checkpoint with LeRobot's own classes and processors.

``lerobot`` (Python >= 3.12) and ``torch`` are imported lazily: the rest of the project
imports without them, and :func:`require_lerobot` names the extra to install when missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_env.errors import AgenticEnvError, InvalidConfigError

#: The files of a LeRobot ``pretrained_model`` folder that loading needs: the config and
#: either the weights or, for a LoRA fine-tune (``lerobot-train --peft.*``), the adapter.
CHECKPOINT_FILES: tuple[str, ...] = ("config.json", "model.safetensors")
ADAPTER_FILE = "adapter_model.safetensors"


def require_lerobot() -> Any:
    """The ``lerobot`` module, or an error naming the ``vla`` extra to install."""
    try:
        import lerobot
        import torch  # noqa: F401  (lerobot's policies need it; fail here, not later)
    except ImportError as missing:
        raise AgenticEnvError(
            "LeRobot policies need lerobot and torch (Python >= 3.12): install the 'vla' "
            "extra (pip install -e '.[vla]')") from missing
    return lerobot


def resolve_checkpoint(path: str | Path) -> Path:
    """The ``pretrained_model`` folder of ``path``: ``path`` itself, its ``pretrained_model``
    child, or a training run's ``checkpoints/last/pretrained_model``.

    Raises:
        InvalidConfigError: none of them holds a checkpoint (names the files looked for).
    """
    root = Path(path).expanduser()
    for candidate in (root, root / "pretrained_model",
                      root / "checkpoints" / "last" / "pretrained_model"):
        weights = (candidate / CHECKPOINT_FILES[1]).is_file() or (
            candidate / ADAPTER_FILE).is_file()
        if (candidate / CHECKPOINT_FILES[0]).is_file() and weights:
            return candidate
    raise InvalidConfigError(f"no LeRobot checkpoint in {root}: expected "
                             f"{' and '.join(CHECKPOINT_FILES)} (or {ADAPTER_FILE}) there or "
                             "in its pretrained_model/ (or checkpoints/last/pretrained_model/)")


@dataclass
class LoadedPolicy:
    """A policy and its processors, ready for ``select_action``.

    Attributes:
        folder: the ``pretrained_model`` folder it was loaded from.
        policy_type: LeRobot's name of the policy (``act``, ``diffusion``, ``pi05``...).
        policy: the ``PreTrainedPolicy`` (eval mode).
        preprocessor: LeRobot's observation pipeline (normalisation, device, tokeniser...).
        postprocessor: LeRobot's action pipeline (unnormalisation, back to the CPU).
        input_features: feature name -> (type name, shape) the policy reads.
        action_shape: shape of one action the policy emits.
    """

    folder: Path
    policy_type: str
    policy: Any
    preprocessor: Any
    postprocessor: Any
    input_features: dict[str, tuple[str, tuple[int, ...]]]
    action_shape: tuple[int, ...]


def load_policy(path: str | Path, device: str = "cpu") -> LoadedPolicy:
    """Load the checkpoint at ``path`` (see :func:`resolve_checkpoint`) onto ``device``; a
    LoRA adapter is loaded onto its base policy (which ``peft`` fetches unless cached).

    Raises:
        AgenticEnvError: lerobot is not installed.
        InvalidConfigError: no checkpoint, or one whose action is not the recorded
            ``action`` feature.
    """
    require_lerobot()
    from lerobot.configs.policies import PreTrainedConfig
    from lerobot.policies.factory import get_policy_class, make_pre_post_processors

    folder = resolve_checkpoint(path)
    config = PreTrainedConfig.from_pretrained(folder, local_files_only=True)
    config.device = device
    config.pretrained_path = folder
    policy_class = get_policy_class(config.type)
    if (folder / ADAPTER_FILE).is_file():  # LoRA: the base policy, then the adapter on it
        from peft import PeftConfig, PeftModel

        adapter = PeftConfig.from_pretrained(folder)
        policy = PeftModel.from_pretrained(
            policy_class.from_pretrained(adapter.base_model_name_or_path, config=config),
            folder, config=adapter)
    else:
        policy = policy_class.from_pretrained(folder, config=config, local_files_only=True)
    policy.eval()
    preprocessor, postprocessor = make_pre_post_processors(
        config, pretrained_path=str(folder),
        preprocessor_overrides={"device_processor": {"device": device}},
        postprocessor_overrides={"device_processor": {"device": "cpu"}})
    outputs = dict(config.output_features)
    if "action" not in outputs:
        raise InvalidConfigError(f"{folder}: the policy emits {', '.join(outputs)}; the "
                                 "benchmark drives the recorded 'action' (joint targets)")
    inputs = {name: (feature.type.name, tuple(feature.shape))
              for name, feature in config.input_features.items()}
    return LoadedPolicy(folder, str(config.type), policy, preprocessor, postprocessor,
                        inputs, tuple(outputs["action"].shape))
