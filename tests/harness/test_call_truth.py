"""The simulator's truth of AgenticLab's checker and goal-checker verdicts: a wrong "not
holding" is stored beside its truth, and the failure breakdown books it first (Fig. 5)."""

from __future__ import annotations

from pathlib import Path

from agentic_env.agents.base import agent_entry
from agentic_env.agents.models.base import CallRecord, ModelQuery, ModelReply, Usage
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.call_truth import SCORED_MODULES, call_truth
from agentic_env.harness.db import Finished, ResultStore
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.runner import run_episode
from agentic_env.reports.failures import first_failure, truth_coverage


def _answered(module: str, success: bool, **fields: object) -> CallRecord:
    """A call of ``module`` answered ``success`` about ``fields``."""
    usage = Usage()
    reply = ModelReply({"success": success}, "{}", usage, "m")
    return CallRecord(ModelQuery(module, module, "", fields=fields), reply, None, (), usage, "m")


def _stored(tmp_path: Path, spec: EpisodeSpec) -> tuple[dict, list[dict]]:
    """Run ``spec`` (no video) and read its episode and call rows back from a results
    database."""
    result = run_episode(spec, video=False)
    with ResultStore(tmp_path / "results.db") as store:
        store.record(Finished(spec.key(), result, 0.0, "test"))
        (episode,), calls = store.episodes(), store.calls()
    return episode, calls


def test_agenticlab_declares_the_call_truth_of_its_checkers() -> None:
    assert "call-truth" in agent_entry("agenticlab").evaluations
    assert {"checker", "goal", "reflector"} <= set(SCORED_MODULES)


def test_the_checkers_truth_is_the_symbolic_state_now(sorting_env: SimEnv) -> None:
    # at the reset every object stands on the table and the hand is empty
    assert call_truth(sorting_env, _answered(
        "checker", False, conditions=["(on-table blue-cube-1)", "(hand-empty)"])) == "true"
    assert call_truth(sorting_env, _answered(
        "checker", True, conditions=["(on-table blue-cube-1)", "(holding blue-cube-1)"])
    ) == "false"
    assert call_truth(sorting_env, _answered(
        "checker", True, conditions=["(not (in blue-cube-1 bowl))"])) == "true"
    goal = ["(in blue-cube-1 bowl)", "(in rubber-duck-1 blue-bin)"]
    assert call_truth(sorting_env, _answered("goal", True, goal=goal)) == "false"
    failed = CallRecord(ModelQuery("checker", "checker", "", fields={"conditions": []}),
                        None, "ModelError: down", (), Usage(), "m")
    assert call_truth(sorting_env, failed) is None
    assert call_truth(sorting_env, _answered("detector", True, target="bowl")) is None


def test_a_wrong_not_holding_is_booked_to_the_checker(tmp_path: Path) -> None:
    spec = EpisodeSpec("sorting", model="sim-oracle?checker=1.0", max_actions=12,
                       max_replans=2, realism="ideal")
    episode, calls = _stored(tmp_path, spec)
    checks = [c for c in calls if c["module"] == "checker"]
    assert not episode["success"] and episode["failure"] == "limits"
    assert checks and all(c["verdict"] == "false" and c["truth"] == "true" for c in checks)
    assert first_failure(episode, calls) == "checker"
    assert truth_coverage(calls) == 1.0


def test_every_verdict_of_the_perfect_oracle_matches_its_truth(tmp_path: Path) -> None:
    episode, calls = _stored(tmp_path, EpisodeSpec("sorting", max_actions=12, realism="ideal"))
    judged = [c for c in calls if c["truth"] is not None]
    assert episode["success"] and first_failure(episode, calls) is None
    assert {c["module"] for c in judged} == {"checker", "goal"}
    assert all(c["verdict"] == c["truth"] for c in judged)
    assert [c["truth"] for c in judged if c["module"] == "goal"] == ["true"]
