"""The sandbox's guarantees beyond the corpus: isolation of the child process, the wall-time
kill, plain-data results and bad input that never crashes the parent."""

from __future__ import annotations

import os
import pathlib
import time

import numpy as np
import pytest

from agentic_env.agents.runtime.sandbox import (
    CHILD_SCRIPT,
    SandboxLimits,
    run_program,
    to_plain,
    tool_spec,
)
from agentic_env.errors import InvalidConfigError

#: A default value that is not JSON data.
_NOT_PLAIN = object()


def _child_pids() -> list[int]:
    """Pids of this process's sandbox children."""
    pids = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if ppid == os.getpid() and str(CHILD_SCRIPT).encode() in cmdline:
            pids.append(int(entry.name))
    return pids


def test_child_has_no_secrets_no_inherited_files_and_an_empty_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-sandbox")
    seen: dict[str, object] = {}

    def inspect_child() -> str:
        """Look at the child from the parent."""
        (pid,) = _child_pids()
        proc = pathlib.Path(f"/proc/{pid}")
        seen["environ"] = (proc / "environ").read_bytes().split(b"\0")
        seen["fds"] = sorted(int(fd.name) for fd in (proc / "fd").iterdir())
        seen["cwd"] = os.readlink(proc / "cwd")
        return "looked"

    result = run_program("print(inspect_child())", {"inspect_child": inspect_child})
    assert result.ok, result.error
    assert result.log == "looked\n"
    assert not any(b"API_KEY" in item for item in seen["environ"])
    assert seen["fds"] == [0, 1, 2]
    assert "agent-sandbox-" in str(seen["cwd"])
    assert not pathlib.Path(str(seen["cwd"])).exists(), "the work folder is removed"


def test_wall_time_kill() -> None:
    start = time.monotonic()
    result = run_program("while True:\n    pass", {}, limits=SandboxLimits(cpu_s=60, wall_s=1))
    assert result.outcome == "killed"
    assert result.error == "killed: wall time limit of 1 s exceeded"
    assert time.monotonic() - start < 10


def test_time_in_the_parents_tools_is_not_charged_to_the_program() -> None:
    def slow_move() -> str:
        """A motion that takes a while."""
        time.sleep(1.5)
        return "moved"

    result = run_program("print(slow_move())", {"slow_move": slow_move},
                         limits=SandboxLimits(wall_s=1.0))
    assert result.ok, result.error
    assert result.log == "moved\n"


def test_calls_bind_like_the_real_signature_and_results_are_plain_data() -> None:
    def get_pose(name: str, frame: str = "world") -> np.ndarray:
        """Position of an object in a frame."""
        return np.array([0.5, 0.0, 0.1])

    result = run_program(
        "pose = get_pose('lemon', frame='base')\nprint(pose[0] + 1, get_pose(name='plate'))",
        {"get_pose": get_pose},
    )
    assert result.ok, result.error
    assert result.log == "1.5 [0.5, 0.0, 0.1]\n"
    assert [(call.args, call.result) for call in result.tool_calls] == [
        (("lemon", "base"), [0.5, 0.0, 0.1]), (("plate",), [0.5, 0.0, 0.1])]


@pytest.mark.parametrize("source", [None, 42, b"print(1)", "print(1)\0", "x = 1\n" * 20_000])
def test_bad_input_is_refused_without_a_process(source: object) -> None:
    result = run_program(source, {})
    assert result.outcome == "refused"
    assert result.error is not None and result.error.startswith("refused")


def test_an_empty_program_succeeds() -> None:
    assert run_program("", {}).ok


def test_tool_specs_keep_names_parameters_and_docstrings() -> None:
    def place(name: str, target: str = "plate", *, height: float = 0.0) -> str:
        """Place the held object."""
        return ""

    spec = tool_spec("place", place)
    assert spec["doc"] == "Place the held object."
    assert [(p["name"], p["kind"], p.get("default")) for p in spec["params"]] == [
        ("name", "POSITIONAL_OR_KEYWORD", None), ("target", "POSITIONAL_OR_KEYWORD", "plate"),
        ("height", "KEYWORD_ONLY", 0.0)]
    with pytest.raises(InvalidConfigError, match="plain data"):
        tool_spec("place", lambda name, where=_NOT_PLAIN: "")
    with pytest.raises(InvalidConfigError, match="identifier"):
        tool_spec("_private", place)


def test_to_plain() -> None:
    assert to_plain({"pose": np.arange(2), "ok": (True, None)}) == {
        "pose": [0, 1], "ok": [True, None]}
    assert to_plain(object).startswith("<class")
