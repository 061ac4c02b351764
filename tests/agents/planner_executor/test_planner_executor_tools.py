"""The planner-executor's four tools and its perceived snapshot (offline, no simulator)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from support.robots import RecordingRobot

from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.planner_executor.snapshot import SemanticSnapshot, relate
from agentic_env.agents.planner_executor.tools import (
    Action,
    PlannerState,
    PlannerToolContext,
    PlannerTools,
)
from agentic_env.agents.runtime import Place
from agentic_env.agents.skills import SkillCode, SkillResult
from agentic_env.agents.skills.result import fail, ok
from agentic_env.agents.tools.registry import build_tool_set
from agentic_env.agents.tools.robot import ToolContext


class NoModel:
    name = "none"

    def complete(self, query: Any) -> Any:
        raise AssertionError(f"no model call expected, got {query.module}")


def tools_with(events: list[str] | None = None):
    robot = RecordingRobot()
    queue = list(events or [])

    def poll() -> list[str]:
        taken = list(queue)
        queue.clear()
        return taken

    state = PlannerState(ModuleContext(ModelRouter(NoModel())), poll_events=poll)
    context = PlannerToolContext(io=robot, instruction="sort", planner=state)
    return build_tool_set("planner", context), context, state, robot


def test_exactly_four_tools_with_a_strict_act_schema() -> None:
    tools, *_ = tools_with()
    assert tools.names == ["reflect", "act", "get_state_snapshot", "check_events"]
    act = next(d for d in tools.definitions() if d["function"]["name"] == "act")["function"]
    parameters = act["parameters"]
    assert parameters["additionalProperties"] is False
    assert sorted(parameters["required"]) == ["action", "params"]
    assert set(parameters["properties"]["action"]["enum"]) == {
        "move_arm", "perceive", "pick", "place", "insert", "open_drawer", "close_drawer",
        "speak", "listen"}
    assert parameters["properties"]["params"]["type"] == "array"


@pytest.mark.parametrize(("arguments", "expected"), [
    ({"action": "fly", "params": ["window"]}, "move_arm"),  # the valid actions are listed
    ({"action": "pick", "params": []}, "object, drawer_or_pose?"),  # the positional layout is given
    ({"action": "place", "params": ["red-cube-1"]}, "object, surface"),
    ({"action": "listen", "params": ["now"]}, "no parameters"),
    ({"action": "pick", "params": [" "]}, "non-empty"),
    ({"action": "move_arm", "params": ["dance"]}, "home, observe"),
    ({"action": "pick", "params": ["a"], "speed": 2}, "speed"),
])
def test_bad_act_arguments_come_back_as_bad_args_and_nothing_moves(
        arguments: dict[str, Any], expected: str) -> None:
    tools, context, _state, robot = tools_with()
    result = context.call(tools, "act", arguments)
    assert result.code is SkillCode.BAD_ARGS
    assert expected in result.message
    assert robot.sent == [] and context.actions == 0


def test_reflect_speak_and_snapshot_change_nothing() -> None:
    tools, context, state, robot = tools_with()
    assert context.call(tools, "reflect", {"text": "plan: pick then place"}).ok
    spoken = context.call(tools, "act", {"action": "speak", "params": ["hello"]})
    assert spoken.ok and spoken.message == "completed speech"
    snapshot = context.call(tools, "get_state_snapshot", {})
    assert "nothing perceived yet" in snapshot.message
    assert "not sensed" in snapshot.message
    assert robot.sent == [] and state.reflections == ["plan: pick then place"]
    assert state.spoken == ["hello"] and state.substantive == 0


def test_check_events_reports_text_since_the_last_check_and_a_person_makes_facts_stale() -> None:
    tools, context, state, _robot = tools_with(["a person moved red-cube-1"])
    state.snapshot.perceived({"red-cube-1": np.array([[0.5, 0.0, 0.0], [0.52, 0.02, 0.04]])})
    assert state.snapshot.fresh("red-cube-1")
    first = context.call(tools, "check_events", {})
    assert first.message == "a person moved red-cube-1"
    assert not state.snapshot.fresh("red-cube-1")
    assert context.call(tools, "check_events", {}).message == "no events"
    assert state.event_checks == 2


def test_move_arm_sends_one_primitive_and_records_the_posture() -> None:
    tools, context, state, robot = tools_with()
    result = context.call(tools, "act", {"action": "move_arm", "params": ["observe"]})
    assert result.ok and len(robot.sent) == 1 and context.actions == 1
    assert any(f.text.startswith("arm_posture(robot,") for f in state.snapshot.facts())


def test_a_bare_tool_context_gets_tools_that_refuse_perception() -> None:
    robot = RecordingRobot()
    context = ToolContext(io=robot, instruction="x")
    tools = build_tool_set("planner", context)
    result = context.call(tools, "act", {"action": "perceive", "params": ["table"]})
    assert result.code is SkillCode.BLOCKED and "detector" in result.message
    assert robot.sent == []


def _box(low: tuple[float, float, float], high: tuple[float, float, float]) -> np.ndarray:
    return np.array([low, high], float)


def test_relations_from_geometry() -> None:
    facts = relate({
        "bin": _box((0.4, -0.1, 0.0), (0.6, 0.1, 0.08)),
        "ball-1": _box((0.48, -0.02, 0.01), (0.52, 0.02, 0.05)),  # low inside the bin
        "green-cube-1": _box((0.3, 0.3, 0.0), (0.34, 0.34, 0.04)),
        "red-cube-1": _box((0.3, 0.3, 0.04), (0.34, 0.34, 0.08)),  # on the green cube
    })
    assert facts == {"bin": "on(bin, table)", "ball-1": "in(ball-1, bin)",
                     "green-cube-1": "on(green-cube-1, table)",
                     "red-cube-1": "on(red-cube-1, green-cube-1)"}


def test_snapshot_facts_carry_their_time_and_go_stale_until_perceived_again() -> None:
    snapshot = SemanticSnapshot()
    snapshot.tick()
    snapshot.perceived({"red-cube-1": _box((0.3, 0.3, 0.0), (0.34, 0.34, 0.04)),
                        "blue-cube-1": _box((0.5, 0.3, 0.0), (0.54, 0.34, 0.04))},
                       missing=["lemon-1"])
    snapshot.surface_perceived("table")
    snapshot.drawer("top-drawer", False)
    text = snapshot.render()
    assert "on(red-cube-1, table)  [seen at step 1, fresh]" in text
    assert "not_seen(lemon-1)" in text and "drawer_closed(top-drawer)" in text
    snapshot.tick()
    snapshot.changed(["red-cube-1"])  # the robot picked it: its fact and the table go stale
    assert not snapshot.fresh("red-cube-1") and not snapshot.fresh("table")
    assert snapshot.fresh("blue-cube-1")
    assert "on(red-cube-1, table)  [seen at step 1, STALE]" in snapshot.render()
    snapshot.tick()
    snapshot.perceived({"red-cube-1": _box((0.5, 0.3, 0.04), (0.54, 0.34, 0.08)),
                        "blue-cube-1": _box((0.5, 0.3, 0.0), (0.54, 0.34, 0.04))})
    assert "on(red-cube-1, blue-cube-1)  [seen at step 3, fresh]" in snapshot.render()
    snapshot.invalidate()  # a person changed the scene
    assert not any(snapshot.fresh(n) for n in ("red-cube-1", "blue-cube-1", "top-drawer"))


# -- what a thing is comes from the detector's typed listing, not from its name -------------


class Lister:
    """A detector that lists a scene under a model's own names and points at nothing."""

    name = "lister"

    def __init__(self, objects: list[dict[str, str]]) -> None:
        self.objects = objects
        self.queries: list[Any] = []

    def complete(self, query: Any) -> Any:
        from agentic_env.agents.models.base import Completion, Usage
        self.queries.append(query)
        assert query.module == "detector", query.module
        if query.template == "scene_objects":
            return Completion(json.dumps({"objects": self.objects}), Usage())
        return Completion(json.dumps({"found": False, "point": None, "box": None}), Usage())


