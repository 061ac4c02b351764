"""Lazy imports of the harness's optional packages, with an error naming the extra."""

from __future__ import annotations

import importlib
from types import ModuleType

from agentic_env.errors import AgenticEnvError


class MissingExtraError(AgenticEnvError, ImportError):
    """An optional package is not installed; the message names the extra that provides it."""


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"{module} is not installed; install the '{extra}' extra: "
            f"pip install -e '.[{extra}]'") from exc
