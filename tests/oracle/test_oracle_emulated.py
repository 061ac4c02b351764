"""Emulated models: the profile's error rates and kinds, only what the image shows, and
virtual model time."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from agentic_env.agents.models.base import ModelQuery
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.runner import run_episode
from agentic_env.oracle import EmulatedModel, SimOracle, load_profile
from agentic_env.oracle.backend import OracleContext
from agentic_env.oracle.difficulty import sighting
from agentic_env.oracle.emulated import difficulty_models
from agentic_env.oracle.naming import thing_geoms


def _shoulder_size(env: SimEnv) -> list[int]:
    """(height, width) of the shoulder camera's image, pixels."""
    camera = next(c for c in env.cameras if c.name == "shoulder")
    return [camera.height, camera.width]


def _ask(model: SimOracle, module: str, **fields) -> tuple[dict, float]:
    completion = model.complete(ModelQuery(module, module, "", fields=fields))
    return json.loads(completion.text), completion.usage.latency_s


def _within_binomial(errors: int, n: int, rate: float) -> bool:
    """``errors`` of ``n`` lies in the 99.9 % normal interval of Binomial(n, rate)."""
    return abs(errors - n * rate) <= 3.3 * math.sqrt(n * rate * (1 - rate)) + 1


def _pixels(env: SimEnv, name: str) -> np.ndarray:
    return np.isin(env.segmentation("shoulder"), thing_geoms(env, name))


