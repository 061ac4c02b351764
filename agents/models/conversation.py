"""Multi-turn tool conversations: ask, run the tool calls, send the results back, repeat.

:func:`run_tool_conversation` drives one conversation with bounded turns. Every model turn
goes through :func:`~agentic_env.agents.models.ask.ask` (so each turn gets its own
:class:`~agentic_env.agents.models.base.CallRecord` with tokens, latency and cost, as JSON
calls do), and tool calls run through a caller-given ``execute`` that never raises (the tool
registry's contract). A model error ends the conversation with ``stop="model_error"``
instead of raising into the agent loop.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentic_env.agents.models.ask import ask
from agentic_env.agents.models.base import (
    Backend,
    CallRecord,
    ModelError,
    ModelQuery,
    ToolCall,
    Usage,
)
from agentic_env.agents.models.budget import Budget, total_usage
from agentic_env.errors import InvalidConfigError

#: Why a conversation ended.
STOPS: tuple[str, ...] = ("finished", "answered", "max_turns", "model_error")
#: The user turn sent after a text answer while the episode is not finished.
NUDGE = "Continue by calling a tool; call finish when the task is done or cannot be done."

#: Runs one tool call: (short text for the model, JSON-ready data for the trace).
Execute = Callable[[ToolCall], tuple[str, Mapping[str, Any]]]


@dataclass(frozen=True)
class ToolTurn:
    """One model turn and the tool calls it made.

    Attributes:
        index: 0-based turn number.
        text: the model's text (often empty beside tool calls).
        calls: the tool calls it asked for.
        results: per call, ``{"tool", "id", "text", "data"}`` as sent back / traced.
        usage: the turn's tokens, latency and cost (all attempts).
        tool_mode: ``native`` or ``json-prompt`` (how the calls were obtained).
    """

    index: int
    text: str
    calls: tuple[ToolCall, ...]
    results: tuple[dict[str, Any], ...]
    usage: Usage
    tool_mode: str


@dataclass(frozen=True)
class ConversationResult:
    """How a tool conversation went.

    Attributes:
        turns: every model turn, in order.
        stop: why it ended (:data:`STOPS`).
        final_text: the model's last text.
        error: the model error that ended it (``stop == "model_error"``), else ``None``.
        usage: summed over all turns.
        messages: the whole conversation after the first user turn (for traces, resumes).
    """

    turns: tuple[ToolTurn, ...]
    stop: str
    final_text: str
    error: str | None
    usage: Usage
    messages: tuple[Mapping[str, Any], ...]


def assistant_message(text: str, calls: tuple[ToolCall, ...]) -> dict[str, Any]:
    """The OpenAI-style assistant turn of a reply with tool calls."""
    return {"role": "assistant", "content": text or None, "tool_calls": [
        {"id": call.id, "type": "function",
         "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments),
                                                                 sort_keys=True)}}
        for call in calls]}


def run_tool_conversation(
    backend: Backend,
    query: ModelQuery,
    execute: Execute,
    *,
    finished: Callable[[], bool] = lambda: False,
    max_turns: int = 30,
    max_nudges: int = 2,
    retries: int = 1,
    budget: Budget | None = None,
    on_call: Callable[[CallRecord], None] | None = None,
) -> ConversationResult:
    """Run a tool conversation until the task is finished or a bound is hit.

    Args:
        backend: who answers.
        query: the first turn (prompt, images, ``tools``); its ``messages`` seed the history.
        execute: runs one tool call; must not raise.
        finished: true once the episode is over (e.g. ``finish`` was called); checked after
            each turn's calls.
        max_turns: most model turns (>= 1).
        max_nudges: text answers answered with :data:`NUDGE` before the conversation ends
            with ``stop="answered"``.
        retries: re-asks per turn after malformed answers (see ``ask``).
        budget: charged per attempt.
        on_call: receives each turn's :class:`CallRecord` (success or failure).

    Raises:
        InvalidConfigError: ``query`` has no tools or a bound is out of range.
    """
    if not query.tools:
        raise InvalidConfigError("a tool conversation needs query.tools")
    if max_turns < 1 or max_nudges < 0:
        raise InvalidConfigError(f"max_turns must be >= 1 and max_nudges >= 0, got "
                                 f"{max_turns}, {max_nudges}")
    messages: list[Mapping[str, Any]] = list(query.messages)
    turns: list[ToolTurn] = []
    nudges = 0
    stop, error, text = "max_turns", None, ""
    for index in range(max_turns):
        try:
            reply = ask(backend, dataclasses.replace(query, messages=tuple(messages)),
                        retries=retries, budget=budget, on_call=on_call)
        except ModelError as exc:
            stop, error = "model_error", f"{type(exc).__name__}: {exc}"
            break
        text = reply.raw_text
        results: list[dict[str, Any]] = []
        if reply.tool_calls:
            messages.append(assistant_message(text, reply.tool_calls))
            for call in reply.tool_calls:
                result_text, data = execute(call)
                results.append({"tool": call.name, "id": call.id, "text": result_text,
                                "data": dict(data)})
                messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name,
                                 "content": result_text})
        turns.append(ToolTurn(index, text, reply.tool_calls, tuple(results), reply.usage,
                              reply.tool_mode))
        if finished():
            stop = "finished"
            break
        if not reply.tool_calls:
            if nudges >= max_nudges:
                stop = "answered"
                break
            nudges += 1
            messages.extend([{"role": "assistant", "content": text},
                             {"role": "user", "content": NUDGE}])
    return ConversationResult(tuple(turns), stop, text, error,
                              total_usage([t.usage for t in turns]), tuple(messages))
