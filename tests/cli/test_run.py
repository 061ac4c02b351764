"""``agentic-env run``'s live lines: an agent's decisions as people read them, numbers
rounded (positions to the millimetre, not float32's digits) and empty fields left out."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from agentic_env.agents.base import (
    AgentReport,
    AgentSetup,
    RobotIO,
    TaskContext,
    register_agent,
    unregister_agent,
)
from agentic_env.agents.runtime import Episode, Limits
from agentic_env.cli.run import main
from agentic_env.contract.actions import move_to, top_down_pose

#: Where the agent below sends the arm, metres in the base frame (float32 cannot hold it).
TARGET = (0.457, -0.123, 0.3)


class _MoveOnce:
    """Sends the arm to :data:`TARGET` once through the runtime, then gives up."""

    def __init__(self, setup: AgentSetup) -> None:
        self.setup = setup

    def run(self, robot: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        episode = Episode(robot, Limits.of(self.setup), self.setup.on_event)
        pose = top_down_pose(np.array(TARGET, dtype=np.float32)).astype(np.float32)
        episode.act(move_to(pose), "a look from above")
        episode.event("note", text="", found=[], score=float(np.float32(0.948)))
        episode.fail_first("move-once", "moved once")
        return episode.report


@pytest.fixture
def move_once() -> Iterator[str]:
    register_agent("move-once", _MoveOnce, failure_sources=("move-once",))
    yield "move-once"
    unregister_agent("move-once")


def test_the_live_lines_round_positions_and_leave_out_empty_fields(
        move_once: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--agent", move_once, "--realism", "ideal", "--no-video",
                 "--out", str(tmp_path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    (moved,) = [line for line in lines if "move_to" in line]
    assert "position=(0.457, -0.123, 0.3)" in moved and "ok=yes" in moved
    assert not re.search(r"\d\.\d{4,}", moved)  # no float32 digits
    assert not re.search(r"\w+=(,|$)", moved)  # reason=, message=
    (note,) = [line for line in lines if " note " in line]
    assert note.rstrip().endswith("score=0.948")
    assert "text=" not in note and "found=" not in note
    (trace,) = tmp_path.iterdir()  # the trace stores the position as rounded too
    events = [json.loads(line) for line in (trace / "events.jsonl").read_text().splitlines()]
    assert [e["position"] for e in events if e["kind"] == "primitive"] == [list(TARGET)]
