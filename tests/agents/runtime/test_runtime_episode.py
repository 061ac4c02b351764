"""The episode runtime: limits enforced in one place (raised for pipeline agents, refused
for tool-calling ones), the robot-stop rule, the first-failure rule and the trace."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from agentic_env.agents.base import RobotStoppedError
from agentic_env.agents.models.base import BudgetExceededError
from agentic_env.agents.runtime import Episode, Limits, StopEpisodeError
from agentic_env.contract.actions import home
from agentic_env.contract.spaces import Workspace


class Robot:
    """Counts what it is sent; answers ``status``, or raises ``error``."""

    def __init__(self, status: dict[str, Any] | None = None,
                 error: Exception | None = None) -> None:
        self.sent = 0
        self.observed = 0
        self.status = status or {"ok": True, "reason": "", "message": ""}
        self.error = error
        self.workspace = Workspace()

    def observe(self) -> dict[str, np.ndarray]:
        self.observed += 1
        return {"gripper_width": np.array([0.085], np.float32)}

    def act(self, action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if self.error is not None:
            raise self.error
        self.sent += 1
        return self.observe(), dict(self.status)


def test_the_action_limit_stops_a_pipeline_agent_and_refuses_a_tool_agent() -> None:
    robot = Robot()
    episode = Episode(robot, Limits(max_actions=2))
    episode.act(home(), "one")
    episode.act(home(), "two")
    with pytest.raises(StopEpisodeError, match="action budget") as stop:
        episode.act(home(), "three")
    assert stop.value.source == "limits" and robot.sent == 2

    tools = Episode(Robot(), Limits(max_actions=1), refuse=True)
    assert tools.act(home(), "one")["ok"]
    refused = tools.act(home(), "two")
    assert not refused["ok"] and "action budget" in refused["message"]
    assert tools.report.actions == 1


def test_the_wall_time_limit_applies_to_every_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    episode = Episode(Robot(), Limits(max_wall_s=5.0), refuse=True)
    monkeypatch.setattr(Episode, "elapsed_s", property(lambda self: 6.0))
    assert "wall-time limit" in episode.act(home(), "late")["message"]
    with pytest.raises(StopEpisodeError, match="wall-time"):
        episode.check_time()


def test_the_guard_turns_stops_budgets_and_robot_stops_into_the_first_failure() -> None:
    for error, source in ((StopEpisodeError("parser", "no plan"), "parser"),
                          (BudgetExceededError("token budget spent"), "limits"),
                          (RobotStoppedError("e-stop latched"), "execution")):
        episode = Episode(Robot(), Limits())
        episode.report.believes_done = True
        with episode.guard():
            raise error
        report = episode.report
        assert (report.failure, report.believes_done) == (source, False)
        assert report.events[-1]["kind"] == "stop"
    episode = Episode(Robot(), Limits())
    episode.fail_first("detector", "first")
    episode.fail_first("execution", "later")
    assert (episode.report.failure, episode.report.failure_detail) == ("detector", "first")


def test_a_robot_stop_ends_a_pipeline_agent_and_latches_for_one_tool_call() -> None:
    stopped = Robot(error=RobotStoppedError("protective stop"))
    with pytest.raises(RobotStoppedError):
        Episode(stopped, Limits()).act(home(), "go")

    robot = Robot(status={"ok": False, "reason": "estop", "message": "e-stop active"})
    tools = Episode(robot, Limits(), refuse=True)
    assert tools.act(home(), "first")["reason"] == "estop"
    assert tools.act(home(), "second")["reason"] == "estop" and robot.sent == 1
    assert tools.stopped is not None
    tools.new_call()
    tools.act(home(), "next call")
    assert robot.sent == 2


def test_replans_are_counted_and_bounded_and_events_are_timed() -> None:
    seen: list[dict[str, Any]] = []
    episode = Episode(Robot(), Limits(max_replans=1), seen.append)
    episode.replan("goal unmet")
    with pytest.raises(StopEpisodeError, match="replan limit"):
        episode.replan("again")
    assert episode.report.replans == 1 and seen == episode.report.events
    assert seen[0]["kind"] == "replan" and seen[0]["t"] >= 0.0


def test_the_robot_is_observed_lazily_and_a_search_keeps_a_reserve() -> None:
    robot = Robot()
    episode = Episode(robot, Limits(max_actions=10))
    assert robot.observed == 0
    assert "gripper_width" in episode.obs and robot.observed == 1
    assert episode.search_moves() == 8 and episode.search_moves(cap=3) == 3