SCENE = [{"name": "wooden board square 2", "kind": "slot", "description": "second square"},
         {"name": "slot-7", "kind": "surface", "description": "a mat called slot-7"},
         {"name": "upper cabinet", "kind": "drawer", "description": "upper cabinet drawer"},
         {"name": "tray", "kind": "container", "description": "orange tray"},
         {"name": "letter block", "kind": "object", "description": "block with an A"},
         {"name": "the wooden tabletop", "kind": "table", "description": "table top"}]


def typed_tools() -> tuple[PlannerTools, list[tuple[str, Any]], Lister]:
    """Planner tools over :data:`SCENE` whose manipulator records what it is asked."""
    lister = Lister(SCENE)
    state = PlannerState(ModuleContext(ModelRouter(lister)))
    tools = PlannerTools(PlannerToolContext(io=RecordingRobot(), instruction="x", planner=state))
    asked: list[tuple[str, Any]] = []

    def place(name: str, mode: Place, where: Any = None, **_kw: Any) -> SkillResult:
        asked.append(("place", (mode, where)))
        return ok("placed")

    def pick(name: str, **kw: Any) -> SkillResult:
        asked.append(("pick", kw.get("from_drawer")))
        return ok("picked")

    def locate(name: str, part: str = "object", **_kw: Any) -> SkillResult:
        asked.append(("locate", (name, part)))
        return fail(SkillCode.NOT_FOUND, "not seen")

    tools.hands.place, tools.hands.pick, tools.hands.locate = place, pick, locate  # type: ignore[method-assign]
    return tools, asked, lister


