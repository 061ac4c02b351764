"""Plan error kinds: which steps a kind changes, look-alikes, the draw by a profile's weights
or uniformly, and the note each draw leaves for the trace."""

from __future__ import annotations

from collections import Counter

import pytest

from agentic_env.envs.sim_env import SimEnv
from agentic_env.oracle import load_profile
from agentic_env.oracle.backend import OracleContext
from agentic_env.oracle.emulated import kind_weights
from agentic_env.oracle.plan_errors import errors_drawn, look_alike, plan_error, reshaped
from agentic_env.oracle.profile import PLAN_ROLES

STEPS = ["a", "b", "c", "d"]


def test_each_kind_changes_only_what_it_names(sorting_env: SimEnv) -> None:
    oracle = OracleContext(sorting_env, {}, seed=3)
    for _ in range(20):
        skipped = reshaped(STEPS, "skipped_step", oracle)
        assert skipped is not None and len(skipped) == 3 and set(skipped) < set(STEPS)
        swapped = reshaped(STEPS, "reordered_steps", oracle)
        assert swapped is not None and sorted(swapped) == STEPS and swapped != STEPS
        assert sum(a != b for a, b in zip(swapped, STEPS, strict=True)) == 2
        cut = reshaped(STEPS, "premature_done", oracle)
        assert cut is not None and cut == STEPS[:len(cut)] and len(cut) < len(STEPS)
    assert reshaped(["a"], "reordered_steps", oracle) is None  # nothing to swap
    assert reshaped(STEPS, "wrong_object", oracle) is None  # the answer's own to make


def test_a_look_alike_is_another_object_of_the_same_type(sorting_env: SimEnv) -> None:
    oracle = OracleContext(sorting_env, {}, seed=3)
    types = sorting_env.task.pddl_objects()
    for obj in types:
        alike = look_alike(oracle, obj)
        if alike is not None:
            assert alike != obj and types[alike] == types[obj]
    fruit = [o for o, t in types.items() if t == types.get("lemon-1")]
    if len(fruit) > 1:
        assert look_alike(oracle, "lemon-1") in fruit


def test_kinds_are_drawn_by_weight_else_uniformly_and_noted(sorting_env: SimEnv) -> None:
    weighed = OracleContext(sorting_env, {"decomposer": 1.0}, seed=4,
                            kinds={"decomposer": {"wrong_object": 1.0}})
    before = len(errors_drawn(sorting_env))
    assert {plan_error(weighed, "decomposer") for _ in range(20)} == {"wrong_object"}
    noted = errors_drawn(sorting_env)[before:]
    assert [(n["role"], n["kind"]) for n in noted] == [("decomposer", "wrong_object")] * 20
    plain = OracleContext(sorting_env, {"task_executor": 1.0}, seed=4)
    drawn = Counter(plan_error(plain, "task_executor") for _ in range(500))
    assert set(drawn) == set(PLAN_ROLES["task_executor"])
    assert min(drawn.values()) > 60  # about 100 each
    assert plan_error(OracleContext(sorting_env, {}, seed=4), "decomposer") is None


@pytest.mark.parametrize("name", ["gemini-3-flash", "qwen3-8b-tap"])
def test_a_profile_weighs_only_the_kinds_a_role_can_make(name: str) -> None:
    weights = kind_weights(load_profile(name))
    assert set(weights["task_executor"]) == set(PLAN_ROLES["task_executor"])
    assert "nested_call" not in weights["task_planner"]
    assert set(weights["planner"]) == set(PLAN_ROLES["planner"])
