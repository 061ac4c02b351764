"""A minimal agent for the seam tests: it looks once, sends the arm home and gives up."""

from __future__ import annotations

from agentic_env.agents.base import AgentReport, AgentSetup, RobotIO, TaskContext
from agentic_env.contract.actions import home

#: The failure source the toy agent declares and reports.
TOY_FAILURE = "toy-gave-up"


class ToyAgent:
    """Observes, runs ``home()`` once and reports a failure of its own source."""

    def __init__(self, setup: AgentSetup) -> None:
        self.setup = setup

    def run(self, robot_io: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        obs = robot_io.observe()
        _obs, status = robot_io.act(home())
        return AgentReport(actions=1, failure=TOY_FAILURE,
                           failure_detail=f"saw {len(obs)} observation keys, home "
                                          f"{'ok' if status.get('ok') else 'failed'}, "
                                          f"domain of {len(context.domain)} characters",
                           events=[{"kind": "primitive", "primitive": "home", "ok": status.get(
                               "ok"), "reason": status.get("reason", ""), "why": instruction}])


def make_toy(setup: AgentSetup) -> ToyAgent:
    """The :data:`~agentic_env.agents.base.AgentFactory` of :class:`ToyAgent`."""
    return ToyAgent(setup)
