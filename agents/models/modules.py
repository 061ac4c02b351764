"""Model modules by name: the built-in ones and those a new agent declares.

Every model call names its module (:attr:`ModelQuery.module`); ``--modules`` routes modules
to models and ``sim-oracle?module=rate`` injects errors per module. The four built-in agents'
modules are :data:`~agentic_env.agents.models.base.MODULES`. A new agent declares its own
with :func:`register_module`, giving the sim-oracle's answer for it so the agent runs offline:

.. code-block:: python

    def score_answer(oracle, fields):  # privileged: reads oracle.env, the simulator
        wrong = oracle.wrong("scorer")  # the module's injected error draw
        return {"score": 0.0 if wrong else 1.0}

    register_module("scorer", score_answer)

The answer is the JSON object a real model must return (the agent validates it against the
query's schema either way). Routing, error rates and ``--modules`` then accept the name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agentic_env.agents.models.base import MODULES
from agentic_env.entry_points import load_entry_point
from agentic_env.errors import InvalidConfigError

if TYPE_CHECKING:
    from agentic_env.agents.models.oracle import SimOracle

#: ``answer(oracle, fields) -> JSON object``: the sim-oracle's answer to one query of a
#: registered module, from the query's structured fields and the simulator
#: (``oracle.env``); ``oracle.wrong(module)`` draws the module's injected error.
OracleAnswer = Callable[["SimOracle", Mapping[str, Any]], dict[str, Any]]

_REGISTERED: dict[str, OracleAnswer | str] = {}


def register_module(name: str, oracle_answer: OracleAnswer | str) -> None:
    """Declare model module ``name`` with the sim-oracle's answer for it (a callable or a
    lazy ``"module:attr"`` entry point to one); replaces an earlier registration.

    Raises:
        InvalidConfigError: ``name`` is empty, contains ``=``, ``,``, ``&`` or ``?`` (the
            separators of model specs), or is a built-in module.
    """
    if not name or any(sep in name for sep in "=,&?") or name in MODULES:
        raise InvalidConfigError(
            f"module name {name!r}: give a new name without '=', ',', '&' or '?' (built-in "
            f"modules: {', '.join(MODULES)})")
    _REGISTERED[name] = oracle_answer


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


def oracle_answer(name: str) -> OracleAnswer | None:
    """The sim-oracle's answer of a registered module (imported on first use), ``None`` for
    a module nobody registered.

    Raises:
        InvalidConfigError: the entry point cannot be imported.
    """
    answer = _REGISTERED.get(name)
    if answer is None or callable(answer):
        return answer
    loaded = load_entry_point(answer, f"the sim-oracle answer of module {name!r}")
    _REGISTERED[name] = loaded
    return loaded
