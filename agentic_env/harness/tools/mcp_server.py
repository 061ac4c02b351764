"""The tool episode over the Model Context Protocol (official ``mcp`` SDK, low-level server).

Tools are the episode's tool set with the schemas of :mod:`agentic_env.agents.tools.schema`;
every call is validated by the tool registry, so a malformed call comes back as a tool error
(``isError`` with ``BAD_ARGS`` and the valid values) and the server keeps serving. Resources:
``camera://shoulder_rgb`` and ``camera://wrist_rgb`` (PNG, rendered or captured when read)
and ``task://instruction`` (text).

Transports: stdio, or streamable HTTP (``/mcp``) bound to 127.0.0.1 unless
:func:`check_bind` allows another address (explicit opt-in plus a bearer token, which
:class:`BearerAuth` then requires on every request). On any loopback address (127.0.0.2 and
``::1`` too) the ``Host`` and ``Origin`` headers must name that address
(:func:`loopback_security`: no DNS rebinding from a web page).
"""

from __future__ import annotations

import base64
import hmac
import io
import ipaddress
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from agentic_env.errors import InvalidConfigError
from agentic_env.harness.tools.episode import ToolEpisode

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.transport_security import TransportSecuritySettings

#: Camera images served as resources: URI -> observation key.
CAMERA_RESOURCES: dict[str, str] = {"camera://shoulder_rgb": "shoulder_rgb",
                                    "camera://wrist_rgb": "wrist_rgb"}
INSTRUCTION_URI = "task://instruction"
SERVER_NAME = "agentic-env"


def png_base64(pixels: np.ndarray) -> str:
    """Base64 PNG of an (H, W, 3) uint8 image."""
    buffer = io.BytesIO()
    Image.fromarray(np.asarray(pixels, dtype=np.uint8)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine's loopback."""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def loopback_security(host: str) -> TransportSecuritySettings | None:
    """Host and Origin checks for serving on loopback address ``host`` (any port): the
    headers must name ``host`` itself or ``localhost`` (on ``localhost``, 127.0.0.1 and
    ``::1`` too); ``None`` for a non-loopback address, which needs the bearer token
    instead."""
    from mcp.server.transport_security import TransportSecuritySettings

    if not is_loopback(host):
        return None
    names = {f"[{host}]" if ":" in host else host, "localhost"}
    if host == "localhost":
        names |= {"127.0.0.1", "[::1]"}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(f"{name}:*" for name in names),
        allowed_origins=sorted(f"http://{name}:*" for name in names))


def check_bind(host: str, allow_remote: bool, token: str | None) -> None:
    """Refuse to serve HTTP on a non-loopback address without an explicit opt-in and a token.

    Raises:
        InvalidConfigError: ``host`` is not loopback and ``allow_remote`` is false or no
            bearer token is set.
    """
    if is_loopback(host):
        return
    if not allow_remote or not token:
        raise InvalidConfigError(
            f"refusing to serve on {host!r}: the robot would be reachable from other machines. "
            "Serve on 127.0.0.1 (the default), or pass --allow-remote together with a bearer "
            "token (--token-env NAME) that every client must send")


