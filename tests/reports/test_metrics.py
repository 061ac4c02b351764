"""Metric functions on known inputs."""

from __future__ import annotations

from typing import Any

import pytest

from agentic_env.reports import metrics
from agentic_env.stats import wilson_interval


def _row(success: bool, score: float, failure: str | None = None, **extra: Any
         ) -> dict[str, Any]:
    return {"success": success, "score": score, "progress": score, "wall_s": 10.0,
            "input_tokens": 100, "output_tokens": 50, "cost_usd": None, "failure": failure,
            **extra}


def test_group_stats_counts_means_and_std():
    rows = [_row(True, 1.0, task="a", cost_usd=0.02), _row(False, 0.5, "checker", task="a"),
            _row(False, 0.0, "error", task="a", wall_s=40.0), _row(True, 1.0, task="b")]
    a, b = metrics.group_stats(rows, ("task",))
    assert a.group == ("a",) and b.group == ("b",)
    assert (a.n, a.successes, a.errors) == (3, 1, 1)
    assert a.success_rate == pytest.approx(1 / 3)
    assert (a.ci_low, a.ci_high) == pytest.approx(wilson_interval(1, 3))
    assert a.mean_score == pytest.approx(0.5)
    assert a.std_score == pytest.approx(0.5)
    assert a.mean_wall_s == pytest.approx(20.0)
    assert a.mean_tokens == pytest.approx(150.0)
    assert a.mean_cost_usd == pytest.approx(0.02)
    assert b.std_score == 0.0 and b.mean_cost_usd is None


def test_failure_breakdown_counts_first_failing_source_of_failed_episodes():
    rows = [_row(False, 0.2, "checker", model="m"), _row(False, 0.0, "checker", model="m"),
            _row(False, 0.0, "detector", model="m"), _row(False, 0.0, None, model="m"),
            _row(True, 1.0, None, model="m"), _row(True, 1.0, None, model="n")]
    breakdown = metrics.failure_breakdown(rows, ("model",))
    m = breakdown[("m",)]
    assert (m["checker"], m["detector"], m[metrics.UNATTRIBUTED], m["parser"]) == (2, 1, 1, 0)
    assert sum(breakdown[("n",)].values()) == 0


def test_injected_errors_from_model_specs():
    assert metrics.injected_errors("sim-oracle") == {}
    assert metrics.injected_errors("sim-oracle?checker=0.1&detector=0.15") == {
        "checker": 0.1, "detector": 0.15}
    assert metrics.injected_errors("sim-oracle?checker=0.3&seed=4") == {"checker": 0.3}
    assert metrics.injected_errors("sim-oracle?checker=2") == {}  # not a valid spec
    # A per-module override replaces that module's rate (and may inject its own).
    assert metrics.injected_errors("sim-oracle?checker=0.3",
                                   {"checker": "gemini/gemini-3-flash"}) == {}
    assert metrics.injected_errors("sim-oracle", {"detector": "sim-oracle?detector=0.2"}) == {
        "detector": 0.2}


def test_compounding_curve_and_independent_error_prediction():
    clean = [_row(True, 1.0, injected={}, module_calls={"checker": 6}, verification="full")
             for _ in range(4)]
    noisy = [_row(s, 1.0 if s else 0.3, None if s else "checker",
                  injected={"checker": 0.1}, module_calls={"checker": 9}, verification="full")
             for s in (True, True, False, False)]
    mixed = [_row(False, 0.0, "checker", injected={"checker": 0.1, "detector": 0.1},
                  module_calls={}, verification="full")]
    zero, point = metrics.compounding_curve(clean + noisy + mixed)
    assert (zero.module, zero.error_rate, zero.n, zero.success_rate) == ("checker", 0.0, 4, 1.0)
    assert (point.error_rate, point.n, point.successes) == (0.1, 4, 2)
    assert point.mean_calls == 9.0  # retries after wrong verdicts
    # the paper's 0.9^6 ~ 0.53: the calls an error-free episode needs, not the retried ones
    assert point.predicted == pytest.approx(0.9 ** 6)
    assert point.mean_score == pytest.approx(0.65)


def test_call_stats_and_module_table():
    calls = [{"module": "checker", "model": "m", "latency_s": 1.0, "input_tokens": 10,
              "output_tokens": 2, "error": None, "verdict": "true"},
             {"module": "checker", "model": "m", "latency_s": 3.0, "input_tokens": 30,
              "output_tokens": 4, "error": "timeout", "verdict": None}]
    (stats,) = metrics.call_stats(calls)
    assert (stats.n, stats.mean_latency_s, stats.mean_input_tokens) == (2, 2.0, 20.0)
    assert stats.error_rate == 0.5 and stats.verdicts == {"true": 1}
    instances = [{"model": "m", "module": "detector", "success": s, "metric": iou,
                  "latency_s": 0.5, "input_tokens": 10, "output_tokens": 0}
                 for s, iou in ((True, 0.9), (True, 0.7), (False, 0.0), (True, None))]
    (cell,) = metrics.module_table(instances)
    assert (cell.n, cell.successes) == (4, 3)
    assert cell.mean_metric == pytest.approx(0.8 / 3 * 2)
    assert cell.mean_latency_s == 0.5 and cell.mean_tokens == 10.0


def test_verdict_scores_count_false_complete_as_the_dangerous_error():
    episodes = [{"key": "a", "task": "sorting", "model": "m"},
                {"key": "b", "task": "stacking", "model": "m"}]
    pairs = [("true", "true")] * 3 + [("true", "false"), ("false", "true")] \
        + [("false", "false")] * 3
    calls = [{"episode_key": "a", "module": "reflector", "verdict": v, "truth": t}
             for v, t in pairs]
    calls += [{"episode_key": "b", "module": "reflector", "verdict": "false", "truth": "true"},
              {"episode_key": "b", "module": "localizer", "verdict": "found", "truth": None},
              {"episode_key": "b", "module": "reflector", "verdict": None, "truth": None}]
    sorting, stacking = metrics.verdict_scores(calls, episodes)
    assert (sorting.module, sorting.group) == ("reflector", ("sorting", "m"))
    assert (sorting.tp, sorting.fp, sorting.fn, sorting.tn) == (3, 1, 1, 3)
    assert sorting.precision == 0.75 and sorting.recall == 0.75
    assert sorting.false_positive_rate == 0.25
    assert (stacking.n, stacking.fn, stacking.precision, stacking.recall) == (1, 1, None, 0.0)
