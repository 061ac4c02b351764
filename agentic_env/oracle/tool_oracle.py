"""The tool-calling sim-oracle: a privileged policy that answers tool queries with the next
correct tool call, with seeded errors of the kinds real models make.

The next correct call comes from a reference policy (the simulator's true state and the
task's reference plan; see :mod:`agentic_env.oracle.tool_reference`). Errors are injected
per turn, each kind at its own rate, from one seeded random stream:

* ``wrong_tool``: another action tool, with the arguments it shares with the right one;
* ``bad_argument``: the right tool with a hallucinated argument, a value out of range, or a
  wrong value within range (an object's position shifted by 8 cm);
* ``stop_early``: ``finish`` while the reference plan has steps left;
* ``talk``: a sentence about what it will do, and no tool call;
* ``repeat``: the previous (executed) call once more.

After an error the right call is still owed: the next turn offers it again (a repeated call
advances the plan, as the repeated action did run).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np

from agentic_env.agents.models.base import (
    TOOL_ERRORS,
    Completion,
    ModelError,
    ModelQuery,
    ToolCall,
    Usage,
)
from agentic_env.errors import InvalidConfigError

#: Tools that read state rather than act (never chosen as a "wrong tool").
_READ_ONLY = ("get_instruction", "get_robot_state", "finish")
#: Shift of a wrong-but-valid position argument, metres.
WRONG_SHIFT_M = 0.08


class ReferencePolicy(Protocol):
    """Privileged source of the next correct call (a tool set's reference policy)."""

    def next_call(self) -> tuple[str, dict[str, Any]]:
        """(tool name, arguments) of the next correct call, from the state now."""
        ...


class ToolOracle:
    """Backend answering tool queries from a reference policy, with injected errors.

    ``emulated:<profile>`` builds one with the profile's turn error rates and virtual turns
    (:func:`agentic_env.oracle.emulated.tool_error_rates`, ``turn_clock``).

    Args:
        policy: the next correct call.
        error_rates: error kind (:data:`TOOL_ERRORS`) -> probability in [0, 1] per turn.
        seed: seed of the error injection.
        name: the model's name in records (``emulated:<profile>`` for an emulated model).
        usage: the query's module -> that turn's usage, virtual (an emulated model's: its
            seconds drawn by the profile's latency law, added to the episode's model time,
            not waited for; it raises the time-out of a turn whose every attempt timed out,
            before an answer is drawn); ``None``: the measured wall time, free.

    Raises:
        InvalidConfigError: an unknown error kind or a rate outside [0, 1].
    """

    def __init__(self, policy: ReferencePolicy, error_rates: Mapping[str, float] | None = None,
                 seed: int = 0, *, name: str = "sim-oracle",
                 usage: Callable[[str], Usage] | None = None) -> None:
        rates = dict(error_rates or {})
        for kind, rate in rates.items():
            if kind not in TOOL_ERRORS or not 0.0 <= rate <= 1.0:
                raise InvalidConfigError(
                    f"tool sim-oracle error rate {kind}={rate}: kinds are "
                    f"{', '.join(TOOL_ERRORS)}, rates in [0, 1]")
        self.name = name
        self._usage = usage
        self._policy = policy
        self._rates = rates
        self._rng = np.random.default_rng(seed)
        self._owed: tuple[str, dict[str, Any]] | None = None
        self._last: tuple[str, dict[str, Any]] | None = None
        self._turn = 0
        #: Error kind injected at each turn (``None`` = the correct call), for tests/traces.
        self.injected: list[str | None] = []

    def complete(self, query: ModelQuery) -> Completion:
        """The next call (or, for ``talk``, text) for a tool query.

        Raises:
            ModelError: the query has no tools (this oracle answers tool queries only).
            ModelTimeoutError: the turn's every attempt timed out (virtual usage only).
        """
        start = time.perf_counter()
        if not query.tools:
            raise ModelError("the tool-calling sim-oracle answers tool queries only; use the "
                             "pipeline sim-oracle for JSON queries")
        drawn = None if self._usage is None else self._usage(query.module)
        tools = {t["function"]["name"]: t["function"] for t in query.tools}
        kind, answer = self._answer(tools)
        self.injected.append(kind)
        self._turn += 1
        usage = drawn if drawn is not None else Usage(
            latency_s=time.perf_counter() - start, cost_usd=0.0)
        if isinstance(answer, str):
            return Completion(answer, usage, (), "native")
        name, arguments = answer
        return Completion("", usage, (ToolCall(f"call_{self._turn}", name, arguments),),
                          "native")

    def _draw(self, kind: str) -> bool:
        rate = self._rates.get(kind, 0.0)
        return rate > 0.0 and bool(self._rng.random() < rate)

    def _answer(self, tools: dict[str, Any]) -> tuple[str | None, tuple[str, dict] | str]:
        if self._last is not None and self._draw("repeat"):
            return "repeat", self._last
        if self._owed is None:
            self._owed = self._policy.next_call()
        name, arguments = self._owed
        if name != "finish" and self._draw("stop_early") and "finish" in tools:
            self._owed = self._last = None
            return "stop_early", ("finish", {"success": True, "summary": "done"})
        if self._draw("talk"):
            return "talk", f"Next I will call {name} to continue with the task."
        others = [t for t in tools if t not in _READ_ONLY and t != name]
        if self._draw("wrong_tool") and others:
            wrong = str(self._rng.choice(others))
            shared = tools[wrong].get("parameters", {}).get("properties", {})
            return "wrong_tool", (wrong, {k: v for k, v in arguments.items() if k in shared})
        if self._draw("bad_argument"):
            return "bad_argument", (name, self._corrupt(tools.get(name, {}), arguments))
        self._owed, self._last = None, (name, arguments)
        return None, (name, arguments)

    def _corrupt(self, tool: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments with one hallucinated, out-of-range or shifted value."""
        corrupted = dict(arguments)
        properties = tool.get("parameters", {}).get("properties", {})
        bounded = [k for k in arguments if "maximum" in properties.get(k, {})]
        style = int(self._rng.integers(3)) if bounded else 0
        if style == 0:
            corrupted["speed"] = 0.5  # no tool has it
        elif style == 1:
            key = str(self._rng.choice(bounded))
            corrupted[key] = float(properties[key]["maximum"]) + 1.0
        else:
            key = "x" if "x" in arguments else str(self._rng.choice(bounded))
            corrupted[key] = round(float(arguments[key]) + WRONG_SHIFT_M, 4)
        return corrupted
