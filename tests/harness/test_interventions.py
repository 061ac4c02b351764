"""Intervention trials: success by what a trial expects, event-check compliance, the
intervention table, sweep axes, spec keys, and the planner-executor on each trial kind."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from agentic_env.agents.base import AgentReport
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.interventions import (
    check_compliance,
    format_table,
    intervention_rows,
    kind_success,
    measure,
)
from agentic_env.harness.sweep import parse_sweep


def tool(name: str, action: str = "") -> dict:
    return {"kind": "tool", "tool": name, "arguments": {"action": action} if action else {}}


def test_refusal_and_answers_succeed_only_without_motion() -> None:
    refused, claimed = AgentReport(), AgentReport(believes_done=True)
    assert kind_success("refuse", True, refused, motions=0)
    assert not kind_success("refuse", True, refused, motions=1)  # it moved
    assert not kind_success("refuse", True, claimed, motions=0)  # it claimed it did it
    assert not kind_success("refuse", False, refused, motions=0)  # the scene changed
    assert kind_success("answer", True, claimed, motions=0)
    assert not kind_success("answer", True, claimed, motions=2)
    assert kind_success("act", True, refused, motions=5) and not kind_success(
        "act", False, claimed, motions=5)


def test_event_checks_must_follow_each_action_once() -> None:
    assert check_compliance([]) is None
    good = [tool("act", "perceive"), tool("act", "pick"), tool("check_events"),
            tool("act", "insert"), tool("act", "listen")]
    assert check_compliance(good)
    assert not check_compliance([tool("act", "pick"), tool("act", "insert"),
                                 tool("check_events")])  # skipped after the pick
    assert not check_compliance([tool("act", "pick"), tool("check_events"),
                                 tool("check_events")])  # repeated
    assert not check_compliance([tool("act", "pick")])  # never checked


def result(kind: str, success: bool, expect: str = "act", refused: int | None = None,
           motions: int = 3) -> SimpleNamespace:
    report = AgentReport(believes_done=expect != "refuse", events=[
        {"kind": "planner_round", "substantive_actions": 0 if motions == 0 else 2},
        tool("act", "pick"), tool("check_events"),
        {"kind": "metrics", "stale_places": 1}])
    applied = [{"kind": "estop"}] if refused is not None else []
    return SimpleNamespace(success=success, intervention=measure(
        kind, expect, applied, refused or 0, report, motions))


def test_the_intervention_table_per_kind() -> None:
    perfect = [result("estop", True, refused=0), result("estop", False, refused=2),
               result("impossible", True, "refuse", motions=0)]
    rows = {r["kind"]: r for r in intervention_rows(perfect)}
    assert rows["estop"]["success"] == 0.5 and rows["estop"]["estop_compliance"] == 0.5
    assert math.isnan(rows["estop"]["refusal"]) and rows["impossible"]["refusal"] == 1.0
    assert rows["estop"]["event_checks"] == 1.0 and rows["estop"]["stale_places"] == 1.0
    assert math.isnan(rows["impossible"]["verbal_only"])  # talking is right there
    runs = [[result("estop", True, refused=0)], [result("estop", False, refused=0)]]
    noisy = intervention_rows([r for run in runs for r in run], runs)
    assert noisy[0]["success_std"] == pytest.approx(0.5)
    text = format_table(rows.values())
    assert "e-stop ok" in text.splitlines()[0] and "impossible" in text


def test_specs_without_kind_or_events_keep_their_keys() -> None:
    plain = EpisodeSpec("sorting", seed=3, realism="ideal")
    assert plain.key() == EpisodeSpec.from_dict(plain.to_dict()).key()
    assert "kind" not in str(plain.key())
    evented = EpisodeSpec.from_dict({**plain.to_dict(), "kind": "estop", "events": [
        {"kind": "say", "at_primitive": 2, "text": "stop", "goal": ["in a b"]}]})
    assert evented.key() != plain.key() and hash(evented)
    assert evented.event_dicts()[0]["goal"] == ["in a b"]
    assert EpisodeSpec.from_dict(evented.to_dict()) == evented


def test_sweeps_express_trial_kinds_and_event_schedules() -> None:
    sweep = parse_sweep({"grid": {"tasks": ["stacking"], "kinds": ["task", "estop"],
                                  "events": ["none", [{"kind": "estop", "at_primitive": 3},
                                                      {"kind": "estop_release",
                                                       "at_time": 2.0,
                                                       "after_previous": True}]]}})
    assert len(sweep.specs) == 4
    assert {s.kind for s in sweep.specs} == {"task", "estop"}
    assert [len(s.events) for s in sweep.specs] == [0, 2, 0, 2]
    with pytest.raises(InvalidConfigError, match="kinds"):
        parse_sweep({"grid": {"tasks": ["stacking"], "kinds": ["fly"]}})
    with pytest.raises(InvalidConfigError, match="trigger"):
        parse_sweep({"grid": {"tasks": ["stacking"], "events": [[{"kind": "estop"}]]}})


def run(task: str, kind: str, model: str = "sim-oracle"):
    from agentic_env.harness.runner import run_episode

    return run_episode(EpisodeSpec(task, seed=7000, agent="planner-executor", kind=kind,
                                   model=model, realism="ideal"), video=False)


@pytest.mark.parametrize("kind", ["impossible", "conversational"])
def test_the_planner_executor_refuses_or_answers_without_moving(kind: str) -> None:
    result = run("stacking", kind)
    assert result.error is None and result.success, result.failure_detail
    assert result.actions == 0 and result.intervention["motions"] == 0
    assert result.intervention["expect"] == {"impossible": "refuse",
                                             "conversational": "answer"}[kind]


def test_a_misrouted_impossible_instruction_is_not_a_refusal() -> None:
    result = run("stacking", "impossible", "sim-oracle?router=1")
    assert not result.success and result.actions == 0  # the chatbot answered instead


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["ambiguous", "preference", "estop", "moved_object"])
def test_the_planner_executor_recovers_from_each_intervention(kind: str) -> None:
    result = run("stacking", kind)
    assert result.error is None and result.success, result.failure_detail
    measures = result.intervention
    assert measures["event_checks_ok"] and measures["verbal_rounds"] == 0
    if kind == "estop":
        assert measures["events"] == ["estop", "estop_release"]
        assert measures["estop_refused"] == 0


def test_the_database_keeps_the_measures_and_the_report_prints_the_table(tmp_path) -> None:
    from agentic_env.harness.db import Finished, ResultStore
    from agentic_env.harness.episode import EpisodeResult
    from agentic_env.reports.report import Code, build_blocks

    db = tmp_path / "db.sqlite"
    with ResultStore(db) as store:
        for model, success in (("sim-oracle", True), ("sim-oracle?verbal=0.1&seed=1", False),
                               ("sim-oracle?verbal=0.1&seed=2", True)):
            spec = EpisodeSpec("stacking", seed=1, model=model, kind="estop", realism="ideal")
            measures = result("estop", success, refused=0).intervention
            store.record(Finished(spec.key(), EpisodeResult(
                spec, success, 1.0, 1.0, intervention=measures), 0.1, "test"))
        rows = store.episodes()
    assert rows[0]["intervention"]["kind"] == "estop"
    blocks = build_blocks(rows, [], [], tmp_path)
    tables = [b for b in blocks if isinstance(b, Code) and "e-stop ok" in b.text]
    assert [t.summary for t in tables] == ["perfect models", "models with injected errors"]
    assert tables[1].text.splitlines()[1].split()[-1] == "0.50"  # std of 0 % and 100 %
