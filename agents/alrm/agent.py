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

import time
from typing import Any

from agentic_env.agents.alrm.executors import CodeExecutor, SubtaskOutcome, ToolExecutor
from agentic_env.agents.alrm.planner import Step, next_subtask
from agentic_env.agents.alrm.tools import AlrmWorld, alrm_tools
from agentic_env.agents.base import AgentReport, AgentSetup, RobotIO, TaskContext
from agentic_env.agents.models.base import BudgetExceededError
from agentic_env.agents.models.context import ModuleFailedError
from agentic_env.agents.tools.registry import ToolRegistry
from agentic_env.agents.tools.robot import ToolContext
from agentic_env.errors import InvalidConfigError

#: Executor modes.
MODES: tuple[str, ...] = ("tap", "cap")
#: Default options (the registry validates given ones against these types).
DEFAULT_OPTIONS: dict[str, Any] = {"mode": "tap", "max_steps": 12}
#: Failure sources of ALRM besides the common ones.
FAILURE_SOURCES: tuple[str, ...] = ("task_planner", "task_executor", "detector")


class AlrmAgent:
    """ALRM over one robot (see the module docstring).

    Args:
        setup: models, options (``mode``, ``max_steps``), limits and seed.

    Raises:
        InvalidConfigError: an unknown mode or a step bound below 1.
    """

    def __init__(self, setup: AgentSetup) -> None:
        options = {**DEFAULT_OPTIONS, **dict(setup.options)}
        if options["mode"] not in MODES or int(options["max_steps"]) < 1:
            raise InvalidConfigError(f"alrm options: mode must be one of {', '.join(MODES)} "
                                     f"and max_steps >= 1, got {options}")
        self.setup = setup
        self.mode = str(options["mode"])
        self.max_steps = int(options["max_steps"])

    def _event(self, report: AgentReport, kind: str, **details: Any) -> None:
        event = {"kind": kind, **details}
        report.events.append(event)
        if self.setup.on_event is not None:
            self.setup.on_event(event)

    def run(self, robot_io: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        """Plan and execute ``instruction``; failures end up in the report."""
        setup, report = self.setup, AgentReport()
        tool_context = ToolContext(robot_io, instruction, setup.max_actions,
                                   models=setup.models)
        world = AlrmWorld(tool_context, setup.seed)
        tools = ToolRegistry(alrm_tools(tool_context, world))
        executor = (ToolExecutor(setup.models, tools, tool_context) if self.mode == "tap"
                    else CodeExecutor(setup.models, tools, tool_context, seed=setup.seed))
        start = time.monotonic()
        steps: list[Step] = []
        try:
            scene = tools.call("get_objects", {})
            places = tools.call("get_reference_names", {})
            scene_text = scene.render()
            self._event(report, "scene", objects=scene.data.get("objects", {}),
                        places=places.message)
            for _ in range(self.max_steps):
                if time.monotonic() - start > setup.max_wall_s:
                    self._fail(report, "limits", f"wall time over {setup.max_wall_s} s")
                    break
                answer = next_subtask(setup.models, instruction, scene_text, places.message,
                                      steps)
                if answer.done:
                    report.believes_done = True
                    self._event(report, "done", thought=answer.thought)
                    break
                outcome = executor.run(answer.subtask, scene_text)
                steps.append(Step(answer.thought, answer.subtask, outcome.observation,
                                  outcome.ok))
                self._record(report, answer.thought, answer.subtask, outcome)
                report.actions = tool_context.log.actions
                if report.actions >= setup.max_actions:
                    self._fail(report, "limits", f"{setup.max_actions} actions used")
                    break
            else:
                self._fail(report, "limits", f"the planner's {self.max_steps} steps are used")
        except ModuleFailedError as error:
            self._fail(report, error.module if error.module in FAILURE_SOURCES else "error",
                       str(error))
        except BudgetExceededError as error:
            self._fail(report, "limits", str(error))
        report.actions = tool_context.log.actions
        return report

    def _record(self, report: AgentReport, thought: str, subtask: str,
                outcome: SubtaskOutcome) -> None:
        self._event(report, "subtask", thought=thought, subtask=subtask, ok=outcome.ok,
                    observation=outcome.observation, mode=self.mode,
                    calls=[list(call) for call in outcome.calls], **outcome.detail)
        if not outcome.ok:
            source = "detector" if "NOT_FOUND" in outcome.observation else "execution"
            self._fail(report, source, f"{subtask} failed: {outcome.observation[:300]}")

    @staticmethod
    def _fail(report: AgentReport, source: str, detail: str) -> None:
        """Record the first failure (later ones are recovered from or follow from it)."""
        if report.failure is None:
            report.failure, report.failure_detail = source, detail


def make_alrm(setup: AgentSetup) -> AlrmAgent:
    """The registered factory of ``alrm``."""
    return AlrmAgent(setup)
