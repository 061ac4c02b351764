"""The ALRM agent: a ReAct task planner over a TaP or CaP task executor (ALRM, Fig. 1).

The planner gives one natural-language subtask per step; the executor carries it out with
ALRM's functions (the ``alrm`` tool set) and its text result is the planner's next
observation; the loop ends when the planner says the task is done or after ``max_steps``.
Registered as ``alrm`` with ``agent_options: {mode: tap|cap, max_steps: N}``.

The report's events hold every step (``kind: "subtask"`` with the subtask, its observation
and whether it succeeded), from which the harness's trace judge reads the executed
sequence.
"""

from __future__ import annotations

from typing import Any

from agentic_env.agents.alrm.executors import CodeExecutor, SubtaskOutcome, ToolExecutor
from agentic_env.agents.alrm.planner import Step, next_subtask
from agentic_env.agents.alrm.tools import AlrmWorld, alrm_tools
from agentic_env.agents.base import AgentReport, AgentSetup, RobotIO, TaskContext
from agentic_env.agents.models.context import ModuleFailedError
from agentic_env.agents.runtime import Episode
from agentic_env.agents.tools.registry import ToolRegistry
from agentic_env.agents.tools.robot import ToolContext
from agentic_env.errors import InvalidConfigError

#: Executor modes.
MODES: tuple[str, ...] = ("tap", "cap")
#: Default options (the registry validates given ones against these types); ``max_steps``
#: 0 bounds the planner's steps by the episode's action budget (every subtask sends at
#: least one primitive), so a long task is not cut off by a bound set per agent.
DEFAULT_OPTIONS: dict[str, Any] = {"mode": "tap", "max_steps": 0}
#: Failure sources of ALRM besides the common ones.
FAILURE_SOURCES: tuple[str, ...] = ("task_planner", "task_executor", "detector")


class AlrmAgent:
    """ALRM over one robot (see the module docstring).

    Args:
        setup: models, options (``mode``, ``max_steps``), limits and seed.

    Raises:
        InvalidConfigError: an unknown mode or a negative step bound.
    """

    def __init__(self, setup: AgentSetup) -> None:
        options = {**DEFAULT_OPTIONS, **dict(setup.options)}
        if options["mode"] not in MODES or int(options["max_steps"]) < 0:
            raise InvalidConfigError(f"alrm options: mode must be one of {', '.join(MODES)} "
                                     f"and max_steps >= 0 (0: the action budget), got "
                                     f"{options}")
        self.setup = setup
        self.mode = str(options["mode"])
        self.max_steps = int(options["max_steps"]) or setup.max_actions

    def run(self, robot_io: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        """Plan and execute ``instruction``; failures end up in the report."""
        setup = self.setup
        tool_context = ToolContext(robot_io, instruction, setup.max_actions,
                                   models=setup.models, max_wall_s=setup.max_wall_s,
                                   on_event=setup.on_event)
        episode = tool_context.episode
        world = AlrmWorld(tool_context, setup.seed)
        tools = ToolRegistry(alrm_tools(tool_context, world))
        executor = (ToolExecutor(setup.models, tools, tool_context) if self.mode == "tap"
                    else CodeExecutor(setup.models, tools, tool_context, seed=setup.seed))
        steps: list[Step] = []
        with episode.guard():
            try:
                self._loop(episode, tools, executor, instruction, steps)
            except ModuleFailedError as error:
                source = error.module if error.module in FAILURE_SOURCES else "error"
                episode.fail_first(source, str(error))
        return episode.report

    def _loop(self, episode: Episode, tools: ToolRegistry,
              executor: ToolExecutor | CodeExecutor, instruction: str,
              steps: list[Step]) -> None:
        scene = tools.call("get_objects", {})
        places = tools.call("get_reference_names", {})
        scene_text = scene.render()
        episode.event("scene", objects=scene.data.get("objects", {}), places=places.message)
        for _ in range(self.max_steps):
            episode.check_time()
            answer = next_subtask(self.setup.models, instruction, scene_text, places.message,
                                  steps)
            if answer.done:
                episode.report.believes_done = True
                episode.event("done", thought=answer.thought)
                return
            outcome = executor.run(answer.subtask, scene_text)
            steps.append(Step(answer.thought, answer.subtask, outcome.observation, outcome.ok))
            self._record(episode, answer.thought, answer.subtask, outcome)
            if episode.report.actions >= self.setup.max_actions:
                episode.fail_first("limits", f"{self.setup.max_actions} actions used")
                return
        episode.fail_first("limits", f"the planner's {self.max_steps} steps are used")

    def _record(self, episode: Episode, thought: str, subtask: str,
                outcome: SubtaskOutcome) -> None:
        episode.event("subtask", thought=thought, subtask=subtask, ok=outcome.ok,
                      observation=outcome.observation, mode=self.mode,
                      calls=[list(call) for call in outcome.calls], **outcome.detail)
        if not outcome.ok:
            source = "detector" if "NOT_FOUND" in outcome.observation else "execution"
            episode.fail_first(source, f"{subtask} failed: {outcome.observation[:300]}")


def make_alrm(setup: AgentSetup) -> AlrmAgent:
    """The registered factory of ``alrm``."""
    return AlrmAgent(setup)