def test_checker_errors_over_many_calls_match_the_profile(sorting_env) -> None:
    """Each check errs at its situation's rate (:mod:`agentic_env.oracle.causes`): a hand
    condition with no object to see, the same rate whichever way its truth goes."""
    from agentic_env.oracle.causes import VerdictSight
    from agentic_env.oracle.emulated import cause_models

    env = sorting_env
    profile = load_profile("gpt-5.2")
    model = EmulatedModel(env, profile, seed=4)
    rate = 1 - profile.modules["checker"].success.value
    causal = cause_models(profile)["checker"]
    expected = {holds: causal.rate(rate, VerdictSight(
        "shoulder", "false_fail" if holds else "false_pass", (("hand", ()),)))
        for holds in (True, False)}
    mean_s = profile.modules["checker"].seconds.value
    n, started = 600, time.perf_counter()
    wrong, latencies = {True: 0, False: 0}, []
    for i in range(n):
        holds = i % 2 == 0  # as many true conditions as false ones, each its own situation
        answer, latency = _ask(model, "checker", step=i,
                               conditions=["(hand-empty)" if holds else "(not (hand-empty))"])
        wrong[holds] += answer["success"] != holds
        latencies.append(latency)
    assert expected[True] == expected[False]
    assert _within_binomial(wrong[True], n // 2, expected[True]), (wrong, expected)
    assert _within_binomial(wrong[False], n // 2, expected[False]), (wrong, expected)
    # virtual seconds spread about the module's mean (no 8.6 s call reaches the time-out)
    assert abs(np.mean(latencies) - mean_s) < 3.3 * mean_s / math.sqrt(n)
    assert 0.7 < np.std(latencies) / mean_s < 1.3 and len(set(latencies)) == n
    assert time.perf_counter() - started < n * 0.05  # nothing slept


def test_detector_errors_match_the_profile_and_each_kind_occurs(sorting_env) -> None:
    env = sorting_env
    profile = load_profile("gpt-4o")
    model = EmulatedModel(env, profile, seed=1)
    size = _shoulder_size(env)
    names = list(env.task.pddl_objects())
    seen = [n for n in names if _pixels(env, n).sum() >= profile.min_visible_px.value]
    segmentation = env.segmentation("shoulder")
    owner = {g: n for n in names for g in thing_geoms(env, n)}
    n, wrong, kinds = 240, 0, set()
    for i in range(n):
        target = seen[i % len(seen)]
        answer, _ = _ask(model, "localizer" if i % 2 else "detector", target=target,
                         camera="shoulder", image_size=size, attempt=i)
        if not answer["found"]:
            wrong += 1
            kinds.add("no_answer")
            continue
        u, v = answer["point"]
        hit = owner.get(int(segmentation[v, u]))
        wrong += hit != target
        if hit != target:
            kinds.add("off_object" if hit is None else "another object")
    # each target errs at its sighting's rate (the measured rate is kept over the module
    # benchmark's situations, not over this one scene's)
    difficulty = difficulty_models(profile)["detector"]
    rate = 1 - profile.modules["detector"].success.value
    expected = np.mean([difficulty.rate(rate, sighting(
        env, segmentation, seen[i % len(seen)], int(_pixels(env, seen[i % len(seen)]).sum()),
        round(profile.min_visible_px.value))) for i in range(n)])
    assert _within_binomial(wrong, n, float(expected)), (wrong, n * expected)
    assert kinds == {"no_answer", "off_object", "another object"}


def test_an_object_below_the_visibility_threshold_is_never_detected(sorting_env) -> None:
    env = sorting_env
    size = _shoulder_size(env)
    item = next(n for n, t in env.task.pddl_objects().items() if t == "item")
    count = int(_pixels(env, item).sum())
    assert count > 0
    sees = SimOracle(env, min_visible_px=count)
    assert _ask(sees, "detector", target=item, camera="shoulder", image_size=size)[0]["found"]
    blind = SimOracle(env, min_visible_px=count + 1)
    for _ in range(20):
        answer, _ = _ask(blind, "detector", target=item, camera="shoulder", image_size=size)
        assert not answer["found"] and answer["point"] is None


def test_a_closed_drawers_inside_is_never_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    env = SimEnv("kitchen")
    try:
        obs, _ = env.reset(seed=2)  # the drawer starts closed
        size = list(obs["shoulder_rgb"].shape[:2])
        assert "drawer-closed top-drawer" in env.task.facts(env.scene_state)
        oracle = SimOracle(env)
        inside = dict(target="top-drawer", part="interior", camera="shoulder", image_size=size)
        assert not _ask(oracle, "detector", **inside)[0]["found"]
        assert _ask(oracle, "detector", **{**inside, "part": "handle"})[0]["found"]

        obs, _ = env.reset(seed=0)  # open, with a spice bottle in it the camera sees
        facts = OracleContext.facts
        bottle = dict(target="spice-bottle-1", camera="shoulder", image_size=size)
        assert "in-drawer spice-bottle-1 top-drawer" in env.task.facts(env.scene_state)
        assert _ask(SimOracle(env), "detector", **bottle)[0]["found"]
        # the same pixels, but the drawer closed: what is inside is not reported
        monkeypatch.setattr(OracleContext, "facts", lambda self: {
            f.replace("drawer-open", "drawer-closed") for f in facts(self)})
        closed = SimOracle(env)
        assert not _ask(closed, "detector", **bottle)[0]["found"]
        assert not _ask(closed, "detector", **inside)[0]["found"]
    finally:
        env.close()


def test_an_emulated_episode_adds_virtual_model_time_to_robot_time(tmp_path) -> None:
    from agentic_env.harness.db import Finished, ResultStore

    spec = EpisodeSpec("sorting", seed=0, agent="agenticlab", model="emulated:gemini-3-flash")
    result = run_episode(spec, video=False)
    profile = load_profile("gemini-3-flash")
    assert result.error is None and result.calls
    expected = sum(c.latency_s for c in result.calls)  # drawn about each module's mean
    means = [profile.module_for(c.module).seconds.value * c.attempts for c in result.calls]
    assert 0.5 < expected / sum(means) < 1.5
    assert all(c.latency_s > 0 for c in result.calls)
    assert {c.model for c in result.calls} == {"emulated:gemini-3-flash"}
    assert result.model_s == pytest.approx(expected)
    assert result.model_s > result.wall_s  # virtual: not waited for
    assert result.episode_s == pytest.approx(result.sim_s + result.model_s)
    assert result.to_dict()["model_s"] == pytest.approx(expected)
    with ResultStore(tmp_path / "results.db") as store:
        store.record(Finished(spec.key(), result, result.wall_s, "here"))
        assert store.episodes()[0]["model_s"] == pytest.approx(expected)


def test_modules_mix_an_emulated_model_with_the_sim_oracle(sorting_env) -> None:
    from agentic_env.agents.models.registry import build_backends
    from agentic_env.oracle import oracle_factories

    env = sorting_env
    router = build_backends("sim-oracle", {"detector": "emulated:qwen3-vl-plus"},
                            factories=oracle_factories(env))
    assert router.backend_for("detector").name == "emulated:qwen3-vl-plus"
    assert router.backend_for("parser").name == "sim-oracle"


def test_checker_error_kinds_never_change_the_rate_by_themselves(sorting_env) -> None:
    """Kind weights choose the direction an error takes; a verdict whose truth allows one
    direction errs at its module's rate either way (no cause model here)."""
    env = sorting_env
    oracle = SimOracle(env, {"checker": 0.2}, seed=5,
                       kinds={"checker": {"false_fail": 3.0, "false_pass": 1.0}})
    n = 500
    denied = sum(not _ask(oracle, "checker", conditions=["(hand-empty)"])[0]["success"]
                 for _ in range(n))
    accepted = sum(_ask(oracle, "checker", conditions=["(not (hand-empty))"])[0]["success"]
                   for _ in range(n))
    assert _within_binomial(denied, n, 0.2) and _within_binomial(accepted, n, 0.2)


def test_roles_asked_once_per_step_err_at_a_turns_share() -> None:
    """ALRM's task planner plans one subtask per call: it carries a turn's share of the
    parser's whole-plan error rate; MALLVI's Decomposer plans the whole task at once."""
    from agentic_env.oracle.emulated import error_rates

    profile = load_profile("qwen3-vl-plus")
    rates = error_rates(profile)
    whole = 1.0 - profile.modules["parser"].success.value
    share = profile.planner_turn_share.value
    assert rates["decomposer"] == pytest.approx(whole)
    assert rates["task_planner"] == rates["task_executor"] == pytest.approx(whole * share)
    assert any("once per step" in a for a in profile.assumptions)
