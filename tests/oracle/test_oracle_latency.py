"""Emulated latency: each call's seconds spread about its module's mean, with the time-out,
re-queries and backoff of the backend a real model is reached through (AgenticLab Sec. VI-A:
Gemini 3 Pro's "repeated re-queries and overthinking")."""

from __future__ import annotations

import inspect
import json
import math
from dataclasses import replace

import numpy as np
import pytest

from agentic_env.agents.models.ask import ask
from agentic_env.agents.models.base import CallRecord, ModelQuery, ModelTimeoutError
from agentic_env.agents.models.litellm_backend import LiteLLMBackend
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.runner import call_summary
from agentic_env.oracle import EmulatedModel, ModelProfile, ToolOracle, load_profile
from agentic_env.oracle.emulated import latency_law, turn_clock, turn_usage
from agentic_env.oracle.latency import LatencyModel

_LAW = LatencyModel(spread_cv=1.0, timeout_s=60.0, retries=3, backoff_s=1.0)
#: A tool query (one tool, ``finish``) for the tool-calling sim-oracle.
_TOOL_QUERY = ModelQuery("tools", "t", "go", tools=({"type": "function", "function": {
    "name": "finish", "parameters": {"type": "object", "properties": {}}}},))


class _Plan:
    """A reference policy that always says ``finish``."""

    def next_call(self) -> tuple[str, dict]:
        return "finish", {}


def _tail(mean_s: float, cv: float, limit_s: float) -> float:
    """P(attempt > limit_s) of a log-normal attempt with mean ``mean_s`` and ``cv``."""
    sigma2 = math.log1p(cv ** 2)
    z = (math.log(limit_s) - math.log(mean_s) + sigma2 / 2) / math.sqrt(sigma2)
    return 0.5 * math.erfc(z / math.sqrt(2))


def test_attempts_keep_the_modules_mean_and_spread() -> None:
    rng = np.random.default_rng(0)
    draws = np.array([_LAW.attempt_s(5.0, rng) for _ in range(40_000)])
    assert draws.mean() == pytest.approx(5.0, rel=0.03)
    assert draws.std() / draws.mean() == pytest.approx(1.0, rel=0.1)
    assert draws.min() > 0
    fixed = LatencyModel(0.0, 60.0, 3, 1.0)
    assert fixed.draw(45.7, rng).seconds == 45.7 and fixed.draw(61.0, rng).answered is False


def test_a_slow_module_times_out_as_often_as_its_tail_and_pays_for_it() -> None:
    """Gemini 3 Pro's parser (70.5 s a call on average) overruns 60 s often; Gemini 3 Flash's
    checker (5.3 s) rarely, and never on every attempt."""
    rng = np.random.default_rng(1)
    n = 20_000
    waits = [_LAW.draw(70.5, rng) for _ in range(n)]
    per_attempt = _tail(70.5, 1.0, 60.0)
    first = sum(w.timeouts >= 1 for w in waits) / n
    assert first == pytest.approx(per_attempt, abs=0.015)
    failed = [w for w in waits if not w.answered]
    assert len(failed) / n == pytest.approx(per_attempt ** 4, abs=0.006)
    assert all(w.seconds == 4 * 60.0 + 1 + 2 + 4 and w.timeouts == 4 for w in failed)
    once = [w for w in waits if w.answered and w.timeouts == 1]
    assert all(61.0 < w.seconds <= 121.0 for w in once)  # the time-out, 1 s backoff, answer
    fast = [_LAW.draw(5.3, rng) for _ in range(n)]
    rare = n * _tail(5.3, 1.0, 60.0)  # about 1 attempt in 1400
    assert abs(sum(w.timeouts for w in fast) - rare) <= 3.3 * math.sqrt(rare) + 1
    assert all(w.answered for w in fast)


def test_the_shared_defaults_are_the_project_backends_own() -> None:
    defaults = inspect.signature(LiteLLMBackend.__init__).parameters
    for name in ("gemini-3-pro", "gpt-4o", "langsam"):
        law = {k: n.value for k, n in load_profile(name).latency.items()}
        assert law["timeout_s"] == defaults["timeout_s"].default
        assert law["retries"] == defaults["max_retries"].default
        assert law["backoff_s"] == defaults["backoff_s"].default
        assert law["spread_cv"] == 1.0
    with pytest.raises(InvalidConfigError, match="spread_cv >= 0, timeout_s > 0"):
        LatencyModel(-1.0, 60.0, 3, 1.0)


