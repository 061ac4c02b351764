"""ALRM's agent loop and executors with scripted models (no simulator): TaP self-correction
after a BAD_ARGS result, a CaP exception failing the subtask, the planner's step bound."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from support.robots import StillRobot, pick_tools

from agentic_env.agents.alrm.agent import AlrmAgent
from agentic_env.agents.alrm.executors import CodeExecutor, ToolExecutor
from agentic_env.agents.base import AgentSetup, TaskContext, make_agent
from agentic_env.agents.models.base import Completion, ModelQuery, ToolCall, Usage
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.tools.robot import ToolContext
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.judging import executed_subtasks

Answer = Callable[[ModelQuery], Completion]


class Scripted:
    """A backend answering each query with the next scripted answer of its module."""

    name = "scripted"

    def __init__(self, **answers: Answer) -> None:
        self.answers = answers
        self.queries: list[ModelQuery] = []

    def complete(self, query: ModelQuery) -> Completion:
        self.queries.append(query)
        key = "objects" if query.template == "alrm_objects" else query.module
        return self.answers[key](query)


def text(answer: Any) -> Completion:
    return Completion(answer if isinstance(answer, str) else json.dumps(answer), Usage())


def tool_turns(*turns: tuple[str, dict[str, Any]] | str) -> Answer:
    """An executor answering turn i with ``turns[i]``: a tool call, or text."""
    def answer(query: ModelQuery) -> Completion:
        made = sum(1 for m in query.messages if m.get("role") == "tool")
        turn = turns[min(made, len(turns) - 1)]
        if isinstance(turn, str):
            return Completion(turn, Usage(), (), "native")
        return Completion("", Usage(), (ToolCall(f"c{made}", *turn),), "native")
    return answer


def models(backend: Scripted) -> ModuleContext:
    return ModuleContext(ModelRouter(backend), retries=1)


def test_tap_corrects_itself_after_bad_args() -> None:
    backend = Scripted(task_executor=tool_turns(("pick", {"object_name": "lemon-1"}),
                                           ("pick", {"name": "lemon-1"}), "Picked the lemon."))
    context = ToolContext(StillRobot(), "pick the lemon")
    outcome = ToolExecutor(models(backend), pick_tools(), context).run("Pick up the lemon.", "")
    assert outcome.ok
    assert outcome.calls[0][2].startswith("BAD_ARGS") and "name" in outcome.calls[0][2]
    assert outcome.calls[1][2] == "OK: The lemon was successfully picked"
    # the rejected call's result went back to the model before its second turn
    second = backend.queries[1].messages
    assert any(m.get("role") == "tool" and "BAD_ARGS" in m["content"] for m in second)
    assert [c.tool for c in context.log.calls] == ["pick", "pick"]


def test_tap_subtask_fails_when_its_last_call_failed() -> None:
    backend = Scripted(task_executor=tool_turns(("pick", {"name": "orange-1"}), "Could not."))
    outcome = ToolExecutor(models(backend), pick_tools(),
                           ToolContext(StillRobot(), "x")).run("Pick up the orange.", "")
    assert not outcome.ok
    assert "Object orange-1 not found" in outcome.observation


@pytest.mark.parametrize("program, expected", [
    ('print(pick(name="lemon-1"))\nraise ValueError("boom")', "ValueError: boom"),
    ('print(pick(name="orange-1"))', "Object orange-1 not found"),
    ('grab("lemon-1")', "NameError"),
])
def test_cap_error_fails_the_subtask(program: str, expected: str) -> None:
    backend = Scripted(task_executor=lambda q: text({"thought": "t", "code": program}))
    context = ToolContext(StillRobot(), "pick the lemon")
    outcome = CodeExecutor(models(backend), pick_tools(), context).run("Pick up the lemon.", "")
    assert not outcome.ok
    assert outcome.detail["outcome"] == "error"
    assert expected in outcome.observation


def test_cap_program_runs_against_the_tools() -> None:
    backend = Scripted(task_executor=lambda q: text({"code": 'print(pick("lemon-1"))'}))
    context = ToolContext(StillRobot(), "pick the lemon")
    executor = CodeExecutor(models(backend), pick_tools(), context)
    outcome = executor.run("Pick up the lemon.", "")
    assert outcome.ok, outcome.observation
    assert "The lemon was successfully picked" in outcome.observation
    assert outcome.calls == (("pick", {"name": "lemon-1"}, "OK: The lemon was successfully "
                                                            "picked"),)
    assert executor.functions_text().startswith("- pick(name")


def scene(query: ModelQuery) -> Completion:
    return text({"objects": [{"name": "lemon-1", "kind": "item", "place": False,
                              "description": "lemon", "category": "fruit"},
                             {"name": "bowl", "kind": "container", "place": True}]})


def agent(backend: Scripted, **options: Any) -> AlrmAgent:
    setup = AgentSetup(models=models(backend), options=options)
    built = make_agent("alrm", setup)
    assert isinstance(built, AlrmAgent)
    return built


def test_planner_step_bound_ends_the_episode() -> None:
    backend = Scripted(objects=scene,
                       task_planner=lambda q: text({"thought": "more", "subtask": "Wave.",
                                               "done": False}),
                       task_executor=lambda q: text({"code": 'print("waved")'}))
    report = agent(backend, mode="cap", max_steps=3).run(StillRobot(), "wave",
                                                         TaskContext(""))
    assert report.failure == "limits" and "3 steps" in report.failure_detail
    assert not report.believes_done
    assert executed_subtasks(report) == ["Wave."] * 3
    planner_prompt = [q for q in backend.queries if q.module == "task_planner"][-1].prompt
    assert "Observation: waved" in planner_prompt and "category" in planner_prompt


def test_planner_done_ends_the_loop() -> None:
    answers = iter([{"thought": "t", "subtask": "Pick up the lemon.", "done": False},
                    {"thought": "all done", "subtask": "", "done": True}])
    backend = Scripted(objects=scene, task_planner=lambda q: text(next(answers)),
                       task_executor=tool_turns(("get_reference_names", {}), "done"))
    report = agent(backend, mode="tap").run(StillRobot(), "find the places", TaskContext(""))
    assert report.believes_done and report.failure is None
    assert executed_subtasks(report) == ["Pick up the lemon."]
    observation = report.events[1]["observation"]
    assert "Reference names: bowl, table" in observation


def test_malformed_planner_fails_with_its_module() -> None:
    backend = Scripted(objects=scene, task_planner=lambda q: text("no json here"))
    report = agent(backend).run(StillRobot(), "x", TaskContext(""))
    assert report.failure == "task_planner"


def test_options_are_checked() -> None:
    with pytest.raises(InvalidConfigError):
        agent(Scripted(), mode="both")
    with pytest.raises(InvalidConfigError):
        agent(Scripted(), speed=2)
