"""Tool schemas from typed functions, validation before anything runs, the primitives set."""

from __future__ import annotations

import enum
from typing import Any, Literal

import jsonschema
import numpy as np
import pytest

from agentic_env.agents.skills.result import SkillCode, SkillResult, ok
from agentic_env.agents.tools import (
    ToolContext,
    ToolRegistry,
    build_tool_set,
    tool_set_names,
    tool_spec,
)
from agentic_env.agents.tools.primitives import pose_arguments, pose_matrix
from agentic_env.contract.actions import vector_to_pose
from agentic_env.contract.spaces import PRIMITIVES, Workspace
from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE


class FakeIO:
    """Records the primitive actions it is sent; reports what ``status`` says."""

    def __init__(self, status: dict[str, Any] | None = None,
                 error: Exception | None = None) -> None:
        self.actions: list[dict[str, Any]] = []
        self.status = status or {"ok": True, "reason": "", "message": ""}
        self.error = error
        self.workspace = Workspace()

    def observe(self) -> dict[str, np.ndarray]:
        return {"tcp_pose": np.array([0.4, 0.0, 0.35, 0.0, 1.0, 0.0, 0.0], np.float32),
                "gripper_width": np.array([0.085], np.float32),
                "shoulder_rgb": np.zeros((4, 4, 3), np.uint8)}

    def act(self, action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if self.error is not None:
            raise self.error
        self.actions.append(action)
        return self.observe(), dict(self.status)


def _valid_value(schema: dict[str, Any]) -> Any:
    """A schema-valid value, off the default, for a round trip."""
    kind = schema["type"][0] if isinstance(schema["type"], list) else schema["type"]
    if "enum" in schema:
        return schema["enum"][-1]
    if kind in ("number", "integer"):
        low, high = schema.get("minimum", -3), schema.get("maximum", 7)
        value = low + 0.37 * (high - low)
        return int(value) if kind == "integer" else value
    return {"boolean": False, "string": "text", "array": []}[kind]


@pytest.fixture
def primitives() -> tuple[ToolRegistry, ToolContext, FakeIO]:
    io = FakeIO()
    context = ToolContext(io, "sort the cubes", max_actions=40)
    return build_tool_set("primitives", context), context, io


@pytest.mark.parametrize("name", [*tool_set_names(), "all"])
def test_every_tool_set_has_valid_schemas(name: str) -> None:
    registry = build_tool_set(name, ToolContext(FakeIO(), "sort the cubes"))
    assert registry.specs()
    for tool in registry.specs():
        definition = tool.definition()
        assert definition["type"] == "function" and definition["function"]["description"]
        jsonschema.Draft202012Validator.check_schema(definition["function"]["parameters"])


def test_all_prefers_the_primitives_set_on_a_name_clash() -> None:
    registry = build_tool_set("all", ToolContext(FakeIO(), "sort the cubes"))
    assert registry.get("pick").spec.parameters["required"] == ["x", "y", "z"]


def test_every_tool_has_a_valid_schema_and_round_trips(primitives):
    registry, context, io = primitives
    assert set(tool_set_names()) >= {"primitives"}
    for tool in registry.specs():
        definition = tool.definition()
        assert definition["type"] == "function" and definition["function"]["description"]
        parameters = definition["function"]["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        arguments = {name: _valid_value(schema)
                     for name, schema in parameters["properties"].items()}
        jsonschema.validate(arguments, parameters)
        before = len(io.actions)
        result = context.call(registry, tool.name, arguments)
        assert result.ok, (tool.name, result.render())
        if tool.name in PRIMITIVES:  # the call reached the robot with the right values
            action = io.actions[before]
            assert PRIMITIVES[int(action["primitive"])] == tool.name
            if "x" in arguments:
                expected = pose_matrix(*(arguments[k] for k in
                                         ("x", "y", "z", "yaw", "pitch", "roll")))
                np.testing.assert_allclose(vector_to_pose(action["pose"]), expected, atol=1e-6)
            if tool.name == "pick":
                assert action["width"][0] == pytest.approx(arguments["width"], abs=1e-6)


def test_docstring_ranges_match_the_workspace_and_the_gripper(primitives):
    registry, _context, _io = primitives
    properties = registry.get("pick").spec.parameters["properties"]
    workspace = Workspace()
    for axis, low, high in zip("xyz", workspace.low, workspace.high, strict=True):
        assert (properties[axis]["minimum"], properties[axis]["maximum"]) == (low, high)
    assert (properties["width"]["minimum"], properties["width"]["maximum"]) == \
        GRIPPER_WIDTH_RANGE
    assert properties["width"]["default"] == GRIPPER_WIDTH_RANGE[1]
    assert registry.get("pick").spec.parameters["required"] == ["x", "y", "z"]


class Speed(enum.Enum):
    SLOW = "slow"
    FAST = "fast"


def typed(count: int, gain: float, flag: bool, label: str, mode: Literal["a", "b"],
          speed: Speed, values: list[float], note: str | None = None) -> SkillResult:
    """Echo the arguments with their Python types.

    Args:
        count: an integer, in [0, 10].
        gain: a number, in [-1, 1].
        flag: a boolean.
        label: a string.
        mode: a literal.
        speed: an enum.
        values: numbers.
        note: may be null.
    """
    return ok("echo", types=[type(v).__name__ for v in
                             (count, gain, flag, label, mode, speed, values, note)])


def test_a_schema_valid_call_reaches_the_function_with_the_right_types():
    registry = ToolRegistry([typed])
    spec = registry.get("typed").spec
    schema = spec.parameters
    assert schema["properties"]["mode"] == {"type": "string", "enum": ["a", "b"],
                                            "description": "a literal."}
    assert schema["properties"]["speed"]["enum"] == ["slow", "fast"]
    assert schema["properties"]["note"]["type"] == ["string", "null"]
    assert schema["properties"]["count"]["maximum"] == 10
    arguments = {"count": 3.0, "gain": 1, "flag": True, "label": "x", "mode": "b",
                 "speed": "fast", "values": [1, 2.5]}
    jsonschema.validate(arguments, schema)
    result = registry.call("typed", arguments)
    assert result.ok
    assert result.data["types"] == ["int", "float", "bool", "str", "str", "Speed", "list",
                                    "NoneType"]


@pytest.mark.parametrize(("arguments", "words"), [
    ({"x": 0.4, "y": 0.0}, ["missing required argument z"]),
    ({"x": 2.0, "y": 0.0, "z": 0.1}, ["x=2.0 is out of range [0.15, 0.95]"]),
    ({"x": "left", "y": 0.0, "z": 0.1}, ["x must be a number"]),
    ({"x": 0.4, "y": 0.0, "z": 0.1, "force": 3}, ["unknown argument(s) force",
                                                   "valid: x, y, z, yaw, width"]),
    ({"x": 0.4, "y": 0.0, "z": float("nan")}, ["z must be finite"]),
    ({"x": True, "y": 0.0, "z": 0.1}, ["x must be a number"]),
    ("x=0.4", ["arguments must be a JSON object"]),
])
def test_bad_arguments_come_back_as_bad_args_and_nothing_moves(primitives, arguments, words):
    registry, context, io = primitives
    result = context.call(registry, "pick", arguments)
    assert result.code is SkillCode.BAD_ARGS
    for word in words:
        assert word in result.message
    assert io.actions == [] and context.actions == 0
    assert context.log.calls[-1].result is result


def test_unknown_tools_and_enum_values_name_the_valid_ones():
    registry = ToolRegistry([typed])
    result = registry.call("grab", {})
    assert result.code is SkillCode.BAD_ARGS and "valid tools: typed" in result.message
    result = registry.call("typed", {"count": 1, "gain": 0, "flag": False, "label": "",
                                     "mode": "c", "speed": "slow", "values": []})
    assert "mode='c' is not one of 'a', 'b'" in result.message
    result = registry.call("typed", {"count": 1, "gain": 0, "flag": False, "label": "",
                                     "mode": "a", "speed": "slow", "values": [0.5, "a"]})
    assert "values[1] must be a number, got 'a'" in result.message


def test_incomplete_documentation_is_refused():
    def undocumented(x: float) -> SkillResult:
        """Do something."""
        return ok("")

    with pytest.raises(InvalidConfigError, match="'Args:' entry"):
        tool_spec(undocumented)
    with pytest.raises(InvalidConfigError, match="registered twice"):
        ToolRegistry([typed, typed])
    with pytest.raises(InvalidConfigError, match="unknown tool set 'navigator'; valid: primitives"):
        build_tool_set("navigator", ToolContext(FakeIO(), ""))



@pytest.mark.parametrize("angles", [(0.0, 0.0, 0.0), (1.2, -0.4, 0.3), (-2.9, 1.5, -3.0)])
def test_tool_poses_round_trip(angles):
    pose = pose_matrix(0.5, -0.1, 0.2, *angles)
    back = pose_arguments(pose)
    np.testing.assert_allclose(pose_matrix(back["x"], back["y"], back["z"], back["yaw"],
                                           back["pitch"], back["roll"]), pose, atol=2e-3)
    down = pose_matrix(0.5, 0.0, 0.1, 0.0, 0.0, 0.0)
    np.testing.assert_allclose(down[:3, 2], [0, 0, -1], atol=1e-12)  # tool z points down


@pytest.mark.parametrize(("reason", "code"), [("unreachable", SkillCode.UNREACHABLE),
                                              ("nothing_grasped", SkillCode.GRASP_FAILED),
                                              ("collision", SkillCode.COLLISION),
                                              ("safety_fault", SkillCode.ESTOP)])
def test_primitive_failures_map_to_codes(reason, code):
    io = FakeIO({"ok": False, "reason": reason, "message": f"it was {reason}"})
    context = ToolContext(io, "")
    result = context.call(build_tool_set("primitives", context), "home", {})
    assert result.code is code and f"it was {reason}" in result.render()
    assert result.data["gripper_width"] == pytest.approx(0.085)


def test_a_stopped_robot_an_exhausted_budget_and_finish_block_further_actions():
    context = ToolContext(FakeIO(error=AgenticEnvError("safety fault protective_stop")), "")
    registry = build_tool_set("primitives", context)
    assert context.call(registry, "home", {}).code is SkillCode.ESTOP
    context = ToolContext(FakeIO(), "", max_actions=1)
    registry = build_tool_set("primitives", context)
    assert context.call(registry, "open_gripper", {}).ok
    assert "budget" in context.call(registry, "close_gripper", {}).message
    assert context.call(registry, "finish", {"success": False, "summary": "gave up"}).ok
    assert context.log.finished and context.log.claimed_success is False
    assert context.call(registry, "home", {}).code is SkillCode.BLOCKED
    assert context.call(registry, "finish", {}).code is SkillCode.BLOCKED
    assert context.call(registry, "get_instruction", {}).ok


def test_a_tool_that_raises_comes_back_as_blocked(caplog):
    def broken() -> SkillResult:
        """Always fails."""
        raise ZeroDivisionError("division by zero")

    result = ToolRegistry([broken]).call("broken", {})
    assert result.code is SkillCode.BLOCKED and "ZeroDivisionError" in result.message
    assert "tool broken raised" in caplog.text
