"""The sim-oracle backend: a privileged, offline model that answers from simulator ground truth.

It is the offline default of every command. It reads the simulator (true facts, the task's
goal, segmentation masks) — which no agent may do — and answers each module's query with the
same JSON (or tool calls) a real model must produce, so all the agent's parsing, validation
and control code runs for real. Which function answers a module is looked up in
:mod:`agentic_env.oracle.answers` (the built-in agents' tables are in
:mod:`agentic_env.oracle.agents`). Errors can be injected per module at a seeded rate, to
study how module errors compound; each agent's answer module lists its error kinds.

By default every answer draws its errors afresh (independent coin flips per call). With a
re-ask redraw probability below 1 (``reask_redraw``, an emulated model's profile), errors
persist: every call's draws come from a stream keyed by its *situation* — the module, the
query's fields and conversation in ids and the world it is about (the true facts and every
free body's pose, rounded) — so asking again in an unchanged situation gives the same
answer (the same error, of the same kind) unless a coin of probability ``reask_redraw``
redraws it, while a changed situation (something moved, another question, new feedback in
the conversation) draws afresh. Each call's marginal error rate is unchanged.

The harness builds it (:func:`agentic_env.oracle.oracle_factories`) and hands the agent only
a :class:`~agentic_env.agents.models.registry.ModelHandle` to it, so nothing an agent holds
leads to the simulator.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, Unpack

from agentic_env.agents.models.base import PLANNER_ERRORS, Completion, ModelError, ModelQuery, Usage
from agentic_env.agents.models.modules import module_names
from agentic_env.errors import InvalidConfigError
from agentic_env.oracle.answers import answer_for
from agentic_env.oracle.context import OracleContext, OracleOptions
from agentic_env.oracle.described import DescribedNames
from agentic_env.tasks.base import SymbolicTask

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv

__all__ = ["OracleContext", "SimOracle"]


class SimOracle:
    """Privileged offline model over one :class:`~agentic_env.envs.sim_env.SimEnv`.

    Args:
        env: the env whose ground truth answers the queries (a symbolic task); kept private.
        error_rates: module name (or planner error kind) -> probability in [0, 1] of a wrong
            answer.
        seed: seed of the error injection.
        names: ``ids`` (answer with the simulator's ids) or ``described`` (invent names by
            looks, :mod:`agentic_env.oracle.described`).
        **options: how it answers (:class:`~agentic_env.oracle.context.OracleOptions`: error
            kinds, visibility threshold, re-ask redraw probability, difficulty, cause and
            box models, scene listings of the image only), handed to its
            :class:`OracleContext`.

    Queries are read in ids (every name a model introduced in the episode is bound to its id
    through the episode's :class:`~agentic_env.oracle.name_book.NameBook`) and answers written
    in the names the agent knows, so the oracle answers correctly whatever model named things.

    Raises:
        InvalidConfigError: the task has no PDDL model, or an unknown module or a rate
            outside [0, 1].
    """

    name = "sim-oracle"

    def __init__(self, env: SimEnv, error_rates: Mapping[str, float] | None = None,
                 seed: int = 0, names: str = "ids", **options: Unpack[OracleOptions]) -> None:
        if not isinstance(env.task, SymbolicTask):
            raise InvalidConfigError(f"the sim-oracle needs a task with a PDDL model; "
                                     f"{env.task.name!r} has none")
        rates = dict(error_rates or {})
        for module, rate in rates.items():
            if module not in (*module_names(), *PLANNER_ERRORS) or not 0.0 <= rate <= 1.0:
                raise InvalidConfigError(
                    f"sim-oracle error rate {module}={rate}: modules are "
                    f"{', '.join(module_names())}, "
                    f"planner error kinds {', '.join(PLANNER_ERRORS)}, rates in [0, 1]")
        reask_redraw = options.get("reask_redraw", 1.0)
        if not 0.0 <= reask_redraw <= 1.0:
            raise InvalidConfigError(f"sim-oracle reask_redraw={reask_redraw}: a probability "
                                     "in [0, 1]")
        self._context = OracleContext(env, rates, seed, **options)
        self._described = DescribedNames(env, seed) if names == "described" else None

    def record_situations(self, sink: list[tuple[str, Any]] | None) -> None:
        """Append every situation an answer states (``(role, situation)``,
        :mod:`agentic_env.oracle.causes`) to ``sink`` from now on (``None``: stop); the
        calibration replica is recorded so (privileged, harness side)."""
        self._context.record = sink

    def complete(self, query: ModelQuery) -> Completion:
        """Answer ``query`` from ground truth with the module's registered answer.

        Raises:
            ModelError: no answer is registered for the query's module.
        """
        start = time.perf_counter()
        answer = answer_for(query.module, query.template)
        if answer is None:
            raise ModelError(
                f"the sim-oracle has no answer for module {query.module!r}; register one "
                "with agentic_env.oracle.register_answer")
        asked = self._in_ids(query)
        self._context.begin(asked)
        result: dict[str, Any] | Completion = answer(self._context, asked)
        result = self._speak(result)
        usage = Usage(latency_s=time.perf_counter() - start, cost_usd=0.0)
        if isinstance(result, Completion):
            return replace(result, usage=usage)
        return Completion(json.dumps(result, indent=1), usage)

    def _in_ids(self, query: ModelQuery) -> ModelQuery:
        """``query`` (its fields and conversation) with the agent's names written as ids."""
        fields, messages = dict(query.fields), list(query.messages)
        if self._described is not None:
            fields, messages = self._described.to_ids(fields), self._described.to_ids(messages)
        book = self._context.names
        return replace(query, fields=book.to_ids(fields),
                       messages=tuple(book.to_ids(messages, learn=False)))

    def _speak(self, result: dict[str, Any] | Completion) -> dict[str, Any] | Completion:
        """``result`` in the agent's names: this oracle's own (``names=described``), then
        those the episode's models introduced."""
        book = self._context.names
        keep = book.named()
        speakers: list[Callable[[Any], Any]] = [book.from_ids]
        if self._described is not None:
            speakers.insert(0, partial(self._described.from_ids, keep=keep))
        for speak in speakers:
            if isinstance(result, Completion):
                calls = tuple(replace(c, arguments=speak(dict(c.arguments)))
                              for c in result.tool_calls)
                result = replace(result, text=speak(result.text), tool_calls=calls)
            else:
                result = speak(result)
        return result

    def close(self) -> None:
        """Drop the answers' caches (the env owns the renderer that made the segmentation)."""
        self._context.forget()
