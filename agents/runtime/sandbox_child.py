"""The sandbox's child process: compile one program under the AST policy and run it.

Run as a script (``python -I sandbox_child.py``) by :mod:`agentic_env.agents.runtime.sandbox`;
it imports only the standard library and RestrictedPython, so nothing of the project (nor the
simulator) is loaded in the process that runs untrusted code. The parent sends one JSON line
(the program, the tool specs, the limits); the child then talks JSON lines on stdin/stdout:

* child -> parent: ``{"type": "print", "text": ...}``, ``{"type": "call", "name": ...,
  "args": [...], "kwargs": {...}}``, finally ``{"type": "done", "error": null | "..."}``;
* parent -> child, after each call: ``{"ok": true, "result": ...}`` or
  ``{"ok": false, "error": "..."}``.

The policy (also used by the parent to refuse a program before spawning anything) is
RestrictedPython's: no names or attributes starting with ``_``, no frame/code/traceback
inspection attributes, guarded item access, iteration, unpacking and writes, and a builtins
table without ``open``, ``exec``, ``eval``, ``compile``, ``globals``, ``type``... Imports
go through an allow-list and yield a view of the module's public non-module attributes.
"""

from __future__ import annotations

import ast
import inspect
import json
import operator
import os
import random
import resource
import sys
import traceback
import types
from collections.abc import Callable, Iterable
from typing import Any

from RestrictedPython import compile_restricted_exec, limited_builtins, safe_builtins
from RestrictedPython.Eval import default_guarded_getitem, default_guarded_getiter
from RestrictedPython.Guards import (
    full_write_guard,
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    safer_getattr,
)

#: File name the program's tracebacks quote.
PROGRAM_NAME = "<program>"
#: Builtins a program may not even name (refused before it runs, not just missing).
FORBIDDEN_NAMES = frozenset({
    "open", "exec", "eval", "compile", "globals", "locals", "vars", "input", "breakpoint",
    "help", "exit", "quit",
})
#: Most traceback lines quoted in an error (the rest summarised, e.g. a deep recursion).
_FRAMES_QUOTED = 6
#: Deepest nesting of lists and dicts a tool argument may have.
ARGUMENT_DEPTH = 32
#: Builtins added to RestrictedPython's safe set (pure functions and containers).
_EXTRA_BUILTINS: dict[str, Any] = {
    name: getattr(__import__("builtins"), name)
    for name in ("all", "any", "dict", "enumerate", "filter", "frozenset", "list", "map",
                 "max", "min", "next", "reversed", "set", "sorted", "sum", "zip")
}
#: Augmented assignments (``x += 1``) by operator, for RestrictedPython's ``_inplacevar_``.
_IN_PLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.add, "-=": operator.sub, "*=": operator.mul, "/=": operator.truediv,
    "//=": operator.floordiv, "%=": operator.mod, "**=": operator.pow, "|=": operator.or_,
    "&=": operator.and_, "^=": operator.xor, "<<=": operator.lshift, ">>=": operator.rshift,
}


def policy_errors(source: str, modules: Iterable[str]) -> list[str]:
    """Why ``source`` is refused by the AST policy (empty when it may run).

    RestrictedPython's compiler gives the policy; on top of it, every import must name one
    of ``modules`` (relative imports never do) and no name of :data:`FORBIDDEN_NAMES` is used.
    """
    result = compile_restricted_exec(source, PROGRAM_NAME)
    if result.errors:
        return list(result.errors)
    allowed = set(modules)
    errors = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            errors.append(f"Line {node.lineno}: {node.id!r} is not available in the sandbox")
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = ["." * node.level + (node.module or "")]
        else:
            continue
        errors += [f"Line {node.lineno}: import of {name!r} is not allowed; allowed modules: "
                   f"{', '.join(sorted(allowed)) or 'none'}"
                   for name in names if name not in allowed]
    return errors


class OutputLimitError(RuntimeError):
    """The program printed more than the sandbox's output cap."""


