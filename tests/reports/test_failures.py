"""The first failing module is booked from the calls' truth when they carry it."""

from __future__ import annotations

from agentic_env.reports.failures import first_failure, first_failures, truth_coverage


def _episode(key: str, success: bool, failure: str | None, model: str = "m") -> dict:
    return {"key": key, "success": success, "failure": failure, "model": model}


def test_a_false_not_holding_is_a_checker_failure_though_the_agent_booked_limits() -> None:
    calls = [{"episode_key": "e", "seq": 2, "module": "grasp", "verdict": "true",
              "truth": "false"},
             {"episode_key": "e", "seq": 1, "module": "checker", "verdict": "false",
              "truth": "true"}]
    assert first_failure(_episode("e", False, "limits"), calls) == "checker"


def test_without_truth_the_agents_booking_stands() -> None:
    calls = [{"episode_key": "e", "seq": 0, "module": "checker", "verdict": "false",
              "truth": None}]
    assert first_failure(_episode("e", False, "limits"), calls) == "limits"
    assert first_failure(_episode("e", False, None), calls) == "unattributed"
    assert first_failure(_episode("e", True, None), calls) is None
    assert truth_coverage(calls) == 0.0


def test_counts_per_model() -> None:
    episodes = [_episode("a", False, "parser", "x"), _episode("b", False, "limits", "x"),
                _episode("c", True, None, "y")]
    calls = [{"episode_key": "b", "seq": 0, "module": "checker", "verdict": "false",
              "truth": "true"}]
    assert first_failures(episodes, calls) == {"x": {"parser": 1, "checker": 1}}
