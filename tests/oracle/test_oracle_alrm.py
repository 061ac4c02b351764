"""The sim-oracle's ALRM answers (planner subtask, TaP calls with a corrupted argument, CaP
programs, the object list), and ALRM end to end offline on sorting and stacking."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from agentic_env.agents.models.base import ModelImage, ModelQuery
from agentic_env.agents.models.registry import parse_model_spec
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.runner import run_episode
from agentic_env.oracle.alrm import PLACE_TYPES, AlrmOracle
from agentic_env.oracle.backend import OracleContext
from agentic_env.oracle.naming import thing_geoms

TOOLS = ({"type": "function", "function": {"name": "pick", "parameters": {}}},
         {"type": "function", "function": {"name": "place", "parameters": {}}})


@pytest.fixture(scope="module")
def env() -> Iterator[SimEnv]:
    sim = SimEnv(task="sorting", setting="lab")
    sim.reset(seed=5000)
    yield sim
    sim.close()


def oracle(env: SimEnv, kind: str | None = None) -> AlrmOracle:
    """ALRM's answers, every planner and executor answer wrong by ``kind`` (none: right)."""
    rates = {"task_planner": 1.0, "task_executor": 1.0} if kind else {}
    kinds = {role: {kind: 1.0} for role in rates}
    return AlrmOracle(OracleContext(env, rates, 0, kinds=kinds))


def planner(env: SimEnv, kind: str | None = None) -> dict:
    query = ModelQuery("task_planner", "planner", "")
    return json.loads(oracle(env, kind).complete(query).text)


def test_planner_gives_the_next_reference_subtask(env: SimEnv) -> None:
    answer = planner(env)
    assert answer == {"thought": answer["thought"], "done": False,
                      "subtask": "Pick up the apple and place it in the bowl."}
    assert planner(env, "premature_done")["done"]  # the injected error: done too early


def test_tap_oracle_owes_the_right_call_after_a_bad_one(env: SimEnv) -> None:
    subtask = "Pick up the apple and place it in the bowl."
    first = ModelQuery("task_executor", "tap", "", fields={"subtask": subtask}, tools=TOOLS)
    nested = oracle(env, "nested_call").complete(first).tool_calls[0]
    assert (nested.name, dict(nested.arguments)) == (
        "pick", {"name": "apple-1", "place": {"target": "bowl"}})
    messages = (
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {
            "name": "pick", "arguments": json.dumps({"object_name": "apple-1"})}}]},
        {"role": "tool", "tool_call_id": "a", "content": "BAD_ARGS: pick was not run"})
    again = oracle(env).complete(ModelQuery("task_executor", "tap", "", fields=first.fields,
                                            tools=TOOLS, messages=messages))
    assert (again.tool_calls[0].name, dict(again.tool_calls[0].arguments)) == (
        "pick", {"name": "apple-1"})
    messages += (
        {"role": "assistant", "tool_calls": [{"id": "b", "function": {
            "name": "pick", "arguments": json.dumps({"name": "apple-1"})}}]},
        {"role": "tool", "tool_call_id": "b", "content": "OK: The apple was picked"})
    then = oracle(env).complete(ModelQuery("task_executor", "tap", "", fields=first.fields,
                                           tools=TOOLS, messages=messages))
    assert (then.tool_calls[0].name, dict(then.tool_calls[0].arguments)) == (
        "place", {"target": "bowl"})


def test_cap_oracle_writes_a_program(env: SimEnv) -> None:
    query = ModelQuery("task_executor", "cap", "", fields={
        "subtask": "Pick up the apple and place it in the bowl."})
    good = json.loads(oracle(env).complete(query).text)["code"]
    assert "pick(name='apple-1')" in good and "place(target='bowl')" in good
    nested = json.loads(oracle(env, "nested_call").complete(query).text)["code"]
    assert "place(target=pick(name='apple-1'))" in nested


def test_object_list_has_properties(env: SimEnv) -> None:
    query = ModelQuery("detector", "alrm_objects", "", fields={"list": True})
    listed = {e["name"]: e for e in json.loads(oracle(env).complete(query).text)[
        "objects"]}
    assert listed["bowl"]["place"] and not listed["lemon-1"]["place"]
    assert listed["lemon-1"]["category"] == "fruit" and listed["lemon-1"]["weight_g"] > 0


def _objects(context: OracleContext, obs: dict | None = None) -> dict[str, dict]:
    images = (ModelImage("shoulder_rgb", obs["shoulder_rgb"]),) if obs is not None else ()
    query = ModelQuery("detector", "alrm_objects", "", images=images, fields={"list": True})
    return {e["name"]: e for e in json.loads(AlrmOracle(context).complete(query).text)[
        "objects"]}


def test_object_list_errs_as_the_scene_listing_does(env: SimEnv) -> None:
    """ALRM's object list is wrong at the detector's rate (it never erred before): one thing
    gets another of the scene's kinds, and its place flag follows; an oracle that sees only
    the image lists only what the image shows, and mistypes its least visible thing."""
    truth = _objects(OracleContext(env, {}, 0))
    for seed in range(5):
        wrong = _objects(OracleContext(env, {"detector": 1.0}, seed))
        assert wrong.keys() == truth.keys()
        changed = [n for n in truth if truth[n]["kind"] != wrong[n]["kind"]]
        assert len(changed) == 1 and changed[0] != "table"
        entry = wrong[changed[0]]
        assert entry["place"] == (entry["kind"] in PLACE_TYPES)
    obs = env.observe()
    pixels = {n: int(np.isin(env.segmentation("shoulder"), thing_geoms(env, n)).sum())
              for n in truth if n != "table" and thing_geoms(env, n)}
    hardest = min(pixels, key=lambda n: (pixels[n], n))
    threshold = pixels[hardest] + 1
    seeing = OracleContext(env, {"detector": 1.0}, 0, sees_image_only=True,
                           min_visible_px=threshold)
    listed = _objects(seeing, obs)
    assert hardest not in listed
    assert set(listed) == {n for n in truth if pixels.get(n, threshold) >= threshold}
    shown = {n: px for n, px in pixels.items() if px >= threshold}
    second = min(shown, key=lambda n: (shown[n], n))
    assert listed[second]["kind"] != truth[second]["kind"]
    assert all(listed[n]["kind"] == truth[n]["kind"] for n in listed if n != second)


def test_oracle_error_rates_parse() -> None:
    spec = parse_model_spec("sim-oracle?task_planner=0.1&task_executor=0.2")
    assert dict(spec.error_rates) == {"task_planner": 0.1, "task_executor": 0.2}


@pytest.mark.slow
@pytest.mark.parametrize("task", ["sorting", "stacking"])
@pytest.mark.parametrize("mode", ["tap", "cap"])
def test_alrm_end_to_end(task: str, mode: str) -> None:
    spec = EpisodeSpec(task=task, setting="lab", agent="alrm", seed=5000,
                       agent_options=(("mode", mode),))
    result = run_episode(spec, video=False)
    assert result.success, result.failure_detail


@pytest.mark.slow
def test_alrm_recovers_from_injected_executor_errors() -> None:
    spec = EpisodeSpec(task="stacking", setting="lab", agent="alrm", seed=5001,
                       model="sim-oracle?task_executor=0.3&seed=2",
                       agent_options=(("mode", "tap"),))
    result = run_episode(spec, video=False)
    assert result.success, result.failure_detail