@pytest.mark.parametrize(("action", "where", "mode", "destination"), [
    (Action.PLACE, "wooden board square 2", Place.SLOT, "wooden board square 2"),
    (Action.PLACE, "slot-7", Place.ON, "slot-7"),  # a 'slot' in the name makes no slot
    (Action.INSERT, "upper cabinet", Place.DRAWER, "upper cabinet"),
    (Action.INSERT, "tray", Place.IN, "tray"),
    (Action.PLACE, "the wooden tabletop", Place.TABLE, None),
    (Action.PLACE, "letter block", Place.ON, "letter block"),
])
def test_the_place_mode_comes_from_the_listed_kind_and_the_action_not_the_name(
        action: Action, where: str, mode: Place, destination: str | None) -> None:
    tools, asked, lister = typed_tools()
    assert tools.act(action, ["letter block", where]).ok
    assert asked == [("place", (mode, destination))]
    assert [q.template for q in lister.queries] == ["scene_objects"]  # listed once, on use


def test_a_drawer_named_upper_cabinet_is_handled_as_a_drawer_because_its_kind_says_so() -> None:
    tools, asked, _lister = typed_tools()
    result = tools.act(Action.PERCEIVE, ["upper cabinet"])
    assert result.ok and "upper cabinet is closed" in result.message
    assert asked == [("locate", ("upper cabinet", "interior"))]  # its inside, not the object
    assert "drawer_closed(upper cabinet)" in tools.snapshot.render()
    asked.clear()
    assert tools.act(Action.PICK, ["letter block", "upper cabinet"]).ok
    assert asked == [("pick", "upper cabinet")]  # picked with the drawer's outward wrist
    refused = tools.act(Action.PICK, ["letter block", "tray"])
    assert refused.code is SkillCode.BAD_ARGS and "container" in refused.message


def test_perceiving_the_table_lists_the_scene_and_the_snapshot_keeps_each_kind() -> None:
    tools, asked, lister = typed_tools()
    assert tools.act(Action.PERCEIVE, ["the wooden tabletop"]).ok
    located = {name for kind, (name, _part) in asked if kind == "locate"}
    assert located == {"wooden board square 2", "slot-7", "tray", "letter block"}
    text = tools.snapshot.render()
    assert "kind(wooden board square 2, slot)  [second square]" in text
    assert "kind(upper cabinet, drawer)" in text and "not_seen(tray)" in text
    assert tools.snapshot.table == "the wooden tabletop"
    tools.act(Action.PERCEIVE, ["the wooden tabletop"])  # a fresh look lists again
    assert [q.template for q in lister.queries].count("scene_objects") == 2
    # the detector is told the listing's words for a name
    assert tools.detector(RecordingRobot().observe(), "shoulder", "wooden board square 2",
                          "object") is None
    assert "wooden board square 2: second square" in lister.queries[-1].prompt


def test_a_failed_place_doubts_the_listed_kind_and_the_next_use_lists_again() -> None:
    tools, asked, lister = typed_tools()
    tools.hands.place = lambda *_a, **_kw: fail(SkillCode.UNREACHABLE, "no")  # type: ignore[method-assign]
    assert not tools.act(Action.PLACE, ["letter block", "slot-7"]).ok
    assert tools.snapshot.kind("slot-7") is None
    lister.objects = [{"name": "slot-7", "kind": "slot"}]  # a second look types it anew
    tools.hands.place = lambda _n, mode, where=None, **_kw: (  # type: ignore[method-assign]
        asked.append(("place", (mode, where))) or ok("placed"))
    assert tools.act(Action.PLACE, ["letter block", "slot-7"]).ok
    assert asked[-1] == ("place", (Place.SLOT, "slot-7"))
    assert [q.template for q in lister.queries] == ["scene_objects"] * 2
