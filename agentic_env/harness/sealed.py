"""Harness callbacks handed to agents without handing over what they close over.

The harness's callbacks (record a model call, log an agent event) close over the episode's
env to score what happened. :func:`sealed` wraps one in a :class:`SealedCall`: calling it
calls the callback, but the callback itself stays in a table private to this (harness)
module, so no attribute, slot, closure or bound method of what the agent holds leads to the
env.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import Any

#: The callback behind each live :class:`SealedCall`, by its key; an entry goes with its call.
_CALLBACKS: dict[int, Callable[..., Any]] = {}
_KEYS = itertools.count()


class SealedCall:
    """A callable that calls a harness callback it does not reference.

    Args:
        callback: what a call runs.
    """

    __slots__ = ("__weakref__", "_key")

    def __init__(self, callback: Callable[..., Any]) -> None:
        self._key = next(_KEYS)
        _CALLBACKS[self._key] = callback
        weakref.finalize(self, _CALLBACKS.pop, self._key, None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the callback with the arguments."""
        return _CALLBACKS[self._key](*args, **kwargs)


def sealed(callback: Callable[..., Any] | None) -> SealedCall | None:
    """``callback`` as a :class:`SealedCall` (``None`` stays ``None``)."""
    return None if callback is None else SealedCall(callback)
