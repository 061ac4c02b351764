"""The planner-executor end to end with the perfect sim-oracle, and the env's events as text."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from agentic_env.contract.spaces import Workspace
from agentic_env.harness.robot_io import EnvRobotIO


class DisturbedEnv:
    """An env whose second step reports a person moving an object and a light change."""

    primitive_config = SimpleNamespace(workspace=Workspace())

    def __init__(self) -> None:
        self.applied: list[dict[str, Any]] = []

    def observe(self) -> dict[str, np.ndarray]:
        return {}

    def step(self, _action: Any) -> tuple[Any, ...]:
        if len(self.applied) < 2:
            self.applied += [{"kind": "move_target", "body": "apple-1"},
                             {"kind": "lighting_change"}][len(self.applied):][:1]
        return {}, 0.0, False, False, {"disturbances": list(self.applied), "primitive": {}}


def test_the_robot_io_hands_the_agent_announced_events_as_text_once() -> None:
    io = EnvRobotIO(DisturbedEnv())  # type: ignore[arg-type]
    assert io.poll_events() == []
    io.act({})
    io.act({})
    io.act({})
    assert io.poll_events() == ["a person moved apple-1"]  # the light change is not announced
    assert io.poll_events() == []


@pytest.mark.slow
@pytest.mark.parametrize("task", ["sorting", "stacking"])
def test_the_planner_executor_carries_out_sorting_and_stacking(task: str) -> None:
    from agentic_env.harness.episode import EpisodeSpec
    from agentic_env.harness.runner import run_episode

    result = run_episode(EpisodeSpec(task, seed=5000, agent="planner-executor",
                                     realism="ideal"), video=False)
    assert result.error is None
    assert result.success, result.failure_detail
    assert result.progress == 1.0 and result.replans == 0


def test_the_planner_executor_turns_an_object_picked_for_the_turn() -> None:
    from agentic_env.harness.episode import EpisodeSpec
    from agentic_env.harness.runner import run_episode

    events: list[dict] = []
    result = run_episode(EpisodeSpec("reorientation", seed=5001, agent="planner-executor",
                                     realism="ideal"),
                         video=False, on_agent_event=lambda _env, event: events.append(event))
    assert result.success, result.failure_detail
    assert result.score == 1.0  # picked for the turn: no set-down and second pick
    picks = [e["arguments"]["params"] for e in events if e["kind"] == "tool"
             and e["tool"] == "act" and e["arguments"]["action"] == "pick"]
    places = [e["arguments"]["params"] for e in events if e["kind"] == "tool"
              and e["tool"] == "act" and e["arguments"]["action"] == "place"]
    assert picks and places and picks[-1][1] == places[-1][1]  # the same pose named twice
