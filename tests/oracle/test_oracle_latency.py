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

from agentic_env.agents.models.base import ModelQuery, ModelTimeoutError
from agentic_env.agents.models.litellm_backend import LiteLLMBackend
from agentic_env.errors import InvalidConfigError
from agentic_env.oracle import EmulatedModel, load_profile
from agentic_env.oracle.latency import LatencyModel

_LAW = LatencyModel(spread_cv=1.0, timeout_s=60.0, retries=3, backoff_s=1.0)


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
