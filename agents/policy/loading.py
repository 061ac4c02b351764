"""What goes wrong while loading a LeRobot checkpoint, as the project's own errors.

LeRobot's policy families import optional packages (``transformers`` for π0/π0.5 and
SmolVLA, ``accelerate`` and ``num2words`` for SmolVLA, ``peft`` for LoRA adapters,
``diffusers`` for Diffusion Policy: all in the project's ``vla`` extra), and some
checkpoints name further models on the Hugging Face Hub (a LoRA adapter's base policy,
SmolVLA's VLM backbone, the tokenizer of π0.5 or SmolVLA), which are fetched by name unless
a local folder is given. :func:`load_errors` turns the ``ImportError`` and ``OSError``
these raise deep inside transformers, peft or huggingface_hub into a
:class:`PolicyDependencyError` naming the ``pip install`` to run, or a
:class:`PolicyWeightsError` naming the hub models and where the checkpoint names them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentic_env.errors import AgenticEnvError

#: The install that brings every package LeRobot's policy families import.
VLA_INSTALL = "pip install -e '.[vla]'"
#: lerobot's own "'transformers' is required but not installed" message.
_LEROBOT_MISSING = re.compile(r"'([A-Za-z0-9_.-]+)' is required but not installed")


class PolicyDependencyError(AgenticEnvError, ImportError):
    """A package the checkpoint's policy family needs is not installed."""


class PolicyWeightsError(AgenticEnvError, FileNotFoundError):
    """The checkpoint, or a model it names (base policy, VLM, tokenizer), is not on this
    machine."""


def hub_references(folder: Path) -> list[tuple[str, str]]:
    """The models a checkpoint folder names by hub id rather than by a local folder, as
    ``(name, where it is named)``: a LoRA adapter's base policy, SmolVLA's VLM backbone and
    the tokenizer of the preprocessor; those given as existing folders are left out."""
    found: list[tuple[str, str]] = []

    def note(name: Any, where: str) -> None:
        if isinstance(name, str) and name and not Path(name).expanduser().exists():
            found.append((name, where))

    def read(name: str) -> Any:
        try:
            return json.loads((folder / name).read_text())
        except (OSError, ValueError):
            return {}

    note(read("adapter_config.json").get("base_model_name_or_path"),
         "base_model_name_or_path in adapter_config.json")
    note(read("config.json").get("vlm_model_name"), "vlm_model_name in config.json")
    for processor in sorted(folder.glob("*processor*.json")):
        for step in read(processor.name).get("steps", []):
            note(step.get("config", {}).get("tokenizer_name"),
                 f"tokenizer_name in {processor.name}")
    return found


def missing_package(error: ImportError) -> str:
    """The distribution an ``ImportError`` says is missing (``"?"`` when it does not say)."""
    match = _LEROBOT_MISSING.search(str(error))
    if match:
        return match.group(1)
    if error.name:
        return error.name.split(".")[0]
    return "?"


def check_checkpoint_path(path: Path) -> None:
    """Refuse a checkpoint path that does not exist, saying how to get one (a hub id is not
    downloaded by the agent).

    Raises:
        PolicyWeightsError: ``path`` does not exist.
    """
    if path.expanduser().exists():
        return
    hint = ("train one with agentic-env train-policy, or give the folder of a LeRobot "
            "checkpoint with --agent-option checkpoint=DIR")
    if re.fullmatch(r"[\w.-]+/[\w.-]+", str(path)):
        hint += (f"; if {path} is a Hugging Face Hub id, the agent does not download it: "
                 f"download it where there is network (hf download {path} --local-dir DIR) "
                 "and pass that DIR")
    raise PolicyWeightsError(f"no policy checkpoint at {path}: {hint}")


@contextmanager
def load_errors(folder: Path) -> Iterator[None]:
    """Run a checkpoint load, turning a missing package or model into the project's errors.

    Raises:
        PolicyDependencyError: an ``ImportError`` (names the package and the install).
        PolicyWeightsError: an ``OSError`` or an invalid hub id from transformers, peft or
            huggingface_hub (names the hub models the checkpoint refers to and where).
    """
    from huggingface_hub.errors import HFValidationError

    try:
        yield
    except AgenticEnvError:
        raise
    except ImportError as error:
        package = missing_package(error)
        raise PolicyDependencyError(
            f"the policy at {folder} needs the Python package {package!r}, which is not "
            f"installed; install the 'vla' extra, which pins what LeRobot's policies import: "
            f"{VLA_INSTALL}") from error
    except (OSError, HFValidationError) as error:
        references = hub_references(folder) if folder.is_dir() else []
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        if not references:
            raise PolicyWeightsError(f"the policy at {folder} could not be loaded ({reason}); "
                                     "check that the folder holds a complete LeRobot "
                                     "checkpoint") from error
        named = "; ".join(f"{name} ({where})" for name, where in references)
        raise PolicyWeightsError(
            f"the policy at {folder} names models on the Hugging Face Hub that are not on "
            f"this machine{' (HF_HUB_OFFLINE is set)' if offline else ''}: {named}. Download "
            f"each where there is network (hf download NAME --local-dir DIR) and write the "
            f"local folder in its place ({reason})") from error
