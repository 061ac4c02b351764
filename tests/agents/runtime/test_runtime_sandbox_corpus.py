"""The hostile and broken program corpus: each program is refused, fails or is killed with
the reason its first line announces, nothing outside the tool API runs, and whatever it sent
(deep nesting, lone surrogates, control characters, floods, huge messages) the parent keeps a
short, storable log and error and runs the next program as usual."""

from __future__ import annotations

import io
import json
import pathlib
from collections import Counter

import pytest

from agentic_env.agents.runtime.sandbox import MESSAGE_CHARS, SandboxLimits, _Run, run_program

CORPUS = pathlib.Path(__file__).parent / "corpus"
HOSTILE = sorted((CORPUS / "hostile").glob("*.py"))
GOOD = sorted((CORPUS / "good").glob("*.py"))
#: Small limits, but a generous wall time: the test machine's CPUs are shared.
LIMITS = SandboxLimits(cpu_s=3, wall_s=60.0, output_chars=5_000, tool_calls=20)
OBJECTS = {"lemon": [0.4, 0.1, 0.02], "banana": [0.5, -0.1, 0.02]}


class FakeRobot:
    """ALRM-like tools that count every real execution."""

    def __init__(self) -> None:
        self.executed: Counter[str] = Counter()

    def tools(self) -> dict:
        def get_objects() -> list[str]:
            """Names of the objects on the table."""
            self.executed["get_objects"] += 1
            return list(OBJECTS)

        def get_pose(name: str) -> list[float]:
            """Position (x, y, z) of an object in metres."""
            self.executed["get_pose"] += 1
            return OBJECTS[name]

        def pick(name: str) -> str:
            """Pick up an object."""
            self.executed["pick"] += 1
            if name not in OBJECTS:
                raise ValueError(f"Object {name} not found")
            return f"The {name} was successfully picked"

        def place(name: str, target: str) -> str:
            """Place the held object at a named place."""
            self.executed["place"] += 1
            relation = "on the" if target == "plate" else "in the"
            return f"The {name} was successfully placed {relation} {target}"

        return {"get_objects": get_objects, "get_pose": get_pose, "pick": pick,
                "place": place}


def _expectation(path: pathlib.Path) -> tuple[str, str]:
    header = path.read_text().splitlines()[0]
    outcome, _, text = header.removeprefix("# expect: ").partition(" — ")
    return outcome, text


def _run(path: pathlib.Path, tmp_path: pathlib.Path):
    canary = tmp_path / "canary"
    source = "\n".join(path.read_text().splitlines()[1:]).replace("{CANARY}", str(canary))
    robot = FakeRobot()
    result = run_program(source, robot.tools(), limits=LIMITS)
    assert not canary.exists(), "the program reached the file system"
    made = Counter(call.name for call in result.tool_calls)
    assert made == robot.executed, "a tool ran that the result does not account for"
    return result


def test_the_corpus_is_large_enough() -> None:
    assert len(HOSTILE) >= 20
    assert {_expectation(path)[0] for path in HOSTILE} == {"refused", "error", "killed"}


@pytest.mark.parametrize("path", HOSTILE, ids=lambda path: path.stem)
def test_hostile_program_is_stopped_with_a_clear_log(
    path: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-sandbox")
    outcome, reason = _expectation(path)
    result = _run(path, tmp_path)
    assert result.outcome == outcome, result.error
    assert not result.ok
    assert reason in (result.error or ""), result.error
    if outcome == "refused":
        assert result.tool_calls == () and result.log == ""
    _assert_storable(result)


def _assert_storable(result) -> None:
    """Log and error are valid UTF-8, free of terminal controls and short."""
    for text in (result.log, result.error or ""):
        text.encode("utf-8")
        assert not any(ord(c) < 32 and c not in "\n\t" or 0x7F <= ord(c) < 0xA0 for c in text)
    assert len(result.error or "") <= MESSAGE_CHARS + 40
    assert len(result.log) <= LIMITS.output_chars + 40
    assert len(json.dumps([[call.args, call.kwargs, call.error] for call in result.tool_calls])
               ) < 20_000, "the parent keeps whole tool arguments"


@pytest.mark.parametrize("path", GOOD, ids=lambda path: path.stem)
def test_well_behaved_program_succeeds(path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    _, expected_log = _expectation(path)
    result = _run(path, tmp_path)
    assert result.ok, result.error
    assert result.error is None
    assert expected_log in result.log
    assert all(call.error is None for call in result.tool_calls if call.args != ("orange",))


def test_tool_call_flood_is_cut_at_the_limit(tmp_path: pathlib.Path) -> None:
    result = _run(CORPUS / "hostile" / "tool_call_flood.py", tmp_path)
    assert len(result.tool_calls) == LIMITS.tool_calls


def test_huge_output_is_capped(tmp_path: pathlib.Path) -> None:
    result = _run(CORPUS / "hostile" / "huge_output.py", tmp_path)
    assert len(result.log) <= LIMITS.output_chars
    assert result.log.startswith("spam spam")


def test_surrogates_and_controls_are_made_safe_in_the_log(tmp_path: pathlib.Path) -> None:
    log = _run(CORPUS / "hostile" / "lone_surrogate.py", tmp_path).log
    assert log == "a lone surrogate: \ufffd and another \ufffd\n"
    log = _run(CORPUS / "hostile" / "control_characters.py", tmp_path).log
    assert log == "\\x1b[2J\\x1b[31mred\\x07\\x0dover\\x00written\\x9b\n"


def test_a_huge_refusal_is_short(tmp_path: pathlib.Path) -> None:
    result = _run(CORPUS / "hostile" / "huge_refusal.py", tmp_path)
    assert result.error is not None and result.error.endswith("; and 4990 more")


def test_the_arguments_one_run_holds_are_bounded(tmp_path: pathlib.Path) -> None:
    result = _run(CORPUS / "hostile" / "argument_budget.py", tmp_path)
    assert len(result.tool_calls) == 4  # the fifth call is over the budget
    assert all(len(call.args[0]) < 300 and len(call.error or "") <= MESSAGE_CHARS + 40
               for call in result.tool_calls)


def test_a_flood_after_the_output_limit_is_not_sent(tmp_path: pathlib.Path) -> None:
    result = _run(CORPUS / "hostile" / "output_flood_after_limit.py", tmp_path)
    assert len(result.log) == LIMITS.output_chars
    assert result.wall_s < 30.0


@pytest.mark.parametrize("line", [
    b'{"type": "call", "name": "pick", "args": ' + b"[" * 100_000 + b"]" * 100_000
    + b', "kwargs": {}}',
    b'{"type": "print", "text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"type": "call", "name": ' + json.dumps("x" * 100_000).encode()
    + b', "args": [], "kwargs": {}}',
    b"[]", b'"text"', b"\xff\xfe not json",
], ids=["deep-call", "deep-print", "huge-name", "list", "string", "bytes"])
def test_a_forged_message_ends_the_run_cleanly(line: bytes, tmp_path: pathlib.Path) -> None:
    """What the child itself never sends: the parent still only stops the run."""
    outcome, error = _Run(FakeRobot().tools(), LIMITS)._handle(line, io.BytesIO())
    assert outcome == "killed" and error is not None and len(error) < 200
    assert _run(CORPUS / "good" / "pick_and_place.py", tmp_path).ok  # the next one runs
