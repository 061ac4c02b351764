"""The trace judge beside the world state: panel score from the report's subtasks, the
panel's judges (given model specs, the sim-oracle's independent judges by default), stored
with the episode (result and results database)."""

from __future__ import annotations

import json
import pathlib
import sqlite3

import numpy as np
import pytest

from agentic_env.agents.alrm.judge import judge_query, judge_trace, panel_notes
from agentic_env.agents.base import AgentReport
from agentic_env.agents.models import Completion, ModelQuery, Usage
from agentic_env.agents.models.registry import ModelSpec
from agentic_env.agents.models.replay import RecordingBackend
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.execute import Finished
from agentic_env.harness.judging import (
    GroundTruth,
    build_panel,
    executed_subtasks,
    judge_episode,
    panel_specs,
)
from agentic_env.harness.sweep import load_sweep, model_label, parse_sweep

TRUTH = ["Pick up the apple and place it in the bowl.", "Pick up the ball and place it in "
         "the blue bin."]
GROUND_TRUTH = GroundTruth(tuple(TRUTH), ((), ()))
PANEL = ("gemini/gemini-3-pro", "openai/gpt-5.2", "anthropic/claude-opus-4.5")


class ScriptedJudge:
    """A judge model answering one score to every query, recording the queries."""

    def __init__(self, name: str, score: int) -> None:
        self.name, self.score = name, score
        self.queries: list[ModelQuery] = []

    def complete(self, query: ModelQuery) -> Completion:
        self.queries.append(query)
        return Completion(json.dumps({"score": self.score, "reasoning": self.name}), Usage())


def report(*steps: tuple[str, bool]) -> AgentReport:
    return AgentReport(events=[{"kind": "subtask", "subtask": text, "ok": ok}
                               for text, ok in steps])


def spec(model: str = "sim-oracle", judges: tuple[str, ...] = (),
         seed: int = 3) -> EpisodeSpec:
    return EpisodeSpec("sorting", "lab", agent="alrm", seed=seed, model=model, judges=judges,
                       realism="ideal")


def test_panel_scores_the_executed_subtasks() -> None:
    full = report((TRUTH[0], True), (TRUTH[1], True))
    half = report((TRUTH[0], True), (TRUTH[1], False))
    verdict = judge_episode(spec(), "sort", GROUND_TRUTH, full)
    assert verdict is not None and verdict.score == 2.0 and verdict.notes == ()
    assert len(set(verdict.judges)) == 3 and all(j.startswith("sim-oracle?")
                                                 for j in verdict.judges)
    half_verdict = judge_episode(spec(), "sort", GROUND_TRUTH, half)
    assert half_verdict is not None and half_verdict.score == 1.0
    assert executed_subtasks(half) == [TRUTH[0]]


def test_any_order_the_task_allows_scores_full_marks() -> None:
    swapped = report((TRUTH[1], True), (TRUTH[0], True))
    verdict = judge_episode(spec(), "sort", GROUND_TRUTH, swapped)
    assert verdict is not None and verdict.score == 2.0
    ordered = GroundTruth(tuple(TRUTH), ((), (0,)))
    verdict = judge_episode(spec(), "sort", ordered, swapped)
    assert verdict is not None and verdict.score == 1.0


def test_no_subtasks_or_no_truth_is_not_judged() -> None:
    assert judge_episode(spec(), "sort", GROUND_TRUTH, AgentReport()) is None
    assert judge_episode(spec(), "sort", None, report((TRUTH[0], True))) is None


def test_unreliable_judges_are_outvoted_or_averaged() -> None:
    full = report((TRUTH[0], True), (TRUTH[1], True))
    verdicts = [judge_episode(spec("sim-oracle?judge=0.5", seed=seed), "sort", GROUND_TRUTH,
                              full) for seed in range(20)]
    scores = {verdict.score for verdict in verdicts if verdict is not None}
    assert 2.0 in scores and len(scores) > 1 and scores <= {0.0, 1.0, 2.0}


def test_the_default_offline_judges_err_independently() -> None:
    """Three oracle judges with the spec's error rate and seeds of their own: each errs at
    the rate, and two err together about as often as independent judges would."""
    judges = build_panel(spec("sim-oracle?judge=0.3"))
    assert len({judge.name for judge in judges}) == 3
    wrong = np.array([[judge_trace(judge, "sort", TRUTH, TRUTH).score != 2 for judge in judges]
                      for _ in range(400)])
    assert np.all(np.abs(wrong.mean(axis=0) - 0.3) < 0.07)
    for a, b in ((0, 1), (0, 2), (1, 2)):
        assert abs((wrong[:, a] & wrong[:, b]).mean() - 0.09) < 0.05
        assert (wrong[:, a] != wrong[:, b]).mean() > 0.25


def test_the_model_under_test_is_never_the_default_judge() -> None:
    assert panel_specs(spec("openai/gpt-5.2")) == ("sim-oracle",)
    assert panel_specs(spec("sim-oracle?judge=0.2")) == ("sim-oracle?judge=0.2",)
    with_module = EpisodeSpec("sorting", agent="alrm", model="openai/gpt-5.2",
                              modules=(("judge", "gemini/gemini-3-pro"),), realism="ideal")
    assert panel_specs(with_module) == ("gemini/gemini-3-pro",)
    assert panel_specs(spec("openai/gpt-5.2", judges=PANEL)) == PANEL


