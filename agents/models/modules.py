"""Model modules by name: the built-in ones and those a new agent declares.

Every model call names its module (:attr:`ModelQuery.module`); ``--modules`` routes modules
to models and ``sim-oracle?module=rate`` injects errors per module. The four built-in agents'
modules are :data:`~agentic_env.agents.models.base.MODULES`. A new agent declares its own
with :func:`register_module`; routing, error rates and ``--modules`` then accept the name.

The sim-oracle's answer to a new module is registered on the harness side, never here (agent
code does not name the oracle): ``agentic_env.oracle.register_answer("scorer",
"my_pkg.oracle:score")``, see :mod:`agentic_env.oracle.answers`.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentic_env.agents.models.base import MODULES
from agentic_env.errors import InvalidConfigError

_REGISTERED: dict[str, None] = {}


def register_module(name: str) -> None:
    """Declare model module ``name`` (declaring it again changes nothing).

    Raises:
        InvalidConfigError: ``name`` is empty, contains ``=``, ``,``, ``&`` or ``?`` (the
            separators of model specs), or is a built-in module.
    """
    if not name or any(sep in name for sep in "=,&?") or name in MODULES:
        raise InvalidConfigError(
            f"module name {name!r}: give a new name without '=', ',', '&' or '?' (built-in "
            f"modules: {', '.join(MODULES)})")
    _REGISTERED[name] = None


def unregister_module(name: str) -> None:
    """Forget a registered module (no error when it is not registered)."""
    _REGISTERED.pop(name, None)


def module_names() -> tuple[str, ...]:
    """Every module a query may name: the built-in ones, then the registered ones."""
    return (*MODULES, *_REGISTERED)


def check_modules(names: Iterable[str], where: str = "") -> None:
    """Raise :class:`InvalidConfigError` naming the valid modules if any of ``names`` is not
    one; ``where`` (e.g. ``"in 'x=y'"``) says where the names came from."""
    unknown = sorted(set(names) - set(module_names()))
    if unknown:
        listed = ", ".join(repr(name) for name in unknown)
        raise InvalidConfigError(
            f"unknown module{'s' if len(unknown) > 1 else ''} {listed}"
            f"{' ' + where if where else ''}; modules are {', '.join(module_names())}")
