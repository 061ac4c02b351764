"""The docs site's result pages, generated from the predictions ledger.

One Markdown page per prediction of ``predictions/*.yaml`` (its target, seeds, world, the
paper's rows it is scored on from ``predictions/targets/``, every revision with its reason
and runs, the sweep file's header) and an index of them all, so no measured result is
written by hand into the docs. A run's stored report (``report.md`` beside the results
database the ledger names, as ``agentic-env predict run`` writes it) is included as it is
when this checkout holds it. :func:`write_pages` writes the pages (only files whose text
changed, so an incremental docs build stays incremental); the docs' ``conf.py`` calls it on
every build, and ``python -m agentic_env.cli.docs_pages`` does the same by hand.
"""

from __future__ import annotations

import pathlib
import re
from collections.abc import Iterable, Mapping

from agentic_env.harness.extras import require
from agentic_env.reports import ledger
from agentic_env.reports.targets import TargetTable, load_targets

#: Folder of the result pages, relative to the docs' generated folder.
RESULTS_DIR = "results"
_SPECIAL = re.compile(r"([\\`*_\[\]<>|#$~])")


def escape(text: str) -> str:
    """``text`` as literal Markdown (emphasis, code, links, HTML and table pipes escaped),
    on one line."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines + [""]


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f} %"


def _literal(text: str) -> list[str]:
    fence = "````" if "```" in text else "```"
    return [fence + "text", text.rstrip(), fence, ""]


def sweep_header(root: pathlib.Path, sweep: str) -> str:
    """The comment lines heading a sweep file, without their ``#`` (empty: no file, or none)."""
    path = root / sweep
    if not path.is_file():
        return ""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[2:] if line.startswith("# ") else line[1:])
    return "\n".join(lines)


def _target_section(table: TargetTable) -> list[str]:
    lines = ["## The paper's rows", "", f"Source: {escape(table.source)}"
             + (f"; {table.trials} trials a row." if table.trials else "."), ""]
    if table.note:
        lines += [escape(table.note), ""]
    if table.rows:
        lines += _table(("row", "model", "modules", "paper success", "trials", "time s"),
                        ((escape(r.label), f"`{r.model}`",
                          ", ".join(f"{k}=`{v}`" for k, v in r.modules) or "–",
                          _percent(r.success), str(r.trials or table.trials or "–"),
                          "–" if r.time_s is None else f"{r.time_s:g}") for r in table.rows))
    if table.baselines:
        lines += ["Arithmetic baselines the report compares the simulation with:", ""]
        lines += [f"- **{escape(b.name)}**: {escape(b.source)}" for b in table.baselines]
        lines.append("")
    return lines


def _sweep_table_section(root: pathlib.Path, sweep: str) -> list[str]:
    """The ``paper_table`` a sweep file declares, for a prediction with no target table."""
    path = root / sweep
    if not path.is_file():
        return []
    yaml = require("yaml", "harness")
    table = (yaml.safe_load(path.read_text()) or {}).get("paper_table")
    if not isinstance(table, Mapping) or not table.get("rows"):
        return []
    trials = table.get("trials")
    lines = ["## The paper's rows", "",
             f"Source: {escape(table.get('source', '?'))}"
             + (f"; {trials} trials a row" if trials else "") + f" (the `paper_table` of "
             f"`{sweep}`).", ""]

    def number(value: object, scale: float = 1.0) -> str:
        return "–" if value is None else f"{float(value) * scale:g}"  # type: ignore[arg-type]

    lines += _table(("row", "model", "modules", "paper success", "time s", "tokens"),
                    ((escape(r.get("label", "")), f"`{r.get('model', '')}`",
                      ", ".join(f"{k}=`{v}`" for k, v in (r.get("modules") or {}).items())
                      or "–", _percent(r.get("success")), number(r.get("time_s")),
                      number(r.get("tokens"))) for r in table["rows"]))
    return lines


def _after_target(prediction: ledger.Prediction, entry: ledger.Entry) -> str:
    """The "after seeing the target" cell of ``entry``: its mark when frozen, or an
    annotation appended since (:meth:`~agentic_env.reports.ledger.Prediction.after_target`)."""
    if not prediction.after_target(entry):
        return "no"
    annotated = prediction.seen_annotation(entry.revision)
    if entry.after_target or annotated is None:
        return "yes"
    return f"yes (annotated {escape(annotated.at)}; not marked when frozen)"