def test_the_panel_asks_each_given_judge_model() -> None:
    built: dict[str, ScriptedJudge] = {}

    def factory(model: ModelSpec) -> ScriptedJudge:
        assert model.model is not None
        built[model.model] = ScriptedJudge(model.model, {PANEL[2]: 0}.get(model.model, 2))
        return built[model.model]

    full = report((TRUTH[0], True), (TRUTH[1], True))
    verdict = judge_episode(spec("ollama/llama3.2", judges=PANEL), "sort", GROUND_TRUTH, full,
                            factories={"litellm": factory})
    assert verdict is not None
    assert verdict.score == 2.0 and verdict.judges == PANEL and verdict.notes == ()
    assert sorted(built) == sorted(PANEL)
    assert all(len(judge.queries) == 1 for judge in built.values())
    assert built[PANEL[0]].queries[0].fields["executed"] == TRUTH


def test_a_single_given_judge_is_reported_as_no_panel(tmp_path: pathlib.Path) -> None:
    """One replayed model fills the three seats, and the verdict says it is not a panel."""
    full = report((TRUTH[0], True), (TRUTH[1], True))
    recorder = RecordingBackend(ScriptedJudge("openai/gpt-5.2", 1), tmp_path)
    query = judge_query("sort", TRUTH, TRUTH, GROUND_TRUTH.after)
    recorder.complete(query)
    judge = f"replay:{tmp_path}"
    verdict = judge_episode(spec(judges=(judge,)), "sort", GROUND_TRUTH, full)
    assert verdict is not None and verdict.score == 1.0
    assert verdict.judges == (judge,) * 3
    assert len(verdict.notes) == 1 and "asked 3 times is not a panel" in verdict.notes[0]


def test_judge_specs_are_checked() -> None:
    full = report((TRUTH[0], True), (TRUTH[1], True))
    with pytest.raises(InvalidConfigError, match="more than once"):
        judge_episode(spec(judges=(PANEL[0], PANEL[0])), "sort", GROUND_TRUTH, full)


def test_a_sweep_gives_the_judges_with_the_models() -> None:
    grid = {"tasks": ["sorting"], "agents": ["alrm"],
            "models": [{"model": "sim-oracle", "judges": list(PANEL)}, "sim-oracle"]}
    judged, plain = parse_sweep({"grid": grid}).specs
    assert judged.judges == PANEL and plain.judges == ()
    assert model_label(judged) == f"sim-oracle [judges={'+'.join(PANEL)}]"
    # a sweep's world defaults to the realistic one
    assert plain.key() == EpisodeSpec("sorting", agent="alrm", realism="realistic").key()
    assert EpisodeSpec.from_dict(judged.to_dict()) == judged
    with pytest.raises(InvalidConfigError, match="judges"):
        parse_sweep({"grid": {**grid, "models": [{"model": "sim-oracle",
                                                   "judges": "openai/gpt-5.2"}]}})


def test_judge_score_is_stored_with_the_episode(tmp_path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:  # a database from before the trace judge
        conn.execute("CREATE TABLE episodes (key TEXT PRIMARY KEY, spec_json TEXT NOT NULL, "
                     "task TEXT NOT NULL, setting TEXT NOT NULL, seed INTEGER NOT NULL, "
                     "agent TEXT NOT NULL, model TEXT NOT NULL, verification TEXT NOT NULL, "
                     "disturbance TEXT NOT NULL, instruction_category TEXT, success INTEGER "
                     "NOT NULL, progress REAL NOT NULL, score REAL NOT NULL, n_done INTEGER, "
                     "n_extra INTEGER, n_required INTEGER, goal_checker_error INTEGER, "
                     "actions INTEGER, replans INTEGER, wall_s REAL, sim_s REAL, run_s REAL, "
                     "input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL, failure "
                     "TEXT, failure_detail TEXT, trace_dir TEXT, error TEXT, worker TEXT, "
                     "finished_at TEXT NOT NULL)")
    result = EpisodeResult(spec(), success=False, progress=0.5, score=0.5, judge_score=2.0,
                           judges=PANEL[:1] * 3, judge_notes=("not a panel",))
    with ResultStore(path) as store:
        store.record(Finished(spec().key(), result, 1.0, "w"))
        row = store.episodes()[0]
        assert row["judge_score"] == 2.0
        assert (row["judges"], row["judge_notes"]) == (list(PANEL[:1] * 3), ["not a panel"])
    assert result.to_dict()["judge_score"] == 2.0


def test_alrm_category_sweep_crosses_mode_and_category() -> None:
    sweep = load_sweep(pathlib.Path(__file__).parents[2] / "sweeps" / "alrm-categories.yaml")
    cells = {(dict(s.agent_options)["mode"], s.instruction_category) for s in sweep.specs}
    assert len(cells) == 10 and {s.agent for s in sweep.specs} == {"alrm"}


def test_the_run_command_refuses_a_malformed_panel(capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_env.cli import run as run_cli

    assert run_cli.main(["--agent", "alrm", "--judges", "openai/gpt-5.2,,x", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "separated by commas" in error and "sim-oracle" in error


def test_a_panel_of_emulated_models_judges_at_their_profiles_rates() -> None:
    """Each emulated judge errs at its profile's goal-checker rate (Table II) and reports
    its own spec; three such judges are a panel of three distinct models."""
    specs = ("emulated:gemini-3-flash", "emulated:claude-4.5-sonnet", "emulated:gpt-4o")
    judges = build_panel(spec("sim-oracle", judges=specs))
    assert [judge.name for judge in judges] == list(specs)
    wrong = np.array([[judge_trace(judge, "sort", TRUTH, TRUTH).score != 2 for judge in judges]
                      for _ in range(400)]).mean(axis=0)
    assert wrong[0] == 0.0  # Gemini 3 Flash: goal checker 100 %
    assert abs(wrong[1] - (1 - 0.781)) < 0.07  # Claude 4.5 Sonnet: 78.1 %
    assert abs(wrong[2] - (1 - 0.938)) < 0.04  # GPT-4o: 93.8 %
    assert not panel_notes(specs, under_test=("sim-oracle",))
