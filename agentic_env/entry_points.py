"""Lazy ``"module:attr"`` entry points: agents, episode functions and oracle answers are
named by where they live and imported on first use (so spawned workers and sweep files can
name them as text)."""

from __future__ import annotations

import importlib
from typing import Any

from agentic_env.errors import InvalidConfigError


def load_entry_point(path: str, what: str) -> Any:
    """Import ``path`` = ``"module:attr"`` and return the attribute.

    Args:
        path: the entry point.
        what: what it names, for the error message (e.g. ``"agent 'toy'"``).

    Raises:
        InvalidConfigError: ``path`` is not ``module:attr``, the module cannot be imported or
            has no such attribute.
    """
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise InvalidConfigError(f"{what}: write {path!r} as 'module:attr'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InvalidConfigError(f"{what}: cannot import {module_name!r} ({exc})") from exc
    value = getattr(module, attr, None)
    if value is None:
        raise InvalidConfigError(f"{what}: {module_name} has no {attr!r}")
    return value
