"""Provider conformance: every role of every agent against the answer shapes real providers
return, through the real litellm path.

A local OpenAI-compatible server (``chat_server``) answers each role's query as providers do:
plain JSON, JSON inside prose, a fenced ```json block, reasoning (``<think>...</think>``, with
a draft inside) before the answer, structured output sent as a tool call, a refusal, and
output cut off at the token limit (``finish_reason: length``). Each role is driven through
its smallest entry point (its role function, or ``ask_json`` with its schema; the
planner-executor's roles, private to the agent, through the agent over a robot that never
moves) and must either recover (parse the answer, or re-ask within its bound) or stop with a
failure that names its module. Tool-calling roles get native calls and the JSON-in-prompt
format in the same wrappings. Every module of the registry must have a driver here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from support.chat_server import Step, tool_call
from support.robots import RecordingRobot, StillRobot, pick_tools

from agentic_env.agents.agenticlab.modules import check_conditions, check_goal, parse_task
from agentic_env.agents.alrm import executors
from agentic_env.agents.alrm.executors import CAP_SCHEMA, ToolExecutor
from agentic_env.agents.alrm.judge import judge_trace
from agentic_env.agents.alrm.planner import next_subtask
from agentic_env.agents.alrm.tools import AlrmWorld
from agentic_env.agents.base import TaskContext
from agentic_env.agents.mallvi.roles import (
    Move,
    decompose,
    describe_scene,
    localize,
    plan_single,
    reflect,
    think_pick,
    think_place,
)
from agentic_env.agents.models.base import MalformedResponseError
from agentic_env.agents.models.context import ModuleContext, ModuleFailedError
from agentic_env.agents.models.modules import module_names
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.planner_executor.agent import PlannerExecutorAgent
from agentic_env.agents.runtime.detector import detect
from agentic_env.agents.runtime.grasp_judge import evaluate_grasp
from agentic_env.agents.runtime.listing import Kind, Listed, list_scene
from agentic_env.agents.runtime.prompts import ask_json
from agentic_env.agents.skills import Detection
from agentic_env.agents.tools.robot import ToolContext
from agentic_env.pddl.planning import PlanStep

pytestmark = pytest.mark.filterwarnings("ignore:Item .*ReadOnly:UserWarning")

#: A camera view (48 x 64) of a shoulder and a wrist camera.
OBS = {"shoulder_rgb": np.full((48, 64, 3), 90, np.uint8),
       "wrist_rgb": np.full((48, 64, 3), 60, np.uint8)}
REFUSAL = "I'm sorry, but I can't help with that."
LEMON_MOVE = Move("lemon-1", "bowl")
#: Two grasp candidates of the lemon and their drawings (for the Thinker's numbered sheet).
GRASPS = [{"pose": np.eye(4), "width": 0.04, "score": 0.9}] * 2
DRAWINGS = [np.full((24, 32, 3), 200, np.uint8)] * 2


# --- the shapes ----------------------------------------------------------------------------


def _wrapped(template: str) -> Callable[[dict[str, Any], str], list[Step]]:
    return lambda answer, _module: [("ok", template.format(json.dumps(answer)))]


def _fenced(answer: dict[str, Any], _module: str) -> list[Step]:
    return [("ok", f"Here is the answer:\n```json\n{json.dumps(answer, indent=2)}\n```")]


def _as_tool_call(answer: dict[str, Any], module: str) -> list[Step]:
    return [("ok", {"tool_calls": [tool_call(f"{module}_answer", answer, "call_1")]})]


def _cut(answer: dict[str, Any]) -> Step:
    text = json.dumps(answer)
    return ("ok", {"content": text[:len(text) // 2], "finish_reason": "length"})


#: Shape -> (the server's answers for a role's valid answer, the requests a recovering role
#: makes; ``None``: the role must stop with a failure naming its module, after its 3 tries).
SHAPES: dict[str, tuple[Callable[[dict[str, Any], str], list[Step]], int | None]] = {
    "plain": (_wrapped("{}"), 1),
    "prose": (_wrapped("Sure! Looking at the image, my answer is {} Let me know if you need "
                       "anything else."), 1),
    "fenced": (_fenced, 1),
    "reasoning": (_wrapped('<think>A first draft: {{"draft": true}}. Let me check the image '
                           "again.</think>\n{}"), 1),
    "tool_call": (_as_tool_call, 1),
    "refusal_then_answer": (lambda a, m: [("ok", REFUSAL), ("ok", json.dumps(a))], 2),
    "truncated_then_answer": (lambda a, m: [_cut(a), ("ok", json.dumps(a))], 2),
    "refusal": (lambda a, m: [("ok", {"refusal": REFUSAL})] * 3, None),
    "truncated": (lambda a, m: [_cut(a)] * 3, None),
}


# --- the JSON roles ------------------------------------------------------------------------


@dataclass(frozen=True)
class Role:
    """One JSON role: its module, a valid answer, how to drive it and what the answer gives.

    Attributes:
        module: the module it asks.
        answer: a valid answer of the role.
        drive: calls the role's entry point; returns what the agent gets from the answer.
        expect: asserts on that result.
        before: answers of other roles asked first (agent-driven roles).
        after: answers of other roles asked after it (when it recovers).
        failure: how a failure shows: ``raise`` (the entry point raises, naming the module)
            or ``report`` (the agent's report names it).
    """

    module: str
    answer: dict[str, Any]
    drive: Callable[[ModuleContext], Any]
    expect: Callable[[Any], None]
    before: tuple[dict[str, Any], ...] = ()
    after: tuple[dict[str, Any], ...] = ()
    failure: str = "raise"


def _assert(condition: bool) -> None:
    assert condition


def _pe(instruction: str) -> Callable[[ModuleContext], Any]:
    return lambda ctx: PlannerExecutorAgent(ctx, max_turns=4).run(
        RecordingRobot(), instruction, TaskContext(""))


_PIXEL_ANSWER = {"found": True, "point": [32, 20], "box": [28, 16, 36, 24],
                 "reasoning": "the red cube"}
_PIXEL_DETECTION = Detection((32, 20), (28, 16, 36, 24))
#: The planner-executor's scene listing (a ``detector`` query) before its chatbot answers:
#: only the table top, so nothing is located and no further model call is made.
_TABLE_LISTING = {"objects": [{"name": "table", "kind": "table"}]}


def _perceived(report: Any) -> bool:
    """Whether the planner-executor listed and perceived the scene before answering."""
    kinds = [e["kind"] for e in report.events]
    return "listing" in kinds and any(e["kind"] == "perceive" and e["ok"]
                                      for e in report.events)


ROLES: dict[str, Role] = {role_id: role for role_id, role in {
    # AgenticLab
    "parser": Role(
        "parser", {"objects_identified": [{"name": "cube", "type": "item",
                                           "description": "red cube"}],
                   "reasoning": "one cube", "problem_pddl": "(define (problem p))"},
        lambda ctx: parse_task(ctx, OBS, "put the cube in the bin", "(define (domain d))",
                               "(define (problem example))"),
        lambda parsed: _assert(parsed.objects == {"cube": ("item", "red cube")}
                               and parsed.problem == "(define (problem p))")),
    "checker": Role(
        "checker", {"success": False, "failed_conditions": ["(clear cube)"],
                    "reasoning": "the bin is on the cube"},
        lambda ctx: check_conditions(ctx, OBS, PlanStep("pick", ("cube",)), ["(clear cube)"],
                                     "preconditions", {"cube": "red cube"}),
        lambda result: _assert(not result.success and result.failed == ("(clear cube)",))),
    "goal": Role(
        "goal", {"success": True, "reasoning": "the cube is in the bin"},
        lambda ctx: check_goal(ctx, OBS, "put the cube in the bin", ["(in cube bin)"],
                               {"cube": "red cube"}),
        lambda result: _assert(result.success)),
    "detector": Role(
        "detector", _PIXEL_ANSWER,
        lambda ctx: detect(ctx, OBS, "shoulder", "cube", "red cube"),
        lambda found: _assert(found == _PIXEL_DETECTION)),
    "detector:listing": Role(
        "detector", {"objects": [{"name": "lemon", "kind": "object",
                                  "description": "a yellow lemon"},
                                 {"name": "bowl", "kind": "container"}]},
        lambda ctx: list_scene(ctx, OBS),
        lambda listed: _assert(listed == [Listed("lemon", Kind.OBJECT, "a yellow lemon"),
                                          Listed("bowl", Kind.CONTAINER, "bowl")])),
    "grasp": Role(
        "grasp", {"evaluation": {"action": "REJECT_GRASP",
                                 "rejection_reason": "the fingers hit the table"}},
        lambda ctx: evaluate_grasp(ctx, OBS["wrist_rgb"], "(pick cube)", "cube", "red cube",
                                   np.eye(4), 0.04),
        lambda verdict: _assert(not verdict.execute
                                and verdict.reason == "the fingers hit the table")),
    # ALRM
    "judge": Role(
        "judge", {"score": 2, "reasoning": "every subtask was done"},
        lambda ctx: judge_trace(ctx.router.backend_for("judge"), "put the lemon in the bowl",
                                ["Pick up the lemon."], ["Pick up the lemon."]),
        lambda verdict: _assert(verdict.score == 2)),
    "task_planner": Role(
        "task_planner", {"thought": "pick it first", "subtask": "Pick up the lemon.",
                         "done": False},
        lambda ctx: next_subtask(ctx, "put the lemon in the bowl", "lemon-1", "bowl", []),
        lambda answer: _assert(answer.subtask == "Pick up the lemon." and not answer.done)),
    "task_executor:cap": Role(
        "task_executor", {"thought": "one call", "code": 'print(pick(name="lemon-1"))'},
        lambda ctx: ask_json(ctx, executors.PACKAGE, "task_executor", (), CAP_SCHEMA,
                             {"subtask": "Pick up the lemon."}, template="cap",
                             subtask="Pick up the lemon.", objects="lemon-1",
                             functions="- pick(name): pick up an object"),
        lambda answer: _assert(answer["code"] == 'print(pick(name="lemon-1"))')),
    "detector:alrm_objects": Role(
        "detector", {"objects": [{"name": "lemon-1", "kind": "item", "place": False,
                                  "description": "lemon"},
                                 {"name": "bowl", "kind": "container", "place": True}]},
        lambda ctx: AlrmWorld(ToolContext(StillRobot(), "x", models=ctx)).listing(),
        lambda listing: _assert([entry["name"] for entry in listing] == ["lemon-1", "bowl"])),
    # MALLVI
    "descriptor": Role(
        "descriptor", {"objects": [{"name": "lemon-1", "category": "fruit", "color": "yellow",
                                    "description": "a yellow lemon", "position": "front left",
                                    "relations": [{"relation": "left of", "object": "bowl"}]},
                                   {"name": "bowl", "description": "a white bowl",
                                    "position": "centre"}],
                       "summary": "a lemon beside a bowl"},
        lambda ctx: describe_scene(ctx, OBS),
        lambda scene: _assert(scene.names() == ["lemon-1", "bowl"]
                              and scene.objects[0].relations == (("left of", "bowl"),)
                              and scene.summary == "a lemon beside a bowl")),
    "decomposer": Role(
        "decomposer", {"subtasks": [{"kind": "place", "source": "lemon-1",
                                     "destination": "bowl", "rotation_deg": 0}],
                       "reasoning": "one move"},
        lambda ctx: decompose(ctx, OBS, "put the lemon in the bowl"),
        lambda result: _assert(result[0] == [LEMON_MOVE])),
    "localizer": Role(
        "localizer", _PIXEL_ANSWER,
        lambda ctx: localize(ctx, OBS, "shoulder", "cube"),
        lambda found: _assert(found == _PIXEL_DETECTION)),
    "thinker": Role(
        "thinker", {"decision": "SUCCESS", "pick_candidates": [1, 0],
                    "reasoning": "the second grasp is clear of the rim"},
        lambda ctx: think_pick(ctx, OBS, LEMON_MOVE, GRASPS, DRAWINGS),
        lambda choice: _assert(choice.order == (1, 0))),
    "thinker:place": Role(
        "thinker", {"decision": "SUCCESS", "place_mode": "point", "place_point": [0.4, -0.1],
                    "reasoning": "the free spot in the bowl"},
        lambda ctx: think_place(ctx, OBS, LEMON_MOVE, "the bowl, found", None),
        lambda choice: _assert(choice.mode == "point" and choice.point == (0.4, -0.1))),
    "reflector": Role(
        "reflector", {"task_complete": True, "confidence": 0.8,
                      "verification_result": "the lemon is in the bowl"},
        lambda ctx: reflect(ctx, OBS, OBS, LEMON_MOVE, "placed the lemon", None),
        lambda verdict: _assert(verdict.complete and verdict.confidence == 0.8)),
    "single_agent": Role(
        "single_agent", {"plan": [{"source": "lemon-1", "destination": "bowl",
                                   "pick_point": [10, 12], "place_point": [40, 30],
                                   "place_mode": "in"}], "reasoning": "one move"},
        lambda ctx: plan_single(ctx, OBS, "put the lemon in the bowl"),
        lambda plan: _assert(plan[0].pick == Detection((10, 12))
                             and plan[0].place == Detection((40, 30)))),
    # planner-executor (its modules are private to the agent: driven through it)
    "router": Role(
        "router", {"route": "conversational", "reasoning": "a question"},
        _pe("what is on the table?"),
        lambda report: _assert(report.believes_done and report.failure is None),
        after=(_TABLE_LISTING, {"answer": "The table is empty."}), failure="report"),
    "chatbot": Role(
        "chatbot", {"answer": "The table is empty."},
        _pe("what is on the table?"),
        lambda report: _assert(report.believes_done and report.failure is None
                               and _perceived(report)),
        before=({"route": "conversational"}, _TABLE_LISTING), failure="report"),
    "critic": Role(
        "critic", {"verdict": "achieved", "reason": "nothing was asked"},
        _pe("say nothing"),
        lambda report: _assert(report.believes_done and report.goal_checked),
        before=({"route": "actionable"}, {"note": "nothing to do"}), failure="report"),
}.items()}

#: Tool-calling modules, driven by :data:`TOOL_ROLES`.
TOOL_MODULES = ("planner", "task_executor")


def test_every_module_of_every_agent_has_a_conformance_driver() -> None:
    covered = {role.module for role in ROLES.values()} | set(TOOL_MODULES)
    assert covered == set(module_names())


def _failed_module(error: Exception) -> str:
    if isinstance(error, ModuleFailedError):
        return error.module
    named = re.search(r"no well-formed (\w+) answer", str(error))
    return named.group(1) if named else ""


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("role_id", list(ROLES))
def test_a_role_recovers_or_stops_naming_its_module(chat_server: Any, role_id: str,
                                                    shape: str) -> None:
    role = ROLES[role_id]
    steps_of, requests = SHAPES[shape]
    plain: list[Step] = [("ok", json.dumps(answer)) for answer in role.before]
    steps = [*plain, *steps_of(role.answer, role.module),
             *(("ok", json.dumps(answer)) for answer in role.after)]
    server = chat_server(steps)
    ctx = ModuleContext(ModelRouter(server.backend(max_retries=0)))
    if requests is not None:
        role.expect(role.drive(ctx))
        assert len(server.requests) == len(role.before) + requests + len(role.after)
        if requests > 1:  # the re-ask says why the answer was rejected
            retry = server.requests[len(role.before) + 1]["messages"][0]["content"][0]["text"]
            assert "YOUR PREVIOUS ANSWER WAS REJECTED" in retry
        return
    if role.failure == "report":
        report = role.drive(ctx)
        assert report.failure == role.module and not report.believes_done
        detail = report.failure_detail
    else:
        with pytest.raises((ModuleFailedError, MalformedResponseError)) as info:
            role.drive(ctx)
        assert _failed_module(info.value) == role.module
        detail = str(info.value)
    assert len(server.requests) == len(role.before) + 3
    assert ("can't help" if shape == "refusal" else "output limit") in detail


# --- the tool-calling roles ----------------------------------------------------------------


def _prompt_calls(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"tool_calls": [{"name": name, "arguments": arguments}]})


#: Shape -> (backend tool_calling, the server's answers for one call of ``(name, args)``,
#: whether the role gets the call).
TOOL_SHAPES: dict[str, tuple[str, Callable[[str, dict[str, Any]], list[Step]], bool]] = {
    "native": ("native", lambda n, a: [("ok", {"tool_calls": [tool_call(n, a, "c1")]})], True),
    "prompt": ("prompt", lambda n, a: [("ok", _prompt_calls(n, a))], True),
    "prompt_fenced": ("prompt", lambda n, a: [("ok", f"```json\n{_prompt_calls(n, a)}\n```")],
                      True),
    "prompt_prose": ("prompt", lambda n, a: [("ok", f"I will act now: {_prompt_calls(n, a)}")],
                     True),
    "prompt_reasoning": ("prompt", lambda n, a: [("ok", "<think>Draft: " + _prompt_calls(
        "draft_tool", {}) + "</think>" + _prompt_calls(n, a))], True),
    "native_truncated_then_call": ("native", lambda n, a: [
        ("ok", {"content": _prompt_calls(n, a)[:20], "finish_reason": "length"}),
        ("ok", {"tool_calls": [tool_call(n, a, "c1")]})], True),
    "refusal": ("native", lambda n, a: [("ok", {"refusal": REFUSAL})], False),
}


@dataclass(frozen=True)
class ToolRole:
    """One tool-calling role: the call it is scripted to make, how to drive it, and checks
    of the result when the call was made, when it refused, and when it was cut off for good.
    ``before`` / ``after`` are other roles' answers around its conversation."""

    module: str
    call: tuple[str, dict[str, Any]]
    drive: Callable[[ModuleContext], Any]
    called: Callable[[Any], None]
    refused: Callable[[Any], None]
    cut_off: Callable[[Any], None]
    before: tuple[dict[str, Any], ...] = ()
    after: Callable[[bool], tuple[dict[str, Any], ...]] = lambda _called: ()


TOOL_ROLES: dict[str, ToolRole] = {
    "task_executor:tap": ToolRole(
        "task_executor", ("pick", {"name": "lemon-1"}),
        lambda ctx: ToolExecutor(ctx, pick_tools(), ToolContext(StillRobot(), "x"),
                                 max_turns=3).run("Pick up the lemon.", "lemon-1"),
        lambda outcome: _assert(outcome.ok and outcome.calls[0][0] == "pick"),
        lambda outcome: _assert(not outcome.ok and not outcome.calls
                                and REFUSAL in outcome.observation),
        lambda outcome: _assert(not outcome.ok and "no well-formed task_executor answer"
                                in outcome.observation)),
    "planner": ToolRole(
        "planner", ("act", {"action": "speak", "params": ["hello"]}),
        _pe("say hello"),
        lambda report: _assert(report.believes_done and any(
            e["kind"] == "tool" and e["code"] == "OK" for e in report.events)),
        lambda report: _assert(report.failure == "execution" and not any(
            e["kind"] == "tool" for e in report.events)),
        lambda report: _assert(report.failure == "planner"),
        before=({"route": "actionable"},),
        after=lambda called: ({"verdict": "achieved", "reason": "it spoke"},) if called
        else ({"verdict": "best_effort_stop", "reason": "the planner refused"},)),
}


def test_the_tool_roles_are_the_tool_modules() -> None:
    assert {role.module for role in TOOL_ROLES.values()} == set(TOOL_MODULES)


@pytest.mark.parametrize("shape", [*TOOL_SHAPES, "truncated"])
@pytest.mark.parametrize("role_id", list(TOOL_ROLES))
def test_a_tool_role_acts_or_stops_naming_its_module(chat_server: Any, role_id: str,
                                                     shape: str) -> None:
    role = TOOL_ROLES[role_id]
    name, arguments = role.call
    before: list[Step] = [("ok", json.dumps(answer)) for answer in role.before]
    if shape == "truncated":  # cut off on every try: the conversation ends in a model error
        mode, steps, called = "native", [("ok", {"content": "{\"tool_ca",
                                                 "finish_reason": "length"})] * 3, False
        after: tuple[dict[str, Any], ...] = ()
    else:
        mode, make, called = TOOL_SHAPES[shape]
        steps = make(name, arguments)
        if called:  # the model answers the tool result with text
            steps = [*steps, ("ok", "Done.")]
        after = role.after(called)
    server = chat_server([*before, *steps, *(("ok", json.dumps(a)) for a in after)])
    ctx = ModuleContext(ModelRouter(server.backend(max_retries=0, tool_calling=mode)))
    result = role.drive(ctx)
    check = role.called if called else role.cut_off if shape == "truncated" else role.refused
    check(result)
    assert len(server.requests) == len(before) + len(steps) + len(after)
    first = server.requests[len(before)]  # the role's tools reach the provider
    sent = ([tool["function"]["name"] for tool in first.get("tools", ())]
            or re.findall(r'"name": "(\w+)"', first["messages"][0]["content"][0]["text"]))
    assert name in sent


# --- model families' coordinate formats ----------------------------------------------------

#: Family -> (a litellm model name served locally, its answer for a red cube at pixel (16, 24)
#: in a 48 x 64 image boxed by (8, 12, 24, 36), a phrase of the format the prompt states).
FAMILY_ANSWERS: dict[str, tuple[str, str, str]] = {
    "pixels": ("openai/gpt-4o", json.dumps(
        {"found": True, "point": [16, 24], "box": [8, 12, 24, 36]}), "(64 x 48 pixels)"),
    "gemini": ("openai/gemini-2.5-flash", json.dumps(
        {"found": True, "point": [500, 250], "box": [250, 125, 750, 375]}), "[y, x]"),
    "qwen3-vl": ("openai/Qwen/Qwen3-VL-8B-Instruct", json.dumps(
        {"found": True, "point": [250, 500], "box": [125, 250, 375, 750]}), "0-1000"),
    "qwen2.5-vl": ("openai/Qwen/Qwen2.5-VL-7B-Instruct", json.dumps(
        {"found": True, "point": [14, 28], "box": [7, 14, 21, 42]}), "56 x 56"),
    "molmo": ("openai/allenai/Molmo-7B-D-0924",
              '<point x="25.0" y="50.0" alt="red cube">red cube</point>', "percent"),
    "gemini naming pixels": ("openai/gemini-2.5-flash", json.dumps(
        {"found": True, "point": [16, 24], "box": [8, 12, 24, 36], "coordinates": "pixels"}),
        "[y, x]"),
}
_POINTING: dict[str, Callable[[ModuleContext], Detection | None]] = {
    "detector": lambda ctx: detect(ctx, OBS, "shoulder", "cube", "red cube"),
    "localizer": lambda ctx: localize(ctx, OBS, "shoulder", "cube"),
}


@pytest.mark.parametrize("family", list(FAMILY_ANSWERS))
@pytest.mark.parametrize("role", list(_POINTING))
def test_pointing_roles_ask_each_family_in_its_format_and_convert_once(
        chat_server: Any, role: str, family: str) -> None:
    model, answer, stated = FAMILY_ANSWERS[family]
    server = chat_server([("ok", answer)])
    found = _POINTING[role](ModuleContext(ModelRouter(server.backend(model, max_retries=0))))
    expected_box = None if family == "molmo" else (8, 12, 24, 36)
    assert found == Detection((16, 24), expected_box)
    (request,) = server.requests
    assert stated in request["messages"][0]["content"][0]["text"]
