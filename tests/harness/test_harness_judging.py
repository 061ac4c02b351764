"""The trace judge beside the world state: panel score from the report's subtasks, stored
with the episode (result and results database)."""

from __future__ import annotations

import pathlib
import sqlite3

from agentic_env.agents.base import AgentReport
from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.execute import Finished
from agentic_env.harness.judging import executed_subtasks, judge_episode
from agentic_env.harness.sweep import load_sweep

TRUTH = ["Pick up the apple and place it in the bowl.", "Pick up the ball and place it in "
         "the blue bin."]


def report(*steps: tuple[str, bool]) -> AgentReport:
    return AgentReport(events=[{"kind": "subtask", "subtask": text, "ok": ok}
                               for text, ok in steps])


def spec(model: str = "sim-oracle") -> EpisodeSpec:
    return EpisodeSpec("sorting", "lab", agent="alrm", seed=3, model=model)


def test_panel_scores_the_executed_subtasks() -> None:
    full = report((TRUTH[0], True), (TRUTH[1], True))
    half = report((TRUTH[0], True), (TRUTH[1], False))
    assert judge_episode(spec(), "sort", TRUTH, full) == 2.0
    assert judge_episode(spec(), "sort", TRUTH, half) == 1.0
    assert executed_subtasks(half) == [TRUTH[0]]


def test_no_subtasks_or_no_truth_is_not_judged() -> None:
    assert judge_episode(spec(), "sort", TRUTH, AgentReport()) is None
    assert judge_episode(spec(), "sort", None, report((TRUTH[0], True))) is None


def test_unreliable_judges_are_outvoted_or_averaged() -> None:
    full = report((TRUTH[0], True), (TRUTH[1], True))
    scores = {judge_episode(EpisodeSpec("sorting", "lab", agent="alrm", seed=seed,
                                        model="sim-oracle?judge=0.5"), "sort", TRUTH, full)
              for seed in range(20)}
    assert 2.0 in scores and len(scores) > 1 and scores <= {0.0, 1.0, 2.0}


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
    result = EpisodeResult(spec(), success=False, progress=0.5, score=0.5, judge_score=2.0)
    with ResultStore(path) as store:
        store.record(Finished(spec().key(), result, 1.0, "w"))
        assert store.episodes()[0]["judge_score"] == 2.0
    assert result.to_dict()["judge_score"] == 2.0


def test_alrm_category_sweep_crosses_mode_and_category() -> None:
    sweep = load_sweep(pathlib.Path(__file__).parents[2] / "sweeps" / "alrm-categories.yaml")
    cells = {(dict(s.agent_options)["mode"], s.instruction_category) for s in sweep.specs}
    assert len(cells) == 10 and {s.agent for s in sweep.specs} == {"alrm"}
