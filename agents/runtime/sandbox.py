"""The code sandbox of code-as-policy agents (ALRM's CaP executor): one program, one process.

:func:`run_program` refuses a program the AST policy rejects (RestrictedPython, see
:mod:`agentic_env.agents.runtime.sandbox_child`) without starting anything; otherwise it runs
the program in a fresh ``python -I`` process that

* sees only stubs of the given tool functions (same names, signatures and docstrings); a
  stub call goes over the stdin/stdout pipe to this process, which checks the arguments,
  runs the real function and sends its result back as plain JSON data;
* inherits no file descriptor but its three standard pipes, and no environment variable
  (no API keys, no ``PYTHONPATH``); it starts in an empty temporary folder;
* runs under rlimits on CPU time, address space, file size (0), open files (none more) and
  processes (0; root ignores this one, but no program can reach ``fork`` anyway), and is
  killed by this process past its wall time (time spent in the parent's tools not counted);
* has its source, printed output, tool calls, protocol messages and the bytes of all its
  tool arguments capped; a tool argument nested too deeply or too large fails the program.

Whatever the program does (deep nesting, invalid Unicode, floods, huge messages), the parent
never raises: it gets a :class:`SandboxResult` whose log and error are valid Unicode with
control characters escaped and sizes capped, holding a bounded copy of each call's
arguments; the next program runs as if nothing happened. An error fails the
program (ALRM: "if any part of the generated code contains an error, the entire subtask
execution may fail").
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from agentic_env.agents.runtime.sandbox_child import policy_errors
from agentic_env.errors import InvalidConfigError
from agentic_env.text import bounded, excerpt, safe_text

#: The child's script, run by path so the child imports nothing of the project.
CHILD_SCRIPT = Path(__file__).with_name("sandbox_child.py")
#: Modules a program may import by default (it gets their public, non-module attributes).
DEFAULT_MODULES: tuple[str, ...] = ("math", "random", "itertools")

Outcome = Literal["ok", "refused", "error", "killed"]
#: Bytes of the child's stderr kept to explain a crash.
_STDERR_KEPT = 20_000
#: Longest error or refusal message of a result, characters.
MESSAGE_CHARS = 2_000
#: Policy objections quoted in a refusal (the rest counted).
_REFUSALS_QUOTED = 10


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one program run.

    Attributes:
        cpu_s: CPU seconds of the child (RLIMIT_CPU; SIGXCPU kills it).
        wall_s: seconds the child may run, not counting time in the parent's tools.
        memory_bytes: address space of the child (RLIMIT_AS).
        output_chars: characters the program may print; also caps an error's text.
        tool_calls: tool calls the program may make.
        message_bytes: longest protocol line the parent accepts from the child (a tool
            call over it fails in the program).
        argument_bytes: bytes of all the tool calls of one run together (past it the run
            is killed); bounds what the parent holds for one run.
        source_chars: longest program accepted.
    """

    cpu_s: int = 5
    wall_s: float = 15.0
    memory_bytes: int = 512 * 2**20
    output_chars: int = 20_000
    tool_calls: int = 100
    message_bytes: int = 256_000
    argument_bytes: int = 1_000_000
    source_chars: int = 100_000


@dataclass(frozen=True)
class ToolCall:
    """One tool call the program made, with what the parent answered (``args`` and
    ``kwargs`` as :func:`~agentic_env.text.bounded` copies: long values are cut)."""

    name: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    result: Any = None
    error: str | None = None


@dataclass(frozen=True)
class SandboxResult:
    """What one program run did.

    Attributes:
        outcome: ``ok``; ``refused`` (policy or bad input, nothing ran); ``error`` (the
            program raised); ``killed`` (a limit was hit or the child broke the protocol).
        log: the program's printed output (capped).
        tool_calls: every tool call the parent answered, in order.
        error: why it is not ``ok`` (the program's exception, the limit, the refusal).
        wall_s: seconds from start to finish.
    """

    outcome: Outcome
    log: str = ""
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)
    error: str | None = None
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        """The program ran to its end without an error."""
        return self.outcome == "ok"


def child_environment() -> dict[str, str]:
    """The child's whole environment: nothing inherited from this process."""
    return {"PATH": os.defpath, "LC_ALL": "C.UTF-8"}


