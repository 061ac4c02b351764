"""The MCP server driven by the SDK's own client: a scripted episode over stdio scored into
the results database, malformed calls as tool errors, HTTP with a bearer token, bind rules."""

from __future__ import annotations

import base64
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from PIL import Image

from agentic_env.cli import serve
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.experts import expert_actions
from agentic_env.harness.db import ResultStore
from agentic_env.harness.tools.mcp_server import check_bind
from agentic_env.oracle.tool_reference import primitive_call

SEED = 3


def expert_calls(steps: int) -> list[tuple[str, dict]]:
    """The scripted expert's first ``steps`` primitives as tool calls (the server's env is
    deterministic, so they do the same there)."""
    env = SimEnv(task="sorting", realism="ideal")
    try:
        env.reset(seed=SEED)
        actions = iter(expert_actions(env.task, env.scene_state))
        calls = []
        for _ in range(steps):
            action = next(actions)
            calls.append(primitive_call(action))
            env.step(action)
        return calls
    finally:
        env.close()


def serve_args(db: Path, *extra: str) -> list[str]:
    return ["-m", "agentic_env.cli", "serve", "--task", "sorting", "--seed", str(SEED),
            "--db", str(db), *extra]


def test_a_scripted_episode_over_stdio_is_scored_into_the_database(tmp_path):
    db = tmp_path / "mcp.sqlite"
    pick, place = expert_calls(2)
    params = StdioServerParameters(command=sys.executable, args=serve_args(db),
                                   env={**os.environ, "MUJOCO_GL": "egl"})
    texts: dict[str, str] = {}

    async def session() -> None:
        async with Client(params) as client:
            tools = await client.list_tools()
            assert [t.name for t in tools.tools][:3] == ["get_instruction", "get_robot_state",
                                                         "home"]
            pick_schema = next(t for t in tools.tools if t.name == "pick").input_schema
            assert pick_schema["properties"]["width"]["maximum"] == 0.085
            instruction = await client.read_resource("task://instruction")
            texts["instruction"] = instruction.contents[0].text
            image = await client.read_resource("camera://shoulder_rgb")
            png = Image.open(io.BytesIO(base64.b64decode(image.contents[0].blob)))
            assert png.mode == "RGB" and png.size[0] > 0
            bad = await client.call_tool("pick", {"x": 2.0, "y": 0.0, "z": 0.1, "grip": 1})
            assert bad.is_error and bad.structured_content["code"] == "BAD_ARGS"
            assert "x=2.0 is out of range [0.15, 0.95]" in bad.content[0].text
            assert "unknown argument(s) grip" in bad.content[0].text
            wrong = await client.call_tool("teleport", {"x": 1})
            assert wrong.is_error and "valid tools: get_instruction" in wrong.content[0].text
            for name, arguments in (pick, place):  # the server kept serving
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content[0].text
            done = await client.call_tool("finish", {"success": True, "summary": "one done"})
            texts["finish"] = done.content[0].text
            after = await client.call_tool("home", {})
            assert after.is_error and after.structured_content["code"] == "BLOCKED"

    anyio.run(session)
    assert "Scored: success=False" in texts["finish"]
    with ResultStore(db) as store:
        (row,) = store.episodes()
        calls = store.calls()
    assert row["agent"] == "mcp:primitives" and row["seed"] == SEED
    assert (row["actions"], row["n_done"], row["n_extra"]) == (2, 2, 0)
    assert row["n_required"] > 2 and 0 < row["score"] < 1 and not row["success"]
    assert row["failure"] == "goal" and row["goal_checker_error"] == 1
    # stored when finish was called (the refused call after it is not part of the episode)
    assert [c["module"] for c in calls] == ["tool:pick", "tool:teleport", "tool:pick",
                                            "tool:place", "tool:finish"]
    assert [c["verdict"] for c in calls] == ["BAD_ARGS", "BAD_ARGS", "OK", "OK", "OK"]
    assert texts["instruction"]


def test_http_needs_the_token_and_scores_a_client_that_went_away(tmp_path):
    db = tmp_path / "mcp.sqlite"
    env = {**os.environ, "MUJOCO_GL": "egl", "TEST_MCP_TOKEN": "s3cret"}
    server = subprocess.Popen(
        [sys.executable, *serve_args(db, "--transport", "http", "--port", "0",
                                     "--idle-timeout", "2", "--token-env", "TEST_MCP_TOKEN")],
        stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = ""
        while "serving" not in line:
            line = server.stderr.readline()
            assert line or server.poll() is None, "the server exited early"
        url = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line).group(1)

        async def session() -> None:
            async with httpx2.AsyncClient() as anonymous:
                assert (await anonymous.post(url, json={})).status_code == 401
            headers = {"Authorization": "Bearer s3cret"}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                    Client(streamable_http_client(url, http_client=http)) as client:
                result = await client.call_tool("get_instruction", {})
                assert not result.is_error
                bad = await client.call_tool("open_gripper", {"width": 0.02})
                assert bad.is_error and "valid: none" in bad.content[0].text

        anyio.run(session)
        assert server.wait(timeout=60) == 0
        assert "Scored: success=False" in server.stderr.read()
    finally:
        server.kill()
        server.wait()
    with ResultStore(db) as store:
        (row,) = store.episodes()
    assert row["failure"] == "limits" and row["actions"] == 0
    assert "without calling finish" in row["failure_detail"]


def test_other_addresses_need_an_explicit_flag_and_a_token(capsys):
    for host in ("127.0.0.1", "localhost", "::1"):
        check_bind(host, allow_remote=False, token=None)
    for allow, token in ((False, None), (True, None), (False, "t")):
        with pytest.raises(InvalidConfigError, match="refusing to serve on '0.0.0.0'"):
            check_bind("0.0.0.0", allow, token)
    check_bind("0.0.0.0", allow_remote=True, token="t")
    assert serve.main(["--transport", "http", "--host", "0.0.0.0", "--allow-remote",
                       "--token-env", "UNSET_TOKEN_VARIABLE_FOR_TEST"]) == 1
    assert "--allow-remote together with a bearer token" in capsys.readouterr().err