class ToolError(RuntimeError):
    """A tool refused its arguments or failed in the parent."""


class _Channel:
    """The JSON-lines link to the parent over the inherited stdin/stdout pipes."""

    def __init__(self) -> None:
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer

    def send(self, message: dict[str, Any], max_bytes: int | None = None) -> None:
        """Write one message (encoded first: nothing is sent when encoding fails).

        Raises:
            ToolError: the encoded message is longer than ``max_bytes``.
        """
        data = json.dumps(message).encode() + b"\n"
        if max_bytes is not None and len(data) > max_bytes:
            raise ToolError(f"the call is {len(data)} bytes long, over the {max_bytes}-byte "
                            "limit of one tool call")
        self._out.write(data)
        self._out.flush()

    def receive(self) -> dict[str, Any]:
        line = self._in.readline()
        if not line:
            raise SystemExit(0)  # the parent went away
        return json.loads(line)


class _Printer:
    """RestrictedPython's ``_print_`` hook: forwards printed text, up to a character cap."""

    def __init__(self, channel: _Channel, cap: int) -> None:
        self._channel = channel
        self._left = cap

    def factory(self, _getattr: Any = None) -> _Printer:
        return self

    def _call_print(self, *objects: object, sep: str = " ", end: str = "\n",
                    **unsupported: object) -> None:
        if unsupported:
            raise TypeError(f"print() takes no {', '.join(sorted(unsupported))} argument here")
        text = str(sep).join(str(obj) for obj in objects) + str(end)
        if not text:
            return
        if self._left <= 0:  # nothing more is sent, however often the program tries
            raise OutputLimitError("output limit exceeded: the program printed too much")
        if len(text) > self._left:
            self._channel.send({"type": "print", "text": text[: self._left]})
            self._left = 0
            raise OutputLimitError("output limit exceeded: the program printed too much")
        self._left -= len(text)
        self._channel.send({"type": "print", "text": text})


def _too_deep(value: Any, levels: int) -> bool:
    """Whether ``value`` nests lists, tuples or dicts more than ``levels`` deep."""
    if not isinstance(value, list | tuple | dict):
        return False
    if levels <= 0:
        return True
    items = value.values() if isinstance(value, dict) else value
    return any(_too_deep(item, levels - 1) for item in items)


def _stub(channel: _Channel, spec: dict[str, Any], budget: list[int],
          max_bytes: int) -> Callable[..., Any]:
    """A function with the tool's name, signature and docstring that calls the parent."""
    params = [
        inspect.Parameter(
            p["name"], getattr(inspect.Parameter, p["kind"]),
            default=p.get("default", inspect.Parameter.empty))
        for p in spec["params"]
    ]
    signature = inspect.Signature(params)
    name = spec["name"]

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{name}(): {exc}") from None
        if budget[0] <= 0:
            raise ToolError("tool call limit exceeded")
        budget[0] -= 1
        message = {"type": "call", "name": name, "args": list(bound.args),
                   "kwargs": dict(bound.kwargs)}
        if _too_deep(message["args"], ARGUMENT_DEPTH) or _too_deep(message["kwargs"],
                                                                    ARGUMENT_DEPTH):
            raise TypeError(f"{name}(): arguments nest lists or dicts more than "
                            f"{ARGUMENT_DEPTH} levels deep")
        try:
            channel.send(message, max_bytes)  # encodes before writing: nothing sent on failure
        except ToolError as exc:
            raise ToolError(f"{name}(): {exc}") from None
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name}(): arguments must be plain data (str, numbers, "
                            f"lists, dicts, None): {exc}") from None
        reply = channel.receive()
        if not reply.get("ok"):
            raise ToolError(f"{name}(): {reply.get('error')}")
        return reply.get("result")

    call.__name__ = call.__qualname__ = name
    call.__doc__ = spec.get("doc")
    call.__signature__ = signature  # type: ignore[attr-defined]
    return call


