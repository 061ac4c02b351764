"""The report renders: the HTML parses, figures exist and are PNGs, trace links resolve."""

from __future__ import annotations

import base64
import pathlib
import sqlite3
from html.parser import HTMLParser

from test_harness_run import fake_episode

from agentic_env.cli.harness import report_main
from agentic_env.harness.db import Finished, ModuleInstance, ResultStore
from agentic_env.harness.episode import EpisodeResult, ModuleCall
from agentic_env.harness.execute import error_result
from agentic_env.harness.sweep import parse_sweep
from agentic_env.reports.report import write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
VOID = {"meta", "img", "br", "hr", "link", "input"}


class _Checker(HTMLParser):
    """Collects images, links and tag nesting errors."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.images: list[str] = []
        self.links: list[str] = []
        self.headings: list[str] = []
        self._in_heading = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "img":
            self.images.append(values["src"] or "")
        if tag == "a":
            self.links.append(values["href"] or "")
        self._in_heading = tag in ("h1", "h2", "h3")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(f"unbalanced </{tag}>")
        self._in_heading = False

    def handle_data(self, data: str) -> None:
        if self._in_heading:
            self.headings.append(data)


def _database(tmp_path: pathlib.Path) -> pathlib.Path:
    sweep = parse_sweep({"grid": {
        "tasks": ["sorting", "stacking"], "models": ["sim-oracle", "sim-oracle?checker=0.3"],
        "verification": ["full", "goal"], "disturbances": ["none", "move_target"],
        "seeds": 3}})
    db = tmp_path / "results.db"
    with ResultStore(db) as store:
        for i, spec in enumerate(sweep.specs):
            result = fake_episode(spec, trace_root=tmp_path / "traces")
            if i == 0:
                (tmp_path / "traces" / spec.key() / "video.mp4").write_bytes(b"\x00")
            if i == 1:
                result = error_result(spec, "RuntimeError: boom",
                                      "Traceback (most recent call last):\nRuntimeError: boom")
            store.record(Finished(key=spec.key(), result=result, run_s=0.1, worker="test"))
        for module, success, metric in (("detector", True, 0.8), ("detector", False, 0.1),
                                        ("checker", True, None), ("goal", True, None)):
            store.record_module_instance(ModuleInstance(
                model="sim-oracle", module=module, instance=f"{module}-{success}",
                task="sorting", setting="lab", seed=0, success=success, metric=metric,
                latency_s=0.01, input_tokens=10, output_tokens=5, label={"x": 1},
                answer={"x": 1}))
    return db


def test_report_html_parses_and_figures_exist(tmp_path):
    files = write_report(_database(tmp_path), tmp_path / "out")
    text = files.html.read_text()
    checker = _Checker()
    checker.feed(text)
    checker.close()
    assert checker.errors == [] and checker.stack == []
    headings = " ".join(checker.headings)
    for section in ("Success and progress", "Failure modes", "Verification ablation",
                    "Compounding", "Model calls", "Module benchmark", "Episodes",
                    "Crashed episodes"):
        assert section in headings
    assert {p.name for p in files.figures} == {
        "success.png", "failures.png", "ablation.png", "compounding.png"}
    for path in files.figures:
        assert path.read_bytes().startswith(PNG_MAGIC) and path.stat().st_size > 5000
    # Self-contained: every image is an embedded PNG.
    assert len(checker.images) == len(files.figures)
    for src in checker.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG_MAGIC)
    # Links to traces and the one video resolve relative to the report folder.
    traces = [link for link in checker.links if link.endswith("index.html")]
    videos = [link for link in checker.links if link.endswith("video.mp4")]
    assert len(traces) == 47 and len(videos) == 1
    assert all((files.html.parent / link).is_file() for link in traces + videos)
    assert "Traceback (most recent call last)" in text
    markdown = files.markdown.read_text()
    assert all(f"(plots/{p.name})" in markdown for p in files.figures)
    assert "| sim-oracle | " in markdown and "Object detector box IoU" in markdown


def test_report_command_on_missing_database(tmp_path, capsys):
    assert report_main([str(tmp_path / "nope.db"), "--out", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().out


def test_report_scores_stored_reflector_verdicts_and_agent_options(tmp_path):
    sweep = parse_sweep({"grid": {"tasks": ["sorting"], "agents": ["mallvi"],
                                  "agent_options": [{}, {"reflector": False}], "seeds": 2}})
    db = tmp_path / "results.db"
    with ResultStore(db) as store:
        for spec in sweep.specs:
            calls = () if spec.options() else (
                ModuleCall("reflector", "sim-oracle", 0.0, 0, 0, 0.0, 1, "true", None, "true"),
                ModuleCall("reflector", "sim-oracle", 0.0, 0, 0, 0.0, 1, "true", None, "false"))
            result = EpisodeResult(spec=spec, success=True, progress=1.0, score=1.0,
                                   calls=calls)
            store.record(Finished(key=spec.key(), result=result, run_s=0.1, worker="test"))
        assert [c["truth"] for c in store.calls()] == ["true", "false"] * 2
    markdown = write_report(db, tmp_path / "out").markdown.read_text()
    assert "## Agent-options ablation" in markdown and "| reflector=false |" in markdown
    assert ("| reflector | sorting | sim-oracle | 4 | 2 | 2 | 0 | 0 | 50.0 % | 100.0 % | "
            "100.0 % |") in markdown


def test_a_database_from_before_scored_calls_gains_the_truth_column(tmp_path):
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE calls (id INTEGER PRIMARY KEY, episode_key TEXT, seq "
                     "INTEGER, module TEXT, model TEXT, latency_s REAL, input_tokens INTEGER,"
                     " output_tokens INTEGER, cost_usd REAL, attempts INTEGER, verdict TEXT, "
                     "error TEXT)")
    conn.close()
    with ResultStore(db) as store:
        assert store.calls() == []
    with sqlite3.connect(db) as conn:
        assert "truth" in {row[1] for row in conn.execute("PRAGMA table_info(calls)")}
    conn.close()


def test_report_sets_the_agent_designs_side_by_side_with_their_usage(tmp_path):
    """Two or more agents: success, score, model calls, model time, robot time and tokens
    per agent and model, then per setting."""
    sweep = parse_sweep({"grid": {"tasks": ["sorting"], "settings": ["lab", "kitchen"],
                                  "agents": ["agenticlab", "mallvi"], "seeds": 2}})
    db = tmp_path / "results.db"
    with ResultStore(db) as store:
        for spec in sweep.specs:
            mallvi = spec.agent == "mallvi"
            calls = tuple(ModuleCall("checker", spec.model, 5.0, 3000, 400, None, 1, None)
                          for _ in range(3 if mallvi else 2))
            result = EpisodeResult(spec=spec, success=not mallvi, progress=1.0,
                                   score=0.5 if mallvi else 1.0, sim_s=40.0, calls=calls,
                                   input_tokens=3000 * len(calls),
                                   output_tokens=400 * len(calls))
            store.record(Finished(key=spec.key(), result=result, run_s=0.1, worker="test"))
    markdown = write_report(db, tmp_path / "out").markdown.read_text()
    section = markdown.split("## Agent designs side by side", 1)[1]
    assert ("| agent | model | success [95 % CI] | score | model calls | model s | robot s "
            "| tokens |") in section
    assert ("| agenticlab | sim-oracle | 4/4 = 100.0 % [51.0 %, 100.0 %] | 1.00 | 2.0 | 10 "
            "| 40 | 6,800 |") in section
    assert "| mallvi | sim-oracle | 0/4 = 0.0 % [0.0 %, 49.0 %] | 0.50 | 3.0 | 15 | 40 |" in section
    assert "| kitchen | mallvi | sim-oracle | 0/2 = 0.0 %" in section.split("### per setting")[1]


def test_one_agent_has_no_side_by_side_table(tmp_path):
    files = write_report(_database(tmp_path), tmp_path / "out")
    assert "Agent designs side by side" not in files.markdown.read_text()
