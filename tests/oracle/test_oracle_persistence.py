"""Persistent errors (a re-ask in an unchanged situation repeats the answer) and
difficulty-dependent detector errors with the measured rate kept on average."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import mujoco
import numpy as np
import pytest

from agentic_env.agents.models.base import ModelQuery
from agentic_env.agents.models.registry import parse_model_spec
from agentic_env.envs.sim_env import SimEnv
from agentic_env.oracle import EmulatedModel, SimOracle, load_profile
from agentic_env.oracle.difficulty import DifficultyModel, Sighting, benchmark_situations
from agentic_env.oracle.emulated import difficulty_models
from agentic_env.oracle.image_quality import quality_model
from agentic_env.sim.state import shift_free_body


def _verdict(model: SimOracle, **fields) -> bool:
    completion = model.complete(ModelQuery("checker", "checker", "", fields=fields))
    return bool(json.loads(completion.text)["success"])


def _within_binomial(errors: int, n: int, rate: float) -> bool:
    """``errors`` of ``n`` lies in the 99.9 % normal interval of Binomial(n, rate)."""
    return abs(errors - n * rate) <= 3.3 * math.sqrt(n * rate * (1 - rate)) + 1


def _repeats(model: SimOracle, n: int, **fields) -> tuple[int, int]:
    """(errors, re-asks whose verdict differs from the previous one) over ``n`` asks of a
    checker whose conditions hold."""
    verdicts = [_verdict(model, **fields) for _ in range(n)]
    return (sum(not v for v in verdicts),
            sum(a != b for a, b in zip(verdicts, verdicts[1:], strict=False)))


def test_a_reask_in_the_same_situation_repeats_the_error_but_at_the_redraw_rate(
        sorting_env) -> None:
    """A verdict changes between two asks only when the coin redraws it (probability r) and
    the fresh draw differs: 2 p (1 - p) r of the re-asks."""
    rate, redraw, n = 0.3, 0.2, 1500
    oracle = SimOracle(sorting_env, {"checker": rate}, seed=2, reask_redraw=redraw)
    errors, flips = _repeats(oracle, n, conditions=["(hand-empty)"])
    assert _within_binomial(flips, n - 1, 2 * rate * (1 - rate) * redraw), flips
    independent = SimOracle(sorting_env, {"checker": rate}, seed=2)  # the default: r = 1
    _, flips = _repeats(independent, n, conditions=["(hand-empty)"])
    assert _within_binomial(flips, n - 1, 2 * rate * (1 - rate)), flips


def test_a_persisting_error_repeats_its_kind_and_its_content(sorting_env) -> None:
    oracle = SimOracle(sorting_env, {"parser": 1.0}, seed=0, reask_redraw=0.0,
                       kinds={"parser": {"missing_goal": 1.0, "wrong_object": 1.0}})
    query = ModelQuery("parser", "parser", "", fields={"domain": ""})
    first = oracle.complete(query).text
    assert all(oracle.complete(query).text == first for _ in range(5))


def test_a_changed_situation_draws_afresh(sorting_env) -> None:
    """Asked once per situation, errors are independent at the rate: another question, or
    the same question after something moved."""
    rate, n = 0.3, 400
    oracle = SimOracle(sorting_env, {"checker": rate}, seed=3, reask_redraw=0.0)
    verdicts = [_verdict(oracle, conditions=["(hand-empty)"], step=i) for i in range(n)]
    assert _within_binomial(sum(not v for v in verdicts), n, rate)
    flips = sum(a != b for a, b in zip(verdicts, verdicts[1:], strict=False))
    assert _within_binomial(flips, n - 1, 2 * rate * (1 - rate))

    env = sorting_env
    item = next(n for n, t in env.task.pddl_objects().items() if t == "item")
    moved = []
    qpos = env.data.qpos.copy()
    try:
        for _ in range(60):
            before = _verdict(oracle, conditions=["(hand-empty)"])
            assert _verdict(oracle, conditions=["(hand-empty)"]) == before  # never redrawn
            shift_free_body(env.scene_state, item, np.array([0.02, 0.0, 0.0]))
            moved.append((before, _verdict(oracle, conditions=["(hand-empty)"])))
    finally:
        env.data.qpos[:] = qpos
        mujoco.mj_forward(env.model, env.data)
    assert any(a != b for a, b in moved)


def test_errors_are_deterministic_for_a_seed(sorting_env) -> None:
    def run(seed: int) -> list[bool]:
        oracle = SimOracle(sorting_env, {"checker": 0.4}, seed=seed, reask_redraw=0.5)
        return [_verdict(oracle, conditions=["(hand-empty)"], step=i % 7) for i in range(50)]

    assert run(4) == run(4) and run(4) != run(5)


def test_the_spec_sets_the_redraw_and_emulated_models_read_their_profile(
        sorting_env) -> None:
    assert parse_model_spec("sim-oracle?checker=0.1&reask_redraw=0.25").reask_redraw == 0.25
    assert parse_model_spec("sim-oracle?checker=0.1").reask_redraw == 1.0
    profile = load_profile("gpt-4o")
    model = EmulatedModel(sorting_env, profile)
    assert model._context.reask_redraw == profile.reask_redraw.value < 1.0
    assert model._context.sees_image_only
    assert profile.reask_redraw.assumption


def _model(situations: list[tuple[int, int]]) -> DifficultyModel:
    return DifficultyModel(1024, 1.5, 1.5, situations, quality_model())


def test_difficulty_raises_the_rate_of_hard_targets_and_keeps_the_mean() -> None:
    situations = [(5000, 0), (3000, 1), (600, 0), (80, 2), (2000, 0), (1500, 3)]
    model = _model(situations)
    for rate in (0.05, 0.12, 0.5):
        rates = [model.rate(rate, Sighting(px, n)) for px, n in situations]
        assert np.mean(rates) == pytest.approx(rate, abs=1e-9)
        easy = model.rate(rate, Sighting(5000, 0))
        hidden = model.rate(rate, Sighting(80, 0))
        crowded = model.rate(rate, Sighting(5000, 3))
        assert easy < rate < hidden and easy < crowded
        noisy = replace(quality_model().reference, noise=0.1)
        assert model.rate(rate, Sighting(5000, 0, noisy)) > easy
        assert model.rate(rate, Sighting(5000, 0, quality_model().reference)) \
            == pytest.approx(easy)
    assert model.rate(0.0, Sighting(80, 3)) == 0.0
    assert model.rate(1.0, Sighting(5000, 0)) == 1.0


def test_the_packaged_benchmark_situations_keep_every_profiles_detector_rate() -> None:
    situations = benchmark_situations()
    assert len(situations) > 100 and all(px >= 0 and n >= 0 for px, n in situations)
    for name in ("gemini-3-flash", "qwen2.5-vl-7b", "langsam"):
        profile = load_profile(name)
        rate = 1.0 - profile.modules["detector"].success.value
        model = difficulty_models(profile)["detector"]
        mean = np.mean([model.rate(rate, Sighting(px, n)) for px, n in situations])
        assert mean == pytest.approx(rate, abs=1e-9)


def test_an_emulated_detector_errs_more_on_a_hard_target(sorting_env) -> None:
    """Over many situations, a target that shows few pixels is missed more often than the
    measured rate and one that shows many less often; each at its sighting's rate."""
    env: SimEnv = sorting_env
    profile = load_profile("qwen2.5-vl-7b")
    model = EmulatedModel(env, profile, seed=9)
    camera = next(c for c in env.cameras if c.name == "shoulder")
    size = [camera.height, camera.width]
    segmentation = env.segmentation("shoulder")
    from agentic_env.oracle.naming import thing_geoms

    pixels = {name: int(np.isin(segmentation, thing_geoms(env, name)).sum())
              for name in env.task.pddl_objects()}
    seen = {n: px for n, px in pixels.items() if px >= profile.min_visible_px.value}
    small, large = min(seen, key=seen.get), max(seen, key=seen.get)
    rate = 1.0 - profile.modules["detector"].success.value
    difficulty = difficulty_models(profile)["detector"]
    n = 300
    for target in (small, large):
        errors = 0
        for i in range(n):
            completion = model.complete(ModelQuery(
                "detector", "detector", "",
                fields={"target": target, "camera": "shoulder", "image_size": size, "try": i}))
            answer = json.loads(completion.text)
            errors += not answer["found"] or int(np.isin(
                segmentation[answer["point"][1], answer["point"][0]],
                thing_geoms(env, target))) == 0
        expected = difficulty.rate(rate, _sighting(env, segmentation, target, seen[target]))
        assert _within_binomial(errors, n, expected), (target, errors, expected)
        assert (expected > rate) if target == small else (expected < rate)


def _sighting(env: SimEnv, segmentation: np.ndarray, target: str, px: int) -> Sighting:
    from agentic_env.oracle.difficulty import sighting

    return sighting(env, segmentation, target, px, 40)
