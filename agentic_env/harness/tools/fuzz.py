"""Seeded hostile tool calls, as a fuzzing MCP client sends them (the fuzz test and the soak).

Each call names a tool of the server (now and then one that does not exist) with a random
subset of its parameters, each set to a value a well-behaved client never sends: huge
integers and texts, NaN and infinity, lone surrogates, terminal escapes, deep nesting, long
lists, wrong types; sometimes an unknown argument too. ``finish`` is left out, so a session
can go on after any number of calls.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

#: Tool names no server has (the last ones are long or carry control characters).
UNKNOWN_TOOLS: tuple[str, ...] = ("teleport", "x" * 10_000, "pick\u2028", "pick\x00")
#: Argument names no tool has.
UNKNOWN_ARGUMENTS: tuple[str, ...] = ("grip", "\ud800", "z" * 5_000)


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


#: What a hostile client puts in an argument (nesting kept within what the MCP SDK's own
#: client serialises; the tool layer is tested deeper).
HOSTILE_VALUES: tuple[Any, ...] = (
    None, True, -1, 0, 0.5, 10**309, -(10**400), float("nan"), float("inf"), "", "lemon",
    "\ud800", "\x1b[2J\x1b[31m", "x" * 100_000, [], [0.4, 0.0, 0.1], _nested(100), {"a": 1},
    {"k" * 1000: [1] * 1000}, list(range(10_000)),
)


def hostile_calls(schemas: Mapping[str, Mapping[str, Any]], seed: int, count: int
                  ) -> Iterator[tuple[str, dict[str, Any]]]:
    """``count`` seeded calls ``(tool name, arguments)`` over the tools of ``schemas``
    (name -> JSON schema of the arguments, as :class:`~agentic_env.agents.tools.schema.
    ToolSpec` gives it); one in ten names an unknown tool."""
    rng = random.Random(seed)
    names: Sequence[str] = [name for name in schemas if name != "finish"]
    for _ in range(count):
        if rng.random() < 0.1:
            yield rng.choice(UNKNOWN_TOOLS), {"x": 1}
            continue
        name = rng.choice(names)
        arguments = {key: rng.choice(HOSTILE_VALUES) for key in schemas[name]["properties"]
                     if rng.random() < 0.7}
        if rng.random() < 0.2:
            arguments[rng.choice(UNKNOWN_ARGUMENTS)] = rng.choice(HOSTILE_VALUES)
        yield name, arguments