def build_server(episode: ToolEpisode, on_finish: Callable[[], str]) -> Server:
    """An MCP server exposing ``episode``'s tools and resources.

    Args:
        episode: the episode the tools act on.
        on_finish: called once when ``finish`` succeeds; scores and stores the episode and
            returns a one-line summary appended to ``finish``'s result.

    Raises:
        InvalidConfigError: the ``mcp`` package is missing (the message names the extra).
    """
    try:
        import mcp_types as types
        from mcp.server import Server
    except ImportError as exc:
        raise InvalidConfigError("the MCP server needs the 'mcp' extra: "
                                 "pip install -e '.[mcp]'") from exc

    tools = [types.Tool(name=spec.name, description=spec.description,
                        input_schema=dict(spec.parameters)) for spec in episode.tools.specs()]

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        was_finished = episode.finished
        result = episode.call(params.name, params.arguments or {})
        text = result.render()
        if episode.finished and not was_finished:
            text += " " + on_finish()
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=result.to_dict(), is_error=not result.ok)

    async def list_resources(_ctx: Any, _params: Any) -> types.ListResourcesResult:
        cameras = [types.Resource(uri=uri, name=key, mime_type="image/png",
                                  description=f"current {key.split('_')[0]} camera image")
                   for uri, key in CAMERA_RESOURCES.items()]
        return types.ListResourcesResult(resources=[*cameras, types.Resource(
            uri=INSTRUCTION_URI, name="instruction", mime_type="text/plain",
            description="the task instruction")])

    async def read_resource(_ctx: Any, params: types.ReadResourceRequestParams
                            ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == INSTRUCTION_URI:
            return types.ReadResourceResult(contents=[types.TextResourceContents(
                uri=uri, mime_type="text/plain", text=episode.instruction)])
        if uri not in CAMERA_RESOURCES:
            from mcp.shared.exceptions import MCPError

            valid = ", ".join([*CAMERA_RESOURCES, INSTRUCTION_URI])
            raise MCPError(types.INVALID_PARAMS, f"unknown resource {uri!r}; valid: {valid}")
        pixels = episode.io.observe()[CAMERA_RESOURCES[uri]]
        return types.ReadResourceResult(contents=[types.BlobResourceContents(
            uri=uri, mime_type="image/png", blob=png_base64(pixels))])

    return Server(SERVER_NAME, instructions=(
        f"Robot episode: {episode.spec.task} / {episode.spec.setting} / seed "
        f"{episode.spec.seed}. Read task://instruction, act with the tools, call finish."),
        on_list_tools=list_tools, on_call_tool=call_tool,
        on_list_resources=list_resources, on_read_resource=read_resource)


async def serve_stdio(server: Server) -> None:
    """Serve one client over this process's stdin/stdout until it disconnects."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers", [])).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"www-authenticate", b"Bearer"),
                                        (b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"missing or wrong token"})
                return
        await self._app(scope, receive, send)


class SessionWatch:
    """ASGI middleware: notes the time of the last request and calls ``on_end`` after a
    client ends its MCP session (``DELETE``; handshake-era sessions only)."""

    def __init__(self, app: Any, on_end: Callable[[], None]) -> None:
        self._app = app
        self._on_end = on_end
        self.last_request = time.monotonic()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.last_request = time.monotonic()
        await self._app(scope, receive, send)
        self.last_request = time.monotonic()
        if scope["type"] == "http" and scope.get("method") == "DELETE":
            self._on_end()


async def serve_http(server: Server, host: str = "127.0.0.1", port: int = 8765,
                     token: str | None = None, idle_timeout_s: float | None = 600.0,
                     on_ready: Callable[[int], None] | None = None) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until the client disconnects or the
    process is interrupted.

    Sessionless (2026-07-28) clients have no disconnect message, so a client counts as gone
    after ``idle_timeout_s`` seconds without a request; handshake-era clients end their
    session with ``DELETE``, which the SDK's client sends when it exits.

    Args:
        server: from :func:`build_server`.
        host / port: where to listen (check the address with :func:`check_bind` first;
            port 0 = any free port).
        token: bearer token every request must carry (``None`` = none, loopback only).
        idle_timeout_s: seconds without a request after which serving ends (``None`` = never).
        on_ready: receives the bound port once listening.
    """
    import anyio
    import uvicorn

    servers: list[uvicorn.Server] = []

    def stop() -> None:
        servers[0].should_exit = True

    watch = SessionWatch(server.streamable_http_app(
        host=host, transport_security=loopback_security(host)), stop)
    app: Any = BearerAuth(watch, token) if token else watch
    http = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                         lifespan="on"))
    servers.append(http)

    async def supervise() -> None:
        while not http.started:
            await anyio.sleep(0.02)
        if on_ready is not None:
            on_ready(http.servers[0].sockets[0].getsockname()[1])
        while idle_timeout_s is not None and not http.should_exit:
            if time.monotonic() - watch.last_request > idle_timeout_s:
                stop()
            await anyio.sleep(min(1.0, idle_timeout_s / 4))

    async with anyio.create_task_group() as group:
        group.start_soon(supervise)
        await http.serve()
        group.cancel_scope.cancel()
