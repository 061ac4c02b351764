"""The report renders: the HTML parses, figures exist and are PNGs, trace links resolve."""

from __future__ import annotations

import base64
import pathlib
from html.parser import HTMLParser

from test_harness_run import fake_episode

from agentic_env.cli.harness import report_main
from agentic_env.harness.db import Finished, ModuleInstance, ResultStore
from agentic_env.harness.execute import error_result
from agentic_env.harness.report import write_report
from agentic_env.harness.sweep import parse_sweep

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
