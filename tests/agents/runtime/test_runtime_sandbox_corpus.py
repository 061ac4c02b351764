"""The hostile and broken program corpus: each program is refused, fails or is killed with
the reason its first line announces, and nothing outside the tool API runs."""

from __future__ import annotations

import pathlib
from collections import Counter

import pytest

from agentic_env.agents.runtime.sandbox import SandboxLimits, run_program

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
