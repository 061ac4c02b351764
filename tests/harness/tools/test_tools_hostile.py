"""Whatever an MCP client sends, the server answers: huge integers and texts, deep nesting,
lone surrogates and unknown names come back as short ``BAD_ARGS`` replies, every call is
logged with a bounded copy of its arguments, and on any loopback address forged ``Host`` and
``Origin`` headers are refused. A seeded fuzz session drives the server in-process."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.server import Server

from agentic_env.agents.skills.result import SkillResult, ok
from agentic_env.agents.tools import ToolRegistry
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.tools.backends import open_episode
from agentic_env.harness.tools.fuzz import hostile_calls
from agentic_env.harness.tools.mcp_server import build_server, serve_http

#: Longest reply text a malformed call may get, characters.
REPLY_CHARS = 2_000


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def move(x: float, speed: int = 1) -> SkillResult:
    """Move along x.

    Args:
        x: target in metres, in [0.1, 0.9].
        speed: speed level, in [1, 3].
    """
    return ok(f"moved to {x}")


@pytest.mark.parametrize("arguments", [
    {"x": 10**309}, {"x": -(10**5000)}, {"x": 0.5, "speed": 10**400}, {"x": "9" * 10**6},
    {"x": _nested(100_000)}, {"x": 0.5, "y" * 10**6: 1}, {"x": 0.5, 3: 1},
])
def test_validation_is_total_and_quotes_only_an_excerpt(arguments: dict[Any, Any]) -> None:
    result = ToolRegistry([move]).call("move", arguments)
    assert result.code.value == "BAD_ARGS", result.message
    assert len(result.message) < 500 and "was not run" in result.message


def test_a_309_digit_integer_is_named_as_the_problem() -> None:
    result = ToolRegistry([move]).call("move", {"x": 10**309})
    assert "x must be a finite number, got an integer of about 309 digits" in result.message


@pytest.fixture(scope="module")
def episode():
    opened = open_episode(EpisodeSpec(task="sorting", seed=3, max_actions=2,
                                      realism="ideal"), tool_set="all",
                          perception="sim-oracle")
    yield opened
    opened.close()


def test_a_seeded_fuzz_session_never_breaks_the_server(episode) -> None:
    """300 calls of the ``all`` tool set with hostile names and values: each is answered,
    logged, and short; the log stays small."""
    schemas = {spec.name: spec.parameters for spec in episode.tools.specs()}
    server = build_server(episode, on_finish=lambda: "stored")
    replies: list[tuple[str, bool, str]] = []

    async def session() -> None:
        async with Client(server) as client:
            for name, arguments in hostile_calls(schemas, seed=29, count=300):
                result = await client.call_tool(name, arguments)
                replies.append((name, bool(result.is_error), result.content[0].text))

    logged = len(episode.context.log.calls)
    start = time.monotonic()
    anyio.run(session)
    assert time.monotonic() - start < 20.0
    assert len(episode.context.log.calls) - logged == 300  # every call, whatever its fate
    assert sum(is_error for _, is_error, _ in replies) > 150
    longest = max(replies, key=lambda reply: len(reply[2]))
    assert len(longest[2]) <= REPLY_CHARS, longest
    for _, _, text in replies:
        text.encode("utf-8")
    kept = json.dumps([[call.tool, call.arguments] for call in episode.context.log.calls],
                      default=str)
    assert len(kept) < 300 * 4_000, "the call log keeps what the client sent"
    assert episode.context.actions <= 2


def test_forged_host_and_origin_are_refused_on_any_loopback_address() -> None:
    ports: list[int] = []
    thread = threading.Thread(target=anyio.run, args=(lambda: serve_http(
        Server("probe"), host="127.0.0.2", port=0, idle_timeout_s=2.0,
        on_ready=ports.append),), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30.0
    while not ports and time.monotonic() < deadline:
        time.sleep(0.05)
    url = f"http://127.0.0.2:{ports[0]}/mcp"
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    with httpx2.Client(timeout=10) as http:
        forged_host = http.post(url, json=body, headers={**accept, "Host": "evil.example"})
        forged_origin = http.post(url, json=body,
                                  headers={**accept, "Origin": "http://evil.example"})
        honest = http.post(url, json=body, headers=accept)
    assert forged_host.status_code == 421
    assert forged_origin.status_code == 403
    assert honest.status_code not in (403, 421)
    thread.join(timeout=30.0)
