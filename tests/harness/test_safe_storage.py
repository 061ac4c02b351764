"""No model output can make a result disappear: a lone surrogate or a 10 MB answer reaches
the results database, a trace and the report as safe, capped text."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from agentic_env.agents.models.base import CallRecord, ModelImage, ModelQuery, ModelReply, Usage
from agentic_env.harness.db import Finished, ModuleInstance, ResultStore
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec, ModuleCall
from agentic_env.harness.trace import EpisodeTrace
from agentic_env.reports.report import write_report
from agentic_env.text import STORED_TEXT_CHARS

SURROGATE = "the program said \ud800 and stopped"
HUGE = "x" * 10_000_000
CAP = STORED_TEXT_CHARS + 40


def _result(spec: EpisodeSpec) -> EpisodeResult:
    return EpisodeResult(
        spec, success=False, progress=0.0, score=0.0, failure="executor",
        failure_detail=SURROGATE, error=HUGE,
        calls=(ModuleCall("task_executor", "sim-oracle", 0.1, 1, 1, 0.0, 1, None,
                          error=SURROGATE + HUGE),))


def test_the_database_stores_what_a_model_wrote(tmp_path: Path) -> None:
    spec = EpisodeSpec("sorting", seed=1, realism="ideal")
    with ResultStore(tmp_path / "results.db") as store:
        assert store.record(Finished(spec.key(), _result(spec), 1.0, "test"))
        store.record_module_instance(ModuleInstance(
            "sim-oracle", "parser", "sorting-1", "sorting", "lab", 1, False, None, 0.1, 1, 1,
            label={"x": 1}, answer={"text": SURROGATE + HUGE}, error=SURROGATE))
        row, = store.episodes()
        call, = store.calls()
        instance, = store.module_instances()
    assert row["failure_detail"] == "the program said \ufffd and stopped"
    assert len(row["error"]) <= CAP and row["error"].startswith("xxx")
    assert len(call["error"]) <= CAP and "\ufffd" in call["error"]
    assert len(json.loads(instance["answer_json"])["text"]) <= CAP
    assert instance["error"] == "the program said \ufffd and stopped"
    report = write_report(tmp_path / "results.db", tmp_path / "report")
    report.html.read_text(encoding="utf-8")


def test_a_trace_keeps_what_a_model_wrote(tmp_path: Path) -> None:
    trace = EpisodeTrace(tmp_path)
    usage = Usage(latency_s=0.1, cost_usd=0.0)
    query = ModelQuery("task_executor", "cap", "write the program",
                       (ModelImage("shoulder_rgb", np.zeros((8, 8, 3), np.uint8)),))
    reply = ModelReply({"code": SURROGATE + HUGE}, HUGE, usage, "sim-oracle", 1, ())
    trace.on_call(CallRecord(query, reply, SURROGATE, (HUGE + "\udfff",), usage, "sim-oracle"))
    trace.on_event({"kind": "subtask", "t": 0.5, "ok": False, "reasoning": SURROGATE + HUGE})
    spec = EpisodeSpec("sorting", seed=1, realism="ideal")
    trace.finish({"title": SURROGATE, "instruction": "sort", "result": _result(spec).to_dict()})
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "the program said \ufffd and stopped" in page
    assert len(page) < 20 * STORED_TEXT_CHARS
    call = json.loads(next((tmp_path / "calls").glob("*.json")).read_text())
    assert len(call["raw_responses"][0]) <= CAP
    assert (tmp_path / "episode.json").stat().st_size < 10 * STORED_TEXT_CHARS
