"""Declared episode evaluations: the runner runs exactly the ones an agent's registration
names (ALRM's trace judge, MALLVI's call truth), each through its three hooks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from support.toy_agent import TOY_FAILURE, make_toy

from agentic_env.agents.base import AgentReport, agent_entry, register_agent, unregister_agent
from agentic_env.agents.models.base import CallRecord
from agentic_env.errors import InvalidConfigError
from agentic_env.harness import call_truth
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec, ModuleCall
from agentic_env.harness.evaluations import (
    EVALUATIONS,
    EpisodeEvaluation,
    build_evaluations,
    register_evaluation,
)
from agentic_env.harness.runner import run_episode


class Recorded(EpisodeEvaluation):
    """Records its hooks and sets ``judge_score`` to the number of calls it saw."""

    seen: list[str] = []

    def __init__(self, spec: EpisodeSpec) -> None:
        self.calls = 0

    def start(self, env: Any, instruction: str) -> None:
        Recorded.seen.append(f"start {instruction}")

    def on_call(self, env: Any, index: int, record: CallRecord) -> None:
        self.calls += 1

    def finish(self, result: EpisodeResult, report: AgentReport) -> EpisodeResult:
        Recorded.seen.append("finish")
        return replace(result, judge_score=float(self.calls))


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setitem(EVALUATIONS, "recorded", "x:y")  # removed again after the test
    register_evaluation("recorded", Recorded)
    Recorded.seen = []
    register_agent("toy-evaluated", make_toy, failure_sources=(TOY_FAILURE,),
                   options={"patience": 3}, evaluations=("recorded",))
    register_agent("toy-plain", make_toy, failure_sources=(TOY_FAILURE,),
                   options={"patience": 3})
    yield "recorded"
    unregister_agent("toy-evaluated")
    unregister_agent("toy-plain")


def test_the_built_in_agents_declare_their_evaluations() -> None:
    assert agent_entry("alrm").evaluations == ("alrm-judge",)
    assert agent_entry("mallvi").evaluations == ("call-truth",)
    assert agent_entry("agenticlab").evaluations == ("call-truth",)
    assert agent_entry("planner-executor").evaluations == ()
    assert agent_entry("support.toy_agent:make_toy").evaluations == ()


def test_an_unknown_evaluation_names_the_registered_ones() -> None:
    with pytest.raises(InvalidConfigError, match="valid: alrm-judge, call-truth"):
        build_evaluations(("no-such",), EpisodeSpec("sorting", realism="ideal"))


def test_the_runner_runs_exactly_the_declared_evaluations(recorded: str) -> None:
    options = (("patience", 1),)
    result = run_episode(EpisodeSpec("sorting", agent="toy-evaluated", agent_options=options,
                                     realism="ideal"),
                         video=False)
    assert result.error is None and result.judge_score == 0.0
    assert [s.split()[0] for s in Recorded.seen] == ["start", "finish"]
    Recorded.seen = []
    plain = run_episode(EpisodeSpec("sorting", agent="toy-plain", agent_options=options,
                                    realism="ideal"),
                        video=False)
    assert plain.judge_score is None and Recorded.seen == []


def test_call_truth_fills_the_truth_of_the_calls_it_scores(
        monkeypatch: pytest.MonkeyPatch) -> None:
    truths = iter(["true", None])
    monkeypatch.setattr(call_truth, "call_truth", lambda env, record: next(truths))
    evaluation = build_evaluations(("call-truth",), EpisodeSpec("sorting", realism="ideal"))[0]
    evaluation.on_call(None, 0, None)  # type: ignore[arg-type]
    evaluation.on_call(None, 1, None)  # type: ignore[arg-type]
    calls = tuple(ModuleCall(module, "m", 0.1, 1, 1, None, 1) for module in ("reflector", "x"))
    result = evaluation.finish(EpisodeResult(EpisodeSpec("sorting", realism="ideal"), success=False,
                                             progress=0.0, score=0.0, calls=calls),
                               AgentReport())
    assert [c.truth for c in result.calls] == ["true", None]
