"""Which function answers each model module for the sim-oracle.

The built-in agents' answers are the per-agent tables of :mod:`agentic_env.oracle.agents`,
lazy ``"module:attr"`` entry points imported on first use. A new agent declares its module
names on the agent side (:func:`agentic_env.agents.models.modules.register_module`) and
registers the sim-oracle's answers here, on the harness side, so agent code never names the
oracle:

.. code-block:: python

    from agentic_env.agents.models.modules import register_module
    from agentic_env.oracle import register_answer

    register_module("scorer")                             # agent side: the name
    register_answer("scorer", "my_pkg.oracle:score")      # harness side: the answer

    # my_pkg/oracle.py (privileged: it reads the simulator)
    def score(oracle, query):
        return {"score": 0.0 if oracle.wrong("scorer") else 1.0}

An answer is called as ``answer(oracle, query)`` with the sim-oracle's
:class:`~agentic_env.oracle.context.OracleContext` (``oracle.env`` is the simulator,
``oracle.wrong(module)`` draws the module's injected error) and the
:class:`~agentic_env.agents.models.base.ModelQuery`; it returns the JSON object a real model
must return (the agent validates it against the query's schema either way), or a
:class:`~agentic_env.agents.models.base.Completion` (tool calls or text).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentic_env.agents.models.base import Completion, ModelQuery
from agentic_env.agents.models.modules import check_modules
from agentic_env.entry_points import load_entry_point
from agentic_env.oracle.agents import AGENT_ANSWERS, TEMPLATE_ANSWERS

if TYPE_CHECKING:
    from agentic_env.oracle.context import OracleContext

#: ``answer(oracle, query) -> JSON object | Completion``: the sim-oracle's answer to one query
#: of a module (see the module docstring).
OracleAnswer = Callable[["OracleContext", ModelQuery], "dict[str, Any] | Completion"]

_ANSWERS: dict[str, OracleAnswer | str] = {
    module: entry for table in AGENT_ANSWERS.values() for module, entry in table.items()}
_TEMPLATES: dict[str, OracleAnswer | str] = dict(TEMPLATE_ANSWERS)


def register_answer(module: str, answer: OracleAnswer | str) -> None:
    """Register the sim-oracle's answer to ``module`` (a callable or a lazy ``"module:attr"``
    entry point to one); replaces an earlier one, a built-in agent's included.

    Raises:
        InvalidConfigError: ``module`` is not a module name (declare it first with
            :func:`~agentic_env.agents.models.modules.register_module`).
    """
    check_modules([module], "given to register_answer")
    _ANSWERS[module] = answer


def unregister_answer(module: str) -> None:
    """Forget the answer to ``module`` (no error when it has none)."""
    _ANSWERS.pop(module, None)


def answer_for(module: str, template: str = "") -> OracleAnswer | None:
    """The answer to a query of ``module`` rendered from ``template`` (imported on first use):
    a template's own answer (:data:`~agentic_env.oracle.agents.TEMPLATE_ANSWERS`) first, then
    the module's; ``None`` when neither is registered.

    Raises:
        InvalidConfigError: the entry point cannot be imported.
    """
    table, key = (_TEMPLATES, template) if template in _TEMPLATES else (_ANSWERS, module)
    answer = table.get(key)
    if answer is None or callable(answer):
        return answer
    loaded = load_entry_point(answer, f"the sim-oracle answer of {key!r}")
    table[key] = loaded
    return loaded
