"""An open-loop agent in thirty lines: AgenticLab's task parser, Fast Downward, and every
plan step run once through the runtime's :class:`~agentic_env.agents.runtime.Manipulator`
with no checks. Run it offline with
``agentic-env run --task stacking --agent agentic_env.agents.examples.open_loop:make``."""

from __future__ import annotations

import numpy as np

from agentic_env.agents.agenticlab.modules import parse_task
from agentic_env.agents.agenticlab.pipeline import PARSER_EXAMPLE
from agentic_env.agents.agenticlab.steps import PLACE_MODES
from agentic_env.agents.base import AgentReport, AgentSetup, RobotIO, TaskContext
from agentic_env.agents.runtime import Episode, Limits, Manipulator, Place, detector_for
from agentic_env.pddl.planning import solve


class OpenLoopAgent:
    """Parse once, plan once, run every step; the first failed step ends the episode."""

    def __init__(self, setup: AgentSetup) -> None:
        self.setup = setup

    def run(self, robot: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        """Carry out ``instruction``; failures end up in the report."""
        models, episode = self.setup.models, Episode(robot, Limits.of(self.setup),
                                                      self.setup.on_event)
        hands = Manipulator(episode, detector_for(models), np.random.default_rng(self.setup.seed))
        with episode.guard():
            parsed = parse_task(models, episode.obs, instruction, context.domain, PARSER_EXAMPLE)
            for step in solve(parsed.domain, parsed.problem):
                action, (thing, *rest) = step.name.lower(), step.args
                where = rest[0] if rest and parsed.kinds.get(rest[0]) != "table" else None
                if action.startswith("pick"):
                    result = hands.pick(thing, why=str(step))
                elif action == "place-in-pose":
                    result = hands.place_turned(thing, rest[0], str(step))
                elif action.startswith("place"):
                    mode = PLACE_MODES.get(action, Place.ON_LOOSE) if where else Place.TABLE
                    result = hands.place(thing, mode, where, why=str(step))
                else:
                    result = hands.move_drawer(thing, action == "open-drawer", why=str(step))
                episode.event("step", step=str(step), code=result.code.value)
                if not result.ok:
                    episode.stop(result.data.get("blame", "execution"), result.message)
                    break
            else:
                episode.report.believes_done = True
        return episode.report


def make(setup: AgentSetup) -> OpenLoopAgent:
    """The agent factory (``--agent agentic_env.agents.examples.open_loop:make``)."""
    return OpenLoopAgent(setup)
