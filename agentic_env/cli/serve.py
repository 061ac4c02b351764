"""``agentic-env serve``: one robot episode as an MCP server any agent framework can drive.

The episode's tools (``--tools``) and resources (camera images, the instruction) are served
over the Model Context Protocol: stdio by default (one client, e.g. a Claude Desktop or
LangGraph config that launches this command), or streamable HTTP at
``http://127.0.0.1:PORT/mcp``. Another address needs ``--allow-remote`` and a bearer token
(``--token-env``); it is refused otherwise. The episode is scored from ground truth (on the
real robot: by the operator's rubric) when the client calls ``finish`` or disconnects (stdio:
closes the pipe; HTTP: ends its session, or sends nothing for ``--idle-timeout`` seconds;
or the server is interrupted), and stored in the results database (``--db``) under
``<spec key>:<8 hex>`` (``<spec key>:real:<8 hex>`` for the real backend).

Logs go to stderr; on stdio, stdout carries the protocol only.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
from pathlib import Path

from agentic_env.cli.real import add_real_backend_arguments
from agentic_env.cli.realism import add_realism_argument
from agentic_env.errors import AgenticEnvError

#: Environment variable holding the bearer token, unless --token-env names another.
TOKEN_ENV = "AGENTIC_ENV_MCP_TOKEN"


def tty_ask(prompt: str) -> str:
    """Ask the operator on the controlling terminal (stdin/stdout may carry the protocol)."""
    with open("/dev/tty", "r+", encoding="utf-8") as tty:
        tty.write(prompt)
        tty.flush()
        return tty.readline()


def _parser() -> argparse.ArgumentParser:
    from agentic_env.agents.tools.registry import tool_set_names
    from agentic_env.harness.tools.backends import BACKENDS

    parser = argparse.ArgumentParser(prog="agentic-env serve", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="sorting")
    parser.add_argument("--setting", default="lab")
    parser.add_argument("--seed", type=int, default=0)
    add_realism_argument(parser)
    parser.add_argument("--tools", default="primitives", choices=[*tool_set_names(), "all"])
    parser.add_argument("--backend", default="sim", choices=BACKENDS)
    parser.add_argument("--perception", default=None, metavar="MODEL",
                        help="model the tools themselves ask (the alrm set's detector lists "
                        "and locates objects): any model spec (default: the sim-oracle on "
                        "the sim backend and the twin, none on hardware)")
    parser.add_argument("--max-actions", type=int, default=40,
                        help="primitive actions before action tools answer BLOCKED")
    parser.add_argument("--db", type=Path, default=Path("runs/mcp.sqlite"),
                        help="results database (default runs/mcp.sqlite)")
    parser.add_argument("--client-label", default="mcp-client",
                        help="the database's model column for this episode")
    http = parser.add_argument_group("transport")
    http.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    http.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1)")
    http.add_argument("--port", type=int, default=8765, help="HTTP port (0 = any free one)")
    http.add_argument("--idle-timeout", type=float, default=600.0,
                      help="HTTP: seconds without a request after which the client counts as "
                           "disconnected and the episode is scored (default 600)")
    http.add_argument("--allow-remote", action="store_true",
                      help="allow a non-loopback --host (needs a bearer token)")
    http.add_argument("--token-env", default=TOKEN_ENV,
                      help=f"environment variable with the bearer token (default {TOKEN_ENV})")
    add_real_backend_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Serve one episode; returns 0 after it was scored, 1 on a configuration error."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    args = _parser().parse_args(argv)
    import anyio

    from agentic_env.harness.db import ResultStore
    from agentic_env.harness.episode import EpisodeSpec
    from agentic_env.harness.tools.backends import RealOptions, open_episode
    from agentic_env.harness.tools.mcp_server import (
        build_server,
        check_bind,
        serve_http,
        serve_stdio,
    )

    token = os.environ.get(args.token_env) or None
    try:
        if args.transport == "http":
            check_bind(args.host, args.allow_remote, token)
        spec = EpisodeSpec(task=args.task, setting=args.setting, seed=args.seed,
                           agent=f"mcp:{args.tools}", model=args.client_label,
                           max_actions=args.max_actions, realism=args.realism)
        real = RealOptions(args.twin, args.robot_host, args.gripper_port, args.calibration,
                           args.confirm_each_step)
        perception = args.perception or (
            "sim-oracle" if args.backend == "sim" or args.twin else None)
        episode = open_episode(spec, args.tools, args.backend, real, tty_ask, perception)
    except (AgenticEnvError, OSError) as error:
        print(f"serve: {error}", file=sys.stderr)
        return 1
    store = ResultStore(args.db)
    worker = f"{socket.gethostname()}:{os.getpid()}:{args.backend}"
    keys: list[str] = []

    def score() -> str:
        if not keys:
            keys.append(episode.store(store, worker, "" if args.backend == "sim" else "real"))
        result = episode.result
        assert result is not None
        return (f"Scored: success={result.success}, score={result.score:.2f} ({result.n_done} "
                f"of {result.n_required} required steps, {result.n_extra} extra); stored as "
                f"{keys[0]} in {args.db}.")

    server = build_server(episode, score)
    try:
        if args.transport == "stdio":
            anyio.run(serve_stdio, server)
        else:
            def ready(port: int) -> None:
                print(f"serving http://{args.host}:{port}/mcp ({episode.spec.task}, seed "
                      f"{args.seed}); Ctrl-C ends and scores the episode", file=sys.stderr)

            anyio.run(lambda: serve_http(server, args.host, args.port, token,
                                         args.idle_timeout, ready))
    except KeyboardInterrupt:
        pass
    finally:
        try:
            print(score(), file=sys.stderr)
        finally:
            episode.close()
            store.close()
    return 0