def tool_spec(name: str, function: Callable[..., Any]) -> dict[str, Any]:
    """What the child needs to build a stub of ``function``: name, parameters, docstring.

    Raises:
        InvalidConfigError: ``name`` is not an identifier, or a default is not plain data.
    """
    if not name.isidentifier() or name.startswith("_"):
        raise InvalidConfigError(f"tool name {name!r} must be a public Python identifier")
    params = []
    for param in inspect.signature(function).parameters.values():
        entry: dict[str, Any] = {"name": param.name, "kind": param.kind.name}
        if param.default is not inspect.Parameter.empty:
            try:
                json.dumps(param.default)
            except (TypeError, ValueError) as exc:
                raise InvalidConfigError(
                    f"tool {name}: the default of {param.name} must be plain data") from exc
            entry["default"] = param.default
        params.append(entry)
    return {"name": name, "params": params, "doc": inspect.getdoc(function) or ""}


def to_plain(value: Any) -> Any:
    """``value`` as JSON data: arrays to lists, dataclasses to dicts, other objects to text."""

    def convert(obj: Any) -> Any:
        if hasattr(obj, "tolist"):
            return obj.tolist()
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return dataclasses.asdict(obj)
        return str(obj)

    return json.loads(json.dumps(value, default=convert))


def _call_tool(function: Callable[..., Any], name: str, args: list[Any],
               kwargs: dict[str, Any]) -> ToolCall:
    kept_args, kept_kwargs = tuple(bounded(args)), bounded(kwargs)
    try:
        inspect.signature(function).bind(*args, **kwargs)
    except TypeError as exc:
        return ToolCall(name, kept_args, kept_kwargs, error=_message(f"TypeError: {exc}"))
    try:
        result = to_plain(function(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - a failing tool is reported to the program
        return ToolCall(name, kept_args, kept_kwargs,
                        error=_message(f"{type(exc).__name__}: {exc}"))
    return ToolCall(name, kept_args, kept_kwargs, result=result)


def _message(text: object) -> str:
    """An error or refusal as a result keeps it: valid Unicode, controls escaped, capped."""
    return safe_text(text, MESSAGE_CHARS, controls=True)


def _exit_reason(returncode: int, limits: SandboxLimits, stderr: str) -> str:
    if returncode == -signal.SIGXCPU:
        reason = f"killed: CPU time limit of {limits.cpu_s} s exceeded"
    elif returncode < 0:
        reason = f"killed by signal {signal.Signals(-returncode).name}"
    else:
        reason = f"the sandbox process exited with status {returncode}"
    tail = stderr.strip().splitlines()[-1:] if stderr.strip() else []
    return reason + (f" ({safe_text(tail[0], 500, controls=True)})" if tail else "")


class _Run:
    """One child process and the parent's side of its protocol."""

    def __init__(self, tools: Mapping[str, Callable[..., Any]], limits: SandboxLimits) -> None:
        self.tools = tools
        self.limits = limits
        self.log: list[str] = []
        self.logged = 0
        self.calls: list[ToolCall] = []
        self.argument_bytes = 0
        self.in_tool = False

    def run(self, job: dict[str, Any], workdir: str) -> tuple[Outcome, str | None]:
        """Start the child in ``workdir``, send it ``job`` and serve it to its end."""
        proc = subprocess.Popen(
            [sys.executable, "-I", "-B", str(CHILD_SCRIPT)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=workdir, env=child_environment(), close_fds=True, start_new_session=True,
        )
        try:
            return self._talk(proc, job)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()

    def _talk(self, proc: subprocess.Popen[bytes],
              job: dict[str, Any]) -> tuple[Outcome, str | None]:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        deadline = time.monotonic() + self.limits.wall_s
        try:
            proc.stdin.write(json.dumps(job).encode() + b"\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # the child died at start; its exit status says why
        buffer, errors = b"", b""
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            selector.register(proc.stderr, selectors.EVENT_READ)
            while True:
                if b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    started = time.monotonic()
                    finished = self._handle(line, proc.stdin)
                    if self.in_tool:  # only time in the parent's tools is not charged
                        deadline += time.monotonic() - started
                    if finished is not None:
                        return finished
                    continue
                if len(buffer) > self.limits.message_bytes:
                    return "killed", "killed: protocol message over the size limit"
                left = deadline - time.monotonic()
                if left <= 0:
                    return "killed", f"killed: wall time limit of {self.limits.wall_s:g} s exceeded"
                for key, _ in selector.select(left):
                    chunk = os.read(key.fd, 65536)
                    if key.fileobj is proc.stderr:
                        errors = (errors + chunk)[:_STDERR_KEPT]
                        if not chunk:
                            selector.unregister(proc.stderr)
                    elif chunk:
                        buffer += chunk
                    else:
                        proc.wait()
                        errors += proc.stderr.read(_STDERR_KEPT)
                        return "killed", _exit_reason(proc.returncode, self.limits,
                                                      errors.decode(errors="replace"))

    def _handle(self, line: bytes, reply_to: IO[bytes]) -> tuple[Outcome, str | None] | None:
        """Act on one message; the run's end when it is the last."""
        self.in_tool = False
        try:
            message = json.loads(line)
            kind = message["type"]
        except RecursionError:
            return "killed", "killed: a message of the sandbox process is nested too deeply"
        except (ValueError, TypeError, KeyError, IndexError, MemoryError):
            return "killed", "killed: the sandbox process broke the protocol"
        if kind == "print":
            if self.logged >= self.limits.output_chars:  # the child stops printing there
                return "killed", "killed: output limit exceeded and the printing went on"
            text = str(message.get("text", ""))[: self.limits.output_chars - self.logged]
            self.log.append(text)
            self.logged += len(text)
            return None
        if kind == "done":
            error = message.get("error")
            if error is None:
                return "ok", None
            return "error", _message(error)
        if kind != "call":
            return "killed", "killed: the sandbox process broke the protocol"
        self.argument_bytes += len(line)
        if self.argument_bytes > self.limits.argument_bytes:
            return "killed", (f"killed: the tool calls' arguments are over the "
                              f"{self.limits.argument_bytes}-byte limit of one program")
        self.in_tool = True
        return self._answer_call(message, reply_to)

    def _answer_call(self, message: dict[str, Any],
                     reply_to: IO[bytes]) -> tuple[Outcome, str | None] | None:
        name = message.get("name")
        args, kwargs = message.get("args"), message.get("kwargs")
        if (not isinstance(name, str) or name not in self.tools or not isinstance(args, list)
                or not isinstance(kwargs, dict)):
            return "killed", ("killed: the sandbox process asked for an invalid call of "
                              f"{excerpt(name)}")
        if len(self.calls) >= self.limits.tool_calls:
            return "killed", "killed: tool call limit exceeded"
        call = _call_tool(self.tools[name], name, args, kwargs)
        self.calls.append(call)
        reply = ({"ok": True, "result": call.result} if call.error is None
                 else {"ok": False, "error": call.error})
        try:
            reply_to.write(json.dumps(reply).encode() + b"\n")
            reply_to.flush()
        except BrokenPipeError:
            pass  # the child died; the next read sees EOF
        return None


def check_program(source: object, modules: Iterable[str] = DEFAULT_MODULES,
                  max_chars: int = SandboxLimits.source_chars) -> str | None:
    """Why the policy refuses ``source`` with imports of ``modules`` (``None``: it may run)."""
    if not isinstance(source, str):
        return f"refused: the program must be text, not {type(source).__name__}"
    if len(source) > max_chars:
        return f"refused: the program has {len(source)} characters, over the {max_chars} limit"
    try:
        errors = policy_errors(source, modules)
    except (ValueError, SyntaxError, RecursionError, MemoryError) as exc:
        return _message(f"refused: the program does not compile: {type(exc).__name__}: {exc}")
    if errors:
        more = len(errors) - _REFUSALS_QUOTED
        quoted = "; ".join(errors[:_REFUSALS_QUOTED]) + (f"; and {more} more" if more > 0 else "")
        return _message("refused by the sandbox policy: " + quoted)
    return None


def run_program(
    source: object,
    tools: Mapping[str, Callable[..., Any]],
    *,
    limits: SandboxLimits | None = None,
    modules: Iterable[str] = DEFAULT_MODULES,
    seed: int = 0,
) -> SandboxResult:
    """Run one generated program in the sandbox (see the module docstring).

    Args:
        source: the program's Python text.
        tools: the only functions it can reach, by the name it calls them.
        limits: resource limits (defaults: :class:`SandboxLimits`).
        modules: the modules it may import.
        seed: seed of the child's ``random`` module.

    Raises:
        InvalidConfigError: a tool name or default is unusable (the caller's bug, not the
            program's).
    """
    limits = limits or SandboxLimits()
    modules = tuple(modules)
    specs = [tool_spec(name, function) for name, function in tools.items()]
    start = time.monotonic()
    refusal = check_program(source, modules, limits.source_chars)
    if refusal is not None:
        return SandboxResult("refused", error=refusal, wall_s=time.monotonic() - start)
    job = {"source": source, "tools": specs, "modules": list(modules), "seed": seed,
           "limits": {"cpu_s": limits.cpu_s, "memory_bytes": limits.memory_bytes,
                      "output_chars": limits.output_chars, "tool_calls": limits.tool_calls,
                      "message_bytes": limits.message_bytes}}
    run = _Run(tools, limits)
    with tempfile.TemporaryDirectory(prefix="agent-sandbox-") as workdir:
        outcome, error = run.run(job, workdir)
    log = safe_text("".join(run.log), limits.output_chars, controls=True)
    return SandboxResult(outcome, log, tuple(run.calls), error, time.monotonic() - start)
