"""The planner-executor's router, critic loop and its sim-oracle answers (offline)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from support.robots import RecordingRobot

from agentic_env.agents.base import AgentSetup, TaskContext, make_agent
from agentic_env.agents.models.base import Completion, ModelQuery, ToolCall, Usage
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.oracle.planner_executor import PlannerOracle
from agentic_env.pddl.planning import PlanStep


class Scripted:
    """Answers each module from its own list, in order."""

    name = "scripted"

    def __init__(self, **answers: list[Any]) -> None:
        self.answers = {k: list(v) for k, v in answers.items()}
        self.queries: list[ModelQuery] = []

    def complete(self, query: ModelQuery) -> Completion:
        self.queries.append(query)
        answer = self.answers[query.module].pop(0)
        if isinstance(answer, ToolCall):
            return Completion("", Usage(), (answer,), "native")
        text = answer if isinstance(answer, str) else json.dumps(answer)
        return Completion(text, Usage(), (), "native")


def run(backend: Scripted, instruction: str = "put the red cube in the bin",
        max_replans: int = 2) -> Any:
    setup = AgentSetup(ModuleContext(ModelRouter(backend)), max_replans=max_replans)
    agent = make_agent("planner-executor", setup)
    return agent.run(RecordingRobot(), instruction, TaskContext(domain=""))


def speak(text: str) -> ToolCall:
    return ToolCall("c1", "act", {"action": "speak", "params": [text]})


def test_the_chatbot_answers_from_the_perceived_snapshot_and_the_image_and_nothing_moves(
        ) -> None:
    listing = {"objects": [{"name": "orange tray", "kind": "container"},
                           {"name": "tabletop", "kind": "table"}]}
    backend = Scripted(router=[{"route": "conversational"}],
                       detector=[listing, {"found": False, "point": None, "box": None}],
                       chatbot=[{"answer": "I see an orange tray."}])
    report = run(backend, "what is on the table?")
    assert report.believes_done and report.actions == 0
    assert [q.module for q in backend.queries] == ["router", "detector", "detector", "chatbot"]
    assert backend.queries[0].images == ()  # the router reads the utterance only
    chatbot = backend.queries[-1]
    assert [image.name for image in chatbot.images] == ["shoulder_rgb"]
    assert "kind(orange tray, container)" in chatbot.fields["snapshot"]
    assert "not_seen(orange tray)" in chatbot.prompt  # the snapshot's text is in the prompt
    assert any(e["kind"] == "chatbot" for e in report.events)


def test_continue_reinvokes_the_planner_then_achieved_ends_the_episode() -> None:
    backend = Scripted(router=[{"route": "actionable"}],
                       planner=["I would pick the cube and put it in the bin.",  # verbal only
                                speak("starting"), "done"],
                       critic=[{"verdict": "continue", "reason": "only talked"},
                               {"verdict": "achieved", "reason": "done"}])
    report = run(backend)
    assert report.believes_done and report.goal_checked and report.replans == 1
    planner = [q for q in backend.queries if q.module == "planner"]
    assert planner[1].messages[-1]["content"].startswith("The goal completion critic says "
                                                         "continue")
    assert planner[1].tools and len(planner[1].tools) == 4
    rounds = [e for e in report.events if e["kind"] == "planner_round"]
    assert [r["substantive_actions"] for r in rounds] == [0, 0]
    critic = [q for q in backend.queries if q.module == "critic"]
    assert "act(action=speak" in critic[1].fields["log"]
    # the critic reads what the planner said and the snapshot; the planner sees no image
    assert critic[0].fields["log"].startswith("planner said: I would pick the cube")
    assert "gripper contents: not sensed" in critic[0].fields["snapshot"]
    assert all(q.images == () for q in planner)


def test_best_effort_stop_reports_the_blocked_goal() -> None:
    backend = Scripted(router=[{"route": "actionable"}], planner=["I cannot fly."],
                       critic=[{"verdict": "best_effort_stop", "reason": "infeasible"}])
    report = run(backend, "fly to the window")
    assert not report.believes_done and report.failure == "execution"
    assert "infeasible" in report.failure_detail and report.actions == 0


def test_the_critic_loop_is_bounded() -> None:
    backend = Scripted(router=[{"route": "actionable"}], planner=["hmm"] * 3,
                       critic=[{"verdict": "continue"}] * 3)
    report = run(backend, max_replans=2)
    assert report.failure == "limits" and report.replans == 2


def test_malformed_router_answers_are_retried_then_blamed_on_the_router() -> None:
    backend = Scripted(router=[{"route": "maybe"}] * 3)
    report = run(backend)
    assert report.failure == "router"


# -- the sim-oracle's answers ---------------------------------------------------------------


class _Env(SimpleNamespace):
    """A stand-in simulator, hashable and weakly referable as the oracle's error notes
    need."""

    __hash__ = object.__hash__


def oracle(success: bool = False, plan: list[PlanStep] | None = None,
           wrong: str | None = None) -> PlannerOracle:
    env = _Env(task=SimpleNamespace(evaluate=lambda _s: SimpleNamespace(success=success)),
               scene_state=None, trial=SimpleNamespace(instruction="sort the fruit"),
               data=SimpleNamespace(time=0.0))
    draws = SimpleNamespace(env=env, wrong=lambda kind, _verdict=None: kind == wrong,
                            error_kind=lambda _role: None, rng=np.random.default_rng(0))
    answers = PlannerOracle(draws)  # type: ignore[arg-type]
    answers._plan = lambda: plan  # type: ignore[method-assign]
    return answers


PLAN = [PlanStep("pick", ("apple-1",)), PlanStep("place-in", ("apple-1", "bowl"))]


def test_the_oracle_router_tells_questions_from_instructions() -> None:
    assert oracle().router({"utterance": "sort the fruit"})["route"] == "actionable"
    assert oracle().router({"utterance": "what is on the table?"})["route"] == "conversational"
    assert oracle(wrong="router").router({"utterance": "sort the fruit"})["route"] == \
        "conversational"


@pytest.mark.parametrize(("success", "plan", "round_actions", "verdict"), [
    (True, PLAN, 3, "achieved"),
    (False, PLAN, 0, "continue"),  # verbal-only round
    (False, PLAN, 2, "continue"),
    (False, None, 2, "best_effort_stop"),  # no way to the goal remains
])
def test_the_oracle_critic_answers_all_three_verdicts(
        success: bool, plan: list[PlanStep] | None, round_actions: int, verdict: str) -> None:
    answer = oracle(success, plan).critic({"round_actions": round_actions, "rounds": 1})
    assert answer["verdict"] == verdict


@pytest.mark.parametrize(("module", "kind", "success", "fields", "wrong_answer"), [
    ("router", "false_fail", False, {"utterance": "sort the fruit"}, "conversational"),
    ("router", "false_pass", False, {"utterance": "what is on the table?"}, "actionable"),
    ("critic", "false_fail", True, {"round_actions": 3}, "continue"),
    ("critic", "false_pass", False, {"round_actions": 3}, "achieved"),
])
def test_the_oracle_router_and_critic_err_by_their_verdict_kinds(
        module: str, kind: str, success: bool, fields: dict, wrong_answer: str) -> None:
    """A verdict errs only by the kind its truth allows: ``false_fail`` denies what holds."""
    answers = oracle(success, PLAN)
    other = "false_pass" if kind == "false_fail" else "false_fail"
    key = "route" if module == "router" else "verdict"
    answers._wrong = lambda m, k=None: (m, k) == (module, kind)  # type: ignore[method-assign]
    assert getattr(answers, module)(fields)[key] == wrong_answer
    answers._wrong = lambda m, k=None: (m, k) == (module, other)  # type: ignore[method-assign]
    assert getattr(answers, module)(fields)[key] != wrong_answer


def calls(answers: PlannerOracle, turns: int = 20) -> list[Any]:
    out = []
    for _ in range(turns):
        answer = answers.planner([])
        out.append(answer)
        if isinstance(answer, str):
            break
    return out


def test_the_oracle_planner_follows_the_papers_loop() -> None:
    sequence = calls(oracle(plan=PLAN))
    names = [c if isinstance(c, str) else (c[0], c[1].get("action")) for c in sequence]
    assert names[:2] == [("reflect", None), ("get_state_snapshot", None)]
    assert names[2:8] == [("act", "perceive"), ("act", "pick"), ("check_events", None),
                          ("act", "perceive"), ("act", "insert"), ("check_events", None)]


@pytest.mark.parametrize(("wrong", "check"), [
    ("verbal", lambda seq: isinstance(seq[0], str)),
    ("skip_events", lambda seq: all(c[0] != "check_events" for c in seq
                                    if not isinstance(c, str))),
    ("repeat_events", lambda seq: [c[0] for c in seq[4:6]] == ["check_events"] * 2),
    ("blind_place", lambda seq: [c[1].get("action") for c in seq[2:6]]
     == ["perceive", "pick", None, "insert"]),
])
def test_the_oracle_planner_injects_the_papers_failure_modes(wrong: str, check: Any) -> None:
    assert check(calls(oracle(plan=PLAN, wrong=wrong)))


def test_after_a_failed_act_the_oracle_planner_checks_events_before_it_plans_again() -> None:
    answers = oracle(plan=PLAN)
    first = calls(answers, 4)
    assert [c[1].get("action") for c in first[2:]] == ["perceive", "pick"]
    failed = [{"role": "assistant", "content": ""},
              {"role": "tool", "name": "act", "content": "GRASP_FAILED: pick apple-1"}]
    assert answers.planner(failed) == ("check_events", {})
    checked = [*failed, {"role": "tool", "name": "check_events", "content": "OK: no events"}]
    assert answers.planner(checked)[0] == "reflect"  # then a new plan
