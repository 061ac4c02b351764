"""The tool-calling sim-oracle: the next correct call from a reference policy, and each kind
of injected error."""

from __future__ import annotations

import pytest

from agentic_env.agents.models import ModelError, ModelQuery
from agentic_env.agents.models.base import TOOL_ERRORS
from agentic_env.agents.models.registry import parse_model_spec
from agentic_env.agents.tools import ToolContext, build_tool_set
from agentic_env.errors import InvalidConfigError
from agentic_env.oracle import ToolOracle

PLAN = [("pick", {"x": 0.4, "y": 0.1, "z": 0.02, "yaw": 0.0, "width": 0.05}),
        ("place", {"x": 0.5, "y": -0.2, "z": 0.1, "yaw": 0.0}),
        ("home", {})]


class ScriptedPolicy:
    """The reference plan above, then ``finish``."""

    def __init__(self) -> None:
        self.steps = list(PLAN)

    def next_call(self) -> tuple[str, dict]:
        return self.steps.pop(0) if self.steps else ("finish", {"success": True})


class NoIO:
    def observe(self):
        raise AssertionError("not used")

    act = observe


TOOLS = tuple(build_tool_set("primitives", ToolContext(NoIO(), "")).definitions())
QUERY = ModelQuery(module="tools", template="t", prompt="go", tools=TOOLS)


def answers(oracle: ToolOracle, turns: int) -> list[tuple[str | None, str, dict]]:
    """(injected kind, tool or "TEXT", arguments) per turn."""
    out = []
    for _ in range(turns):
        completion = oracle.complete(QUERY)
        if completion.tool_calls:
            call = completion.tool_calls[0]
            out.append((oracle.injected[-1], call.name, dict(call.arguments)))
        else:
            out.append((oracle.injected[-1], "TEXT", {"text": completion.text}))
    return out


def correct_calls(turns: list[tuple[str | None, str, dict]]) -> list[tuple[str, dict]]:
    return [(name, args) for kind, name, args in turns if kind is None]


def test_without_errors_it_follows_the_reference_then_finishes():
    turns = answers(ToolOracle(ScriptedPolicy()), 4)
    assert correct_calls(turns) == [*PLAN, ("finish", {"success": True})]


@pytest.mark.parametrize("kind", ["wrong_tool", "bad_argument", "talk"])
def test_errors_keep_the_right_call_owed(kind):
    oracle = ToolOracle(ScriptedPolicy(), {kind: 0.5}, seed=4)
    turns = answers(oracle, 14)
    assert any(t[0] == kind for t in turns), "the seeded stream injects this kind"
    reference = [*PLAN, ("finish", {"success": True})]
    correct = correct_calls(turns)[:len(reference)]  # then finish again and again
    assert len(correct) >= 3 and correct == reference[:len(correct)]
    for injected, name, args in turns:
        if injected == "talk":
            assert name == "TEXT" and "I will call" in args["text"]
        elif injected == "wrong_tool":
            assert name not in ("get_instruction", "get_robot_state", "finish")


def test_wrong_tool_names_another_action_tool_with_shared_arguments():
    oracle = ToolOracle(ScriptedPolicy(), {"wrong_tool": 1.0}, seed=0)
    kind, name, args = answers(oracle, 1)[0]
    assert kind == "wrong_tool" and name != "pick"
    properties = next(t["function"]["parameters"]["properties"] for t in TOOLS
                      if t["function"]["name"] == name)
    assert set(args) <= set(properties)


def test_bad_arguments_are_hallucinated_out_of_range_or_shifted():
    styles = set()
    for seed in range(12):
        oracle = ToolOracle(ScriptedPolicy(), {"bad_argument": 1.0}, seed=seed)
        _, name, args = answers(oracle, 1)[0]
        assert name == "pick"
        if "speed" in args:
            styles.add("hallucinated")
        elif any(args[k] > 1.0 for k in ("x", "y", "z", "yaw", "width") if k in args):
            styles.add("out_of_range")
        else:
            assert args["x"] == pytest.approx(0.48)
            styles.add("shifted")
    assert styles == {"hallucinated", "out_of_range", "shifted"}


def test_stop_early_finishes_with_steps_left():
    oracle = ToolOracle(ScriptedPolicy(), {"stop_early": 1.0})
    kind, name, args = answers(oracle, 1)[0]
    assert (kind, name, args["success"]) == ("stop_early", "finish", True)


def test_repeat_calls_the_executed_call_again_and_then_moves_on():
    oracle = ToolOracle(ScriptedPolicy(), {"repeat": 0.5}, seed=1)
    turns = answers(oracle, 8)
    repeats = [i for i, t in enumerate(turns) if t[0] == "repeat"]
    assert repeats and all(turns[i][1:] == turns[i - 1][1:] for i in repeats if i > 0)
    assert correct_calls(turns)[:3] == PLAN


def test_seeded_injection_is_reproducible_and_rates_are_checked():
    rates = dict.fromkeys(TOOL_ERRORS, 0.15)
    first = answers(ToolOracle(ScriptedPolicy(), rates, seed=7), 10)
    assert first == answers(ToolOracle(ScriptedPolicy(), rates, seed=7), 10)
    with pytest.raises(InvalidConfigError, match="kinds are wrong_tool"):
        ToolOracle(ScriptedPolicy(), {"detector": 0.1})
    with pytest.raises(ModelError, match="tool queries only"):
        ToolOracle(ScriptedPolicy()).complete(ModelQuery(module="goal", template="", prompt=""))
    spec = parse_model_spec("sim-oracle?wrong_tool=0.1&talk=0.2&seed=3")
    assert dict(spec.error_rates) == {"wrong_tool": 0.1, "talk": 0.2} and spec.seed == 3
    with pytest.raises(InvalidConfigError, match="tool-calling error kinds"):
        parse_model_spec("sim-oracle?hallucinate=0.1")