def prediction_page(root: pathlib.Path, prediction: ledger.Prediction,
                    target: TargetTable | None) -> str:
    """The Markdown result page of ``prediction`` (``target``: the table it is scored on)."""
    seeds = prediction.seeds
    first, count = seeds.get("start", 0), seeds.get("count", 0)
    lines = [f"# {prediction.id}", "", f"**Target:** {escape(prediction.target)}", "",
             *_table(("field", "value"), (
                 ("sweep", f"`{prediction.sweep}`"),
                 ("seeds", f"{first} – {first + count - 1} ({count})"),
                 ("world", f"`{prediction.realism}`" if prediction.realism
                  else "the sweep file's own"),
                 ("paper trials per row", str(prediction.paper_trials or "–")),
                 ("revisions", str(len(prediction.entries))))),
             "Run it as frozen, and check it for drift (a changed dependency needs a new "
             "revision first):", "", "```bash",
             f"agentic-env predict run {prediction.id} --workers 2",
             f"agentic-env predict check {prediction.id}", "```", ""]
    if prediction.seen_before:
        lines += [f"**Target seen before the first freeze:** {escape(prediction.seen_before)}",
                  ""]
    newest = next((run for entry in reversed(prediction.entries) for run in
                   reversed(entry.runs) if run.complete), None)
    lines += ["## Newest result", ""]
    if newest is None:
        lines += ["No finished run is on record yet.", ""]
    else:
        entry = next(e for e in prediction.entries if newest in e.runs)
        lines += [f"Revision {entry.revision}, run finished {escape(newest.at)}: "
                  f"**{escape(newest.summary)}**.", ""]
    lines += (_target_section(target) if target is not None
              else _sweep_table_section(root, prediction.sweep))
    lines += ["## Revisions", "",
              *_table(("revision", "frozen", "after seeing the target", "reason", "runs"),
                      ((str(e.revision), escape(e.frozen_at), _after_target(prediction, e),
                        escape(e.reason),
                        "; ".join(f"{escape(r.at)}: {escape(r.summary)}"
                                  + ("" if r.complete else " (not finished)")
                                  for r in e.runs) or "–")
                       for e in prediction.entries))]
    seen = [a for a in prediction.annotations if a.kind == ledger.SEEN_BEFORE]
    if seen:
        lines += ["Appended to the ledger since (`agentic-env predict annotate`; the entries "
                  "themselves are never rewritten):", ""]
        lines += [f"- {escape(a.at)}: revision{'s' if len(a.revisions) > 1 else ''} "
                  f"{', '.join(map(str, a.revisions))} frozen after the target was seen: "
                  f"{escape(a.note)}" for a in seen]
        lines.append("")
    header = sweep_header(root, prediction.sweep)
    if header:
        lines += ["## The sweep file", "", f"The header of `{prediction.sweep}`:", "",
                  *_literal(header)]
    if newest is not None:
        report = root / pathlib.Path(newest.db).parent / "report" / "report.md"
        if report.is_file():
            lines += ["## The stored report", "", f"`{pathlib.Path(newest.db).parent}/report/"
                      "report.md`, as the run wrote it:", "", *_literal(report.read_text())]
    return "\n".join(lines).rstrip() + "\n"


def index_page(predictions: Iterable[ledger.Prediction]) -> str:
    """The index of the result pages: one row per prediction with its newest result."""
    rows = []
    names = []
    for p in predictions:
        runs = [r for e in p.entries for r in e.runs if r.complete]
        rows.append((f"[{p.id}]({p.id}.md)", escape(p.target), str(len(p.entries)),
                     escape(runs[-1].summary) if runs else "not run yet"))
        names.append(p.id)
    lines = ["# Results", "",
             "Generated from the predictions ledger (`predictions/*.yaml`) and the target "
             "tables (`predictions/targets/*.yaml`) on every docs build: each prediction, "
             "frozen before it was run, with its newest finished run. See "
             "[the predictions ledger](../../benchmark/predictions.md) for what a revision "
             "and a two-sided verdict are.", "",
             *_table(("prediction", "target", "revisions", "newest result"), rows),
             "```{toctree}", ":hidden:", "", *names, "```"]
    return "\n".join(lines) + "\n"


def result_pages(root: pathlib.Path) -> dict[str, str]:
    """File name (relative to the results folder) -> Markdown, for every prediction under
    ``root`` and the index."""
    predictions = ledger.all_predictions(root)
    targets = load_targets(root)
    by_prediction: Mapping[str, TargetTable] = {name: t for t in targets
                                                for name in t.predictions}
    pages = {f"{p.id}.md": prediction_page(root, p, by_prediction.get(p.id))
             for p in predictions}
    pages["index.md"] = index_page(predictions)
    return pages


def write_pages(pages: Mapping[str, str], out: pathlib.Path) -> list[pathlib.Path]:
    """Write ``pages`` (name -> text) under ``out``, touching only files whose text changed,
    and remove other ``.md`` files there; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in pages.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            written.append(path)
    for stale in out.rglob("*.md"):
        if stale.relative_to(out).as_posix() not in pages:
            stale.unlink()
    return written
