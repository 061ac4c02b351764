"""Tool calls as the model layer exchanges them: parsing the provider's native calls, and the
JSON-in-prompt format for providers without function calling.

In the prompt format the tools are described in the first user turn, and the model answers
with ``{"tool_calls": [{"name": ..., "arguments": {...}}]}`` to act or with plain text to
answer; earlier assistant tool calls and tool results are written back as text turns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentic_env.agents.models.base import MalformedResponseError, ToolCall
from agentic_env.agents.models.schema import extract_json

PROMPT_FORMAT = (
    "\n\nYou can act by calling tools. To call tools, answer with exactly one JSON object "
    '{{"tool_calls": [{{"name": "<tool>", "arguments": {{...}}}}]}} and nothing else; to '
    'answer without acting, reply with text that has no "tool_calls" key. The tools (JSON '
    "schemas of their arguments):\n{tools}"
)


def parse_arguments(raw: Any) -> dict[str, Any]:
    """A call's arguments as a dict: JSON text is parsed; anything that is not a JSON object
    is kept as ``{"_raw": raw}`` so the tool registry can reject it with a clear message."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw in (None, ""):
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


def parse_native_tool_calls(raw_calls: Sequence[Any]) -> tuple[ToolCall, ...]:
    """Tool calls of an OpenAI-style message (litellm's ``message.tool_calls``)."""
    calls = []
    for index, raw in enumerate(raw_calls):
        function = getattr(raw, "function", None) or (raw.get("function") if isinstance(
            raw, Mapping) else None)
        name = getattr(function, "name", None) or (function.get("name") if isinstance(
            function, Mapping) else None)
        arguments = getattr(function, "arguments", None) if not isinstance(
            function, Mapping) else function.get("arguments")
        call_id = getattr(raw, "id", None) or (raw.get("id") if isinstance(raw, Mapping)
                                               else None)
        calls.append(ToolCall(str(call_id or f"call_{index}"), str(name or ""),
                              parse_arguments(arguments)))
    return tuple(calls)


def parse_prompt_tool_calls(text: str, turn: int) -> tuple[ToolCall, ...]:
    """Tool calls written in the prompt format; ``()`` when the text is not a call.

    Args:
        text: the model's answer.
        turn: index used to make the call ids unique within a conversation.
    """
    try:
        answer = extract_json(text)
    except MalformedResponseError:
        return ()
    raw_calls = answer.get("tool_calls")
    if not isinstance(raw_calls, list):
        return ()
    calls = []
    for index, raw in enumerate(raw_calls):
        raw = raw if isinstance(raw, Mapping) else {}
        calls.append(ToolCall(f"call_{turn}_{index}", str(raw.get("name", "")),
                              parse_arguments(raw.get("arguments"))))
    return tuple(calls)


def _as_text(message: Mapping[str, Any]) -> dict[str, Any]:
    """One later conversation turn rewritten for a model without function calling."""
    if message.get("role") == "tool":
        return {"role": "user", "content": f"TOOL RESULT ({message.get('name', 'tool')}, "
                                           f"{message.get('tool_call_id', '')}): "
                                           f"{message.get('content', '')}"}
    if message.get("role") == "assistant" and message.get("tool_calls"):
        calls = [{"name": call["function"]["name"],
                  "arguments": parse_arguments(call["function"].get("arguments"))}
                 for call in message["tool_calls"]]
        return {"role": "assistant", "content": json.dumps({"tool_calls": calls})}
    return dict(message)


def prompt_tool_messages(messages: list[dict[str, Any]], tools: Sequence[Mapping[str, Any]]
                         ) -> list[dict[str, Any]]:
    """``messages`` (first user turn, then later turns) in the prompt format: the tool
    descriptions appended to the first turn's text, tool turns rewritten as text."""
    described = json.dumps([{"name": t["function"]["name"],
                             "description": t["function"].get("description", ""),
                             "parameters": t["function"].get("parameters", {})}
                            for t in tools], sort_keys=True)
    first = dict(messages[0])
    content = [dict(part) for part in first["content"]]
    content[0]["text"] += PROMPT_FORMAT.format(tools=described)
    first["content"] = content
    return [first, *(_as_text(m) for m in messages[1:])]
