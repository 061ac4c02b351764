"""A local OpenAI-compatible chat server for tests that drive the real litellm path.

:class:`ChatServer` binds 127.0.0.1 on a free port and answers ``POST /v1/chat/completions``
in a thread, one step per request. A step is ``("ok", text)`` (an assistant message with that
content), ``("ok", {...})`` (the message's fields: ``content``, ``tool_calls``, ``refusal``;
a ``finish_reason`` key sets the choice's, default ``tool_calls`` with calls else ``stop``),
``("429", "slow down")`` (an error status and message), ``("sleep", 2.0)`` (no answer for that
long), or a callable ``step(body) -> step`` that chooses from the request; a server given one
callable instead of a list asks it for every request. The ``chat_server``
fixture (registered in ``tests/conftest.py``) starts servers and, at teardown, stops them and
closes the litellm clients that talked to them, so no socket outlives its test.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentic_env.agents.models.litellm_backend import LiteLLMBackend, import_litellm

Step = tuple[str, Any] | Callable[[dict[str, Any]], "Step"]
#: (prompt tokens, completion tokens) of every answer, or a function of the request count.
UsageRule = tuple[int, int] | Callable[[int], tuple[int, int]]


def tool_call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    """One native tool call of an assistant message."""
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def completion_payload(model: str, message: dict[str, Any],
                       usage: tuple[int, int]) -> dict[str, Any]:
    """A ``chat.completion`` answer with one choice holding ``message`` (its optional
    ``finish_reason`` key moves to the choice)."""
    fields = dict(message)
    finish = fields.pop("finish_reason", "tool_calls" if fields.get("tool_calls") else "stop")
    fields.setdefault("content", None)
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", **fields}}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                      "total_tokens": sum(usage)}}


class ChatServer:
    """Serves ``/v1/chat/completions`` from ``steps``, one per request, in order (or from
    ``steps(body)`` for every request when ``steps`` is callable).

    Attributes:
        requests: every request body received, in order.
        url: the server's base URL (``http://127.0.0.1:<port>/v1``).
    """

    def __init__(self, steps: list[Step] | Callable[[dict[str, Any]], Step],
                 usage: UsageRule = (321, 12)) -> None:
        self.steps = steps if callable(steps) else list(steps)
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                step = server.steps if callable(server.steps) else server.steps.pop(0)
                while callable(step):
                    step = step(body)
                kind, value = step
                if kind == "sleep":
                    time.sleep(value)
                    return
                if kind == "ok":
                    message = {"content": value} if isinstance(value, str) else value
                    count = len(server.requests)
                    tokens = usage(count) if callable(usage) else usage
                    status, payload = 200, completion_payload(body["model"], message, tokens)
                else:
                    status, payload = int(kind), {"error": {"message": value}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # the client gave up on a slow answer: expected in timeout tests

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def backend(self, model: str = "openai/local-vlm", **kwargs: Any) -> LiteLLMBackend:
        """A litellm backend for ``model`` asking this server."""
        return LiteLLMBackend(model, api_base=self.url,
                              completion_kwargs={"api_key": "sk-local"}, **kwargs)

    def close(self) -> None:
        """Stop serving, close the listening socket, and close the litellm clients cached
        for this server's URL (their pooled connections are sockets)."""
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)
        cache = import_litellm().in_memory_llm_clients_cache
        for key, client in list(cache.cache_dict.items()):
            if str(getattr(client, "base_url", "")).startswith(self.url):
                cache.cache_dict.pop(key, None)
                cache.ttl_dict.pop(key, None)
                client.close()


def serve_chats() -> Iterator[Callable[..., ChatServer]]:
    """Generator behind the ``chat_server`` fixture: yields ``start(steps, usage=...)``,
    closes every server it started afterwards."""
    servers: list[ChatServer] = []

    def start(steps: list[Step] | Callable[[dict[str, Any]], Step],
              usage: UsageRule = (321, 12)) -> ChatServer:
        servers.append(ChatServer(steps, usage))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