def _module_view(module: types.ModuleType) -> types.SimpleNamespace:
    """The module's public attributes that are not modules themselves."""
    return types.SimpleNamespace(**{
        key: value for key, value in vars(module).items()
        if not key.startswith("_") and not isinstance(value, types.ModuleType)
    })


def _guarded_import(allowed: Iterable[str]) -> Callable[..., Any]:
    allowed = tuple(allowed)

    def guarded(name: str, globals: Any = None, locals: Any = None,  # noqa: A002
                fromlist: Any = (), level: int = 0) -> Any:
        if level or name not in allowed:
            raise ImportError(f"import of {name!r} is not allowed; allowed modules: "
                              f"{', '.join(allowed) or 'none'}")
        return _module_view(__import__(name))

    return guarded


def restricted_globals(tools: dict[str, Callable[..., Any]], printer: _Printer,
                       allowed_modules: Iterable[str]) -> dict[str, Any]:
    """The only namespace the program sees: safe builtins, the guards and the tool stubs."""
    builtins = {**safe_builtins, **limited_builtins, **_EXTRA_BUILTINS,
                "getattr": safer_getattr, "__import__": _guarded_import(allowed_modules)}
    return {
        "__builtins__": builtins,
        "__name__": "program",
        "_getattr_": safer_getattr,
        "_getitem_": default_guarded_getitem,
        "_getiter_": default_guarded_getiter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": full_write_guard,
        "_inplacevar_": lambda op, a, b: _IN_PLACE[op](a, b),
        "_apply_": lambda func, *args, **kwargs: func(*args, **kwargs),
        "_print_": printer.factory,
        **tools,
    }


def _limit(cpu_s: int, memory_bytes: int) -> None:
    """rlimits of this process: CPU time, address space, no new files or processes."""
    listed = [int(fd) for fd in os.listdir("/proc/self/fd")]  # includes the listing's own fd
    highest_fd = max(fd for fd in listed if _is_open(fd))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))  # SIGXCPU, then SIGKILL
    for limit, value in ((resource.RLIMIT_AS, memory_bytes), (resource.RLIMIT_FSIZE, 0),
                         (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NPROC, 0),
                         (resource.RLIMIT_NOFILE, highest_fd + 1)):
        resource.setrlimit(limit, (value, value))


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _error_text(exc: BaseException, cap: int) -> str:
    """The exception as the program's traceback lines (frames of this file left out)."""
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__)
              if frame.filename == PROGRAM_NAME]
    lines = [f"line {frame.lineno}, in {frame.name}" for frame in frames]
    if len(lines) > _FRAMES_QUOTED:
        lines[2:-2] = [f"... {len(lines) - 4} more frames"]
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    full = "; ".join([*lines, text]) if lines else text
    return full if len(full) <= cap else full[:cap] + "... [truncated]"


def main() -> None:
    """Read the job, limit this process, run the program and report."""
    channel = _Channel()
    sys.stdout = sys.stderr  # nothing but the protocol goes to the parent's pipe
    job = channel.receive()
    limits = job["limits"]
    random.seed(job.get("seed", 0))
    printer = _Printer(channel, int(limits["output_chars"]))
    budget = [int(limits["tool_calls"])]
    max_bytes = int(limits["message_bytes"])
    tools = {spec["name"]: _stub(channel, spec, budget, max_bytes) for spec in job["tools"]}
    namespace = restricted_globals(tools, printer, job.get("modules", ()))
    _limit(int(limits["cpu_s"]), int(limits["memory_bytes"]))
    error: str | None = None
    try:
        refusals = policy_errors(job["source"], job.get("modules", ()))
        if refusals:
            error = "refused by the sandbox policy: " + "; ".join(refusals)
        else:
            code = compile_restricted_exec(job["source"], PROGRAM_NAME).code
            exec(code, namespace)  # noqa: S102 - the restricted code object
    except BaseException as exc:  # noqa: BLE001 - anything the program raises fails it
        error = _error_text(exc, int(limits["output_chars"]))
    channel.send({"type": "done", "error": error})


if __name__ == "__main__":
    main()
