"""``agentic-env bench-tools``: what one tool call costs through MCP vs in-process.

The same tools of one sim episode are called ``--calls`` times each: in-process through the
tool registry, then through the MCP SDK's client against ``agentic-env serve`` over stdio and
over streamable HTTP (on 127.0.0.1). ``get_instruction`` does no work, so its times are the
protocol's overhead; ``get_robot_state`` takes one observation (both cameras rendered), for
scale. The table gives median and 90th-percentile wall time
per call in milliseconds and the median overhead over in-process. Each path's episode is
recorded into one results database (:func:`measure`).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Tools timed: (name, arguments).
TOOLS: tuple[tuple[str, dict[str, Any]], ...] = (("get_instruction", {}),
                                                 ("get_robot_state", {}))
#: Untimed calls of each tool before the timed ones.
WARMUP = 5


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median_ms": 1e3 * statistics.median(ordered),
            "p90_ms": 1e3 * ordered[int(0.9 * (len(ordered) - 1))]}


def in_process(task: str, seed: int, calls: int, db: Path) -> dict[str, dict[str, float]]:
    """Per tool: wall time of ``ToolEpisode.call`` (validation + the function), seconds; the
    episode (agent ``bench``, never finished: a failure) is then scored and recorded into the
    results database ``db``."""
    from agentic_env.harness.db import ResultStore
    from agentic_env.harness.episode import EpisodeSpec
    from agentic_env.harness.execute import worker_name
    from agentic_env.harness.tools.backends import open_episode

    episode = open_episode(EpisodeSpec(task=task, seed=seed, agent="bench"))
    try:
        results = {}
        for name, arguments in TOOLS:
            for _ in range(WARMUP):
                episode.call(name, arguments)
            samples = []
            for _ in range(calls):
                start = time.perf_counter()
                episode.call(name, arguments)
                samples.append(time.perf_counter() - start)
            results[name] = _stats(samples)
        with ResultStore(db) as store:
            episode.store(store, f"{worker_name()}:in-process")
        return results
    finally:
        episode.close()


async def _time_client(client: Any, calls: int) -> dict[str, dict[str, float]]:
    results = {}
    for name, arguments in TOOLS:
        for _ in range(WARMUP):
            await client.call_tool(name, arguments)
        samples = []
        for _ in range(calls):
            start = time.perf_counter()
            result = await client.call_tool(name, arguments)
            samples.append(time.perf_counter() - start)
            if result.is_error:
                raise RuntimeError(f"{name} failed through MCP: {result.content[0].text}")
        results[name] = _stats(samples)
    return results


def _serve_args(task: str, seed: int, db: Path, *extra: str) -> list[str]:
    return ["-m", "agentic_env.cli", "serve", "--task", task, "--seed", str(seed),
            "--db", str(db), *extra]


def over_stdio(task: str, seed: int, calls: int, db: Path) -> dict[str, dict[str, float]]:
    """Per tool: wall time of ``call_tool`` through a stdio MCP session."""
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=_serve_args(task, seed, db),
                                   env=dict(os.environ))

    async def session() -> dict[str, dict[str, float]]:
        async with Client(params) as client:
            return await _time_client(client, calls)

    return anyio.run(session)


def over_http(task: str, seed: int, calls: int, db: Path) -> dict[str, dict[str, float]]:
    """Per tool: wall time of ``call_tool`` through streamable HTTP on 127.0.0.1."""
    import anyio
    from mcp import Client

    server = subprocess.Popen(
        [sys.executable, *_serve_args(task, seed, db, "--transport", "http", "--port", "0",
                                      "--idle-timeout", "5")],
        stderr=subprocess.PIPE, text=True)
    try:
        line = ""
        while "serving" not in line:
            line = server.stderr.readline()
            if not line and server.poll() is not None:
                raise RuntimeError("agentic-env serve exited before serving")
        match = re.search(r"(http://\S+/mcp)", line)
        assert match is not None
        url = match.group(1)

        async def session() -> dict[str, dict[str, float]]:
            async with Client(url) as client:
                return await _time_client(client, calls)

        return anyio.run(session)
    finally:
        server.terminate()
        server.wait(timeout=60)


def measure(task: str, seed: int, calls: int, db: Path
            ) -> dict[str, dict[str, dict[str, float]]]:
    """Path (``in-process``, ``mcp stdio``, ``mcp http``) -> tool -> median and
    90th-percentile wall time per call (ms); each path's episode is recorded into the results
    database ``db`` (the servers' under a key of their own each, ``agentic-env serve``'s)."""
    paths: dict[str, Callable[[], dict[str, dict[str, float]]]] = {
        "in-process": lambda: in_process(task, seed, calls, db),
        "mcp stdio": lambda: over_stdio(task, seed, calls, db),
        "mcp http": lambda: over_http(task, seed, calls, db)}
    db.parent.mkdir(parents=True, exist_ok=True)
    return {label: run() for label, run in paths.items()}