def test_an_emulated_call_that_always_times_out_raises_the_backends_error(sorting_env) -> None:
    profile = load_profile("gemini-3-pro")
    checker = profile.modules["checker"]
    slow = replace(profile, modules={**profile.modules,
                                     "checker": replace(checker, seconds=replace(
                                         checker.seconds, value=3000.0))})
    model = EmulatedModel(sorting_env, slow, seed=0)
    query = ModelQuery("checker", "checker", "", fields={"conditions": ["(hand-empty)"]})
    with pytest.raises(ModelTimeoutError, match="60 s time-out in 4 attempts"):
        for _ in range(20):  # P(an attempt of mean 3000 s answers within 60 s) ~ 1e-4
            model.complete(query)
    fast = EmulatedModel(sorting_env, profile, seed=0)
    seconds = [fast.complete(replace(query, fields={"conditions": ["(hand-empty)"], "i": i}))
               .usage.latency_s for i in range(200)]
    assert json.loads(fast.complete(query).text)["success"] in (True, False)
    assert np.mean(seconds) == pytest.approx(checker.seconds.value, rel=0.25)


def _always_late(profile: ModelProfile, module: str) -> ModelProfile:
    """``profile`` whose ``module`` takes 3000 s every attempt (no spread): every call of it
    times out on all its attempts."""
    measured = profile.modules[module]
    spread = profile.latency["spread_cv"]
    return replace(profile,
                   modules={**profile.modules, module: replace(measured, seconds=replace(
                       measured.seconds, value=3000.0))},
                   latency={**profile.latency, "spread_cv": replace(spread, value=0.0)})


def test_a_failed_call_books_its_seconds_in_the_episodes_model_time(sorting_env) -> None:
    """Every attempt of a failed call ran to the time-out, with the backoffs between: those
    seconds are in the call's record, so in the episode's model time."""
    slow = _always_late(load_profile("gemini-3-pro"), "checker")
    law = LatencyModel.of({k: n.value for k, n in slow.latency.items()})
    spent = (law.retries + 1) * law.timeout_s + sum(law.backoff_s * 2 ** i
                                                    for i in range(law.retries))
    records: list[CallRecord] = []
    query = ModelQuery("checker", "checker", "", fields={"conditions": ["(hand-empty)"]})
    with pytest.raises(ModelTimeoutError):
        ask(EmulatedModel(sorting_env, slow, seed=0), query, on_call=records.append)
    (record,) = records
    assert record.reply is None and record.usage.latency_s == pytest.approx(spent)
    result = EpisodeResult(spec=EpisodeSpec("sorting"), success=False, progress=0.0, score=0.0,
                           calls=(call_summary(record),))
    assert result.model_s == pytest.approx(spent)


def test_a_tool_calling_models_turns_take_the_same_latency_law() -> None:
    """ALRM's tool-calling turns (the tool sim-oracle of ``emulated:<profile>``): each turn's
    seconds drawn by the profile's law about the parser's mean, as an :class:`EmulatedModel`
    call's; a turn whose every attempt times out fails with its seconds booked, before an
    answer is drawn."""
    profile = load_profile("claude-4.5-opus")
    law, mean = latency_law(profile), turn_usage(profile)
    oracle = ToolOracle(_Plan(), name="emulated:claude-4.5-opus", usage=turn_clock(profile, 5))
    seconds = [oracle.complete(_TOOL_QUERY).usage.latency_s for _ in range(6)]
    rng = np.random.default_rng([5, 2])
    assert seconds == [law.draw(mean.latency_s, rng).seconds for _ in range(6)]
    assert len(set(seconds)) == 6
    late = ToolOracle(_Plan(), usage=turn_clock(_always_late(profile, "parser"), 5))
    with pytest.raises(ModelTimeoutError) as failed:
        late.complete(_TOOL_QUERY)
    assert failed.value.usage is not None and failed.value.usage.latency_s == pytest.approx(
        (law.retries + 1) * law.timeout_s + sum(law.backoff_s * 2 ** i
                                                for i in range(law.retries)))
    assert late.injected == []
