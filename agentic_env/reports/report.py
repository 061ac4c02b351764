"""``agentic-env report DB --out DIR``: a results database as HTML and Markdown.

The report is built once as a list of blocks (headings, paragraphs, tables, figures, code)
and rendered twice: ``report.html`` is self-contained (figures embedded as PNG data URIs),
``report.md`` links the same figures saved under ``plots/``. Links to episode traces
(``TRACE/index.html``) and videos (``TRACE/video.mp4``) are relative to the output folder
and appear only for files that exist.
"""

from __future__ import annotations

import base64
import html
import json
import os
import pathlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from agentic_env.errors import InvalidConfigError
from agentic_env.harness import findings, paper_tables
from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.findings import Finding, parse_findings
from agentic_env.harness.interventions import format_table, intervention_rows
from agentic_env.harness.paper_tables import PaperTable, parse_paper_table
from agentic_env.reports import metrics, plots
from agentic_env.reports.blocks import Block, Cell, Code, Figure, Heading, Link, Para, Table
from agentic_env.reports.ledger import Prediction
from agentic_env.reports.measurements import measurement_blocks
from agentic_env.reports.objects import object_blocks
from agentic_env.reports.paper_section import ledger_blocks, paper_table_section
from agentic_env.reports.target_section import target_blocks
from agentic_env.reports.targets import TargetTable
from agentic_env.reports.targets import compare as compare_target
from agentic_env.text import safe_text


@dataclass(frozen=True)
class ReportFiles:
    """What :func:`write_report` wrote.

    Attributes:
        html: the self-contained HTML report.
        markdown: the Markdown report.
        figures: PNG files under ``plots/``.
    """

    html: pathlib.Path
    markdown: pathlib.Path
    figures: tuple[pathlib.Path, ...]


def write_report(db_path: str | pathlib.Path, out_dir: str | pathlib.Path,
                 prediction: Prediction | None = None, target: TargetTable | None = None
                 ) -> ReportFiles:
    """Read ``db_path`` and write ``report.html``, ``report.md`` and ``plots/*.png``; with
    the ``prediction`` it ran for, its paper trials and ledger history too, and with its
    ``target`` table (:mod:`agentic_env.reports.targets`) that table scored."""
    db = pathlib.Path(db_path)
    if not db.is_file():
        raise InvalidConfigError(f"results database {str(db)!r} does not exist; run "
                                 "'agentic-env sweep FILE --db PATH' first")
    out = pathlib.Path(out_dir)
    with ResultStore(db) as store:
        episodes, calls, instances = store.episodes(), store.calls(), store.module_instances()
        paper = parse_findings(store.meta("paper_findings"))
        table = parse_paper_table(store.meta("paper_table"))
        measured = store.measurements()
    blocks = build_blocks(episodes, calls, instances, out, paper, table, prediction, target,
                          measured)
    title = f"Benchmark report: {db.name}"
    figure_dir = out / "plots"
    figure_dir.mkdir(parents=True, exist_ok=True)
    figures = []
    for block in blocks:
        if isinstance(block, Figure):
            path = figure_dir / f"{block.name}.png"
            path.write_bytes(block.png)
            figures.append(path)
    html_path, md_path = out / "report.html", out / "report.md"
    html_path.write_text(safe_text(render_html(title, blocks), None))
    md_path.write_text(safe_text(render_markdown(title, blocks), None))
    return ReportFiles(html=html_path, markdown=md_path, figures=tuple(figures))


def prediction_summary(db_path: str | pathlib.Path, paper_trials: int | None = None,
                       target: TargetTable | None = None) -> str:
    """One line of what a prediction's run gave: agreeing rows, ρ and MMRV against the
    sweep's paper table or the prediction's ``target`` table, the findings that agree, and
    the episodes that succeeded."""
    rows, _, table, paper = read_results(db_path)

    def show(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    parts = []
    if table is not None:
        comparison = paper_tables.compare(table, rows, paper_trials)
        agree = sum(c.agrees is True for c in comparison.rows)
        measured = sum(c.n > 0 for c in comparison.rows)
        parts.append(f"{agree}/{measured} rows agree, rho {show(comparison.spearman)}, "
                     f"MMRV {show(comparison.mmrv)}")
    if target is not None and any(r.success is not None for r in target.rows):
        scored = compare_target(target, rows)
        verdicts = [r.agrees for r in scored.rows if r.agrees is not None]
        parts.append(f"{target.id}: {sum(v is True for v in verdicts)}/{len(verdicts)} rows "
                     f"agree, rho {show(scored.scores[0].spearman)}, "
                     f"MAE {show(scored.scores[0].mae)}")
    if paper:
        verdicts = findings.check(paper, rows)
        parts.append(f"{sum(v.agrees is True for v in verdicts)}/{len(verdicts)} findings agree")
    won = sum(bool(r["success"]) for r in rows)
    return ", ".join([*parts, f"{won}/{len(rows)} episodes succeeded"])


def read_results(db_path: str | pathlib.Path) -> tuple[list[dict[str, Any]],
                                                       list[dict[str, Any]],
                                                       PaperTable | None, list[Finding]]:
    """A results database's episode rows as the report sees them (with ``agent_options``,
    ``world`` and per-module call counts), its calls, its paper table and findings.

    Raises:
        InvalidConfigError: the database does not exist.
    """
    db = pathlib.Path(db_path)
    if not db.is_file():
        raise InvalidConfigError(f"results database {str(db)!r} does not exist")
    with ResultStore(db) as store:
        episodes, calls = store.episodes(), store.calls()
        table = parse_paper_table(store.meta("paper_table"))
        paper = parse_findings(store.meta("paper_findings"))
    return _enrich(episodes, calls), calls, table, list(paper)


def _enrich(episodes: Sequence[dict[str, Any]], calls: Sequence[dict[str, Any]]
            ) -> list[dict[str, Any]]:
    per_episode: dict[str, Counter[str]] = {}
    for call in calls:
        per_episode.setdefault(call["episode_key"], Counter())[call["module"]] += 1
    rows = []
    for row in episodes:
        spec = EpisodeSpec.from_dict(json.loads(row["spec_json"]))
        rows.append({**row, "injected": metrics.injected_errors(spec.model, spec.module_models()),
                     "agent_options": options_label(spec.options()), "world": spec.realism,
                     "module_calls": per_episode.get(row["key"], Counter())})
    return rows


def options_label(options: dict[str, Any]) -> str:
    """The agent-options column of reports: ``default`` or ``key=value`` pairs (JSON values)."""
    if not options:
        return "default"
    return ",".join(f"{key}={json.dumps(value)}" for key, value in sorted(options.items()))


def build_blocks(episodes: Sequence[dict[str, Any]], calls: Sequence[dict[str, Any]],
                 instances: Sequence[dict[str, Any]], out_dir: pathlib.Path,
                 paper: Sequence[Finding] = (),
                 table: PaperTable | None = None, prediction: Prediction | None = None,
                 target: TargetTable | None = None,
                 measurements: Sequence[dict[str, Any]] = ()) -> list[Block]:
    """The report's content from database rows (see :class:`ResultStore`), the sweep's
    paper findings and paper table, if it had any, the ledger's prediction it ran for,
    that prediction's target table and the measurement benchmarks' rows
    (:mod:`agentic_env.reports.measurements`)."""
    rows = _enrich(episodes, calls)
    paper_trials = prediction.paper_trials if prediction else None
    blocks: list[Block] = [Para(_overview(rows) if rows or not measurements else
                                "The database holds measurements, no episodes.")]
    if table is not None:
        blocks += paper_table_section(paper_tables.compare(table, rows, paper_trials),
                                      calls, rows, prediction)
    elif prediction is not None:
        blocks += ledger_blocks(prediction)
    if target is not None:
        blocks += target_blocks(compare_target(target, rows), rows, calls)
    if paper:
        blocks += _paper_section(paper, rows)
    if rows:
        blocks += _success_section(rows) + _failure_section(rows) + _ablation_section(rows)
        blocks += _options_section(rows) + _agents_section(rows) + _compounding_section(rows)
        blocks += _intervention_section(rows) + _verdict_section(calls, rows)
        blocks += object_blocks(rows)
    if calls:
        blocks += _calls_section(calls)
    if instances:
        blocks += _module_section(instances)
    blocks += measurement_blocks(measurements)
    if rows:
        blocks += _episodes_section(rows, out_dir)
    return blocks


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def _ci(stats: metrics.GroupStats) -> str:
    return (f"{stats.successes}/{stats.n} = {_pct(stats.success_rate)} "
            f"[{_pct(stats.ci_low)}, {_pct(stats.ci_high)}]")


def _cost(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


def _overview(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "The database holds no episodes yet."
    overall = metrics.group_stats([{**r, "all": "all"} for r in rows], ("all",))[0]
    hours = sum(float(r["wall_s"] or 0.0) for r in rows) / 3600
    tokens = sum(int(r["input_tokens"] or 0) + int(r["output_tokens"] or 0) for r in rows)
    return (f"{overall.n} episodes: success {_ci(overall)}, mean progress score "
            f"{overall.mean_score:.2f}, {overall.errors} crashed (errors, counted as "
            "failures). Episode time "
            f"{hours:.2f} h in all, {tokens:,} model tokens. Success is the task's goal checked "
            "on the simulator's ground truth; intervals are 95 % Wilson score intervals; the "
            "progress score is AgenticLab's (N_done − N_extra)/N − 0.1·p (0..1); a failed "
            "episode is attributed to the first module (or execution) that failed. "
            f"Generated {datetime.now(UTC).isoformat(timespec='seconds')}.")


def _success_section(rows: Sequence[dict[str, Any]]) -> list[Block]:
    stats = metrics.group_stats(rows, ("task", "setting", "model"))
    table = Table(("task", "setting", "model", "success [95 % CI]", "score ± std",
                   "episode s", "tokens", "cost"),
                  tuple((*map(str, s.group), _ci(s), f"{s.mean_score:.2f} ± {s.std_score:.2f}",
                         f"{s.mean_episode_s:.1f}", f"{s.mean_tokens:,.0f}",
                         _cost(s.mean_cost_usd)) for s in stats))
    per_model = metrics.group_stats(rows, ("model",))
    table_one = Table(("model", "success [95 % CI]", "score", "episode s", "tokens", "cost"),
                      tuple((str(s.group[0]), _ci(s), f"{s.mean_score:.2f}",
                             f"{s.mean_episode_s:.1f}", f"{s.mean_tokens:,.0f}",
                             _cost(s.mean_cost_usd)) for s in per_model))
    return [Heading("Success and progress by task, setting and model"),
            Para("Episode s: the episode's time as on the real robot, robot motion plus model "
                 "time (an emulated model's is virtual: its profile's seconds per call)."),
            table,
            Figure("success", plots.success_plot(stats),
                   "Bars: success rate with 95 % Wilson interval (top), mean progress score "
                   "± std (bottom), per task and setting, one colour per model."),
            Heading("Per model (shaped like the paper's Table I)", 3), table_one]


def _failure_section(rows: Sequence[dict[str, Any]]) -> list[Block]:
    blocks: list[Block] = [Heading("Failure modes (first failing module)"),
                           Para("Counts of failed episodes by the first module that failed: "
                                "parser, detector, grasp (planner), checker (action checker), "
                                "goal (goal checker), execution (a primitive), limits (action, "
                                "replan or time limit), error (the episode crashed).")]
    by_model = metrics.failure_breakdown(rows, ("model",))
    if any(sum(c.values()) for c in by_model.values()):
        blocks.append(Figure("failures", plots.failure_plot(by_model, "Failed episodes by "
                                                            "first failing module, per model"),
                             "Stacked: failed episodes per model by first failing module "
                             "(like the paper's Fig. 5)."))
    for column in ("task", "setting", "model", "verification", "disturbance", "world"):
        breakdown = metrics.failure_breakdown(rows, (column,))
        if len(breakdown) < 2 and column != "model":
            continue
        sources = [s for s in next(iter(breakdown.values()))
                   if any(c[s] for c in breakdown.values())]
        totals = metrics.group_stats(rows, (column,))
        blocks += [Heading(f"by {column}", 3), Table(
            (column, "episodes", "failed", *sources),
            tuple((str(s.group[0]), str(s.n), str(s.n - s.successes),
                   *(str(breakdown[s.group][src]) for src in sources)) for s in totals))]
    return blocks


def _paper_section(paper: Sequence[Finding], rows: Sequence[dict[str, Any]]
                   ) -> list[Block]:
    verdicts = findings.check(paper, rows)
    counts = Counter(v.label for v in verdicts)
    summary = ", ".join(f"{counts[k]} {k}" for k in ("agree", "disagree", "no data") if counts[k])
    return [Heading("The paper beside the simulation"),
            Para(f"Each finding as the paper reports it, and the same trend measured on this "
                 f"sweep's episodes: {summary}."),
            Table(("finding", "source", "paper", "simulation", "verdict"),
                  tuple((v.finding.id, v.finding.source, v.finding.claim, v.measured,
                         v.label.upper() if v.agrees is False else v.label)
                        for v in verdicts))]


def _ablation_section(rows: Sequence[dict[str, Any]]) -> list[Block]:
    if len({r["verification"] for r in rows}) < 2:
        return []
    stats = metrics.group_stats(rows, ("task", "disturbance", "verification"))
    return [Heading("Verification ablation (score vs time)"),
            Para("Verification modes of the paper's section VI-D: none (no checks), goal "
                 "(goal checker only), full (action pre/effect checks and the goal checker)."),
            Table(("task", "disturbance", "verification", "n", "score ± std",
                   "episode s ± std", "model s", "success"),
                  tuple((*map(str, s.group), str(s.n),
                         f"{s.mean_score:.2f} ± {s.std_score:.2f}",
                         f"{s.mean_episode_s:.1f} ± {s.std_episode_s:.1f}",
                         f"{s.mean_model_s:.1f}", _pct(s.success_rate))
                        for s in stats)),
            Figure("ablation", plots.ablation_plot(stats),
                   "Mean progress score against mean episode time (robot motion + model "
                   "time) per verification mode and disturbance (± std; like the paper's "
                   "Fig. 7).")]


def _intervention_section(rows: Sequence[dict[str, Any]]) -> list[Block]:
    """The intervention table per model: perfect models alone, models with injected
    errors together (their success spread over the models is ``std(rep)``)."""
    measured = [SimpleNamespace(success=r["success"], intervention=r["intervention"],
                                model=r["model"]) for r in rows if r.get("intervention")]
    if not measured:
        return []
    blocks: list[Block] = [
        Heading("Interventions"),
        Para("Per trial kind: success (recovery) rate, e-stop compliance (no motion request "
             "while the e-stop was known to be on), refusal rate of impossible instructions, "
             "share of planner rounds that only talked, event-check compliance, stale "
             "placements and motions per episode; std(rep): the std of the success rate "
             "over the models with injected errors (one error seed each).")]
    perfect = [m for m in measured if "?" not in m.model]
    noisy = [m for m in measured if "?" in m.model]
    runs = [[m for m in noisy if m.model == model] for model in sorted({m.model for m in noisy})]
    for label, group, repeats in (("perfect models", perfect, []),
                                  ("models with injected errors", noisy, runs)):
        if group:
            blocks.append(Code(label, format_table(intervention_rows(group, repeats))))
    return blocks


def _options_section(rows: Sequence[dict[str, Any]]) -> list[Block]:
    if len({r["agent_options"] for r in rows}) < 2:
        return []
    stats = metrics.group_stats(rows, ("task", "agent", "agent_options", "model"))
    return [Heading("Agent-options ablation"),
            Para("Each agent switch set (agent options; default = the agent as published) "
                 "on the same tasks, models and seeds."),
            Table(("task", "agent", "agent options", "model", "success [95 % CI]",
                   "score ± std", "episode s"),
                  tuple((*map(str, s.group), _ci(s),
                         f"{s.mean_score:.2f} ± {s.std_score:.2f}", f"{s.mean_episode_s:.1f}")
                        for s in stats))]


def _agents_section(rows: Sequence[dict[str, Any]]) -> list[Block]:
    """The agent designs side by side under the same models (two or more agents)."""
    if len({r["agent"] for r in rows}) < 2:
        return []
    headers = ("success [95 % CI]", "score", "model calls", "model s", "robot s", "tokens")

    def cells(s: metrics.GroupStats) -> tuple[str, ...]:
        return (_ci(s), f"{s.mean_score:.2f}", f"{s.mean_calls:.1f}", f"{s.mean_model_s:.0f}",
                f"{s.mean_sim_s:.0f}", f"{s.mean_tokens:,.0f}")

    by_setting = metrics.group_stats(rows, ("setting", "agent", "model"))
    return [Heading("Agent designs side by side"),
            Para("Each agent design under the same models, tasks and seeds: success, progress "
                 "score, and per episode the model calls, model time (an emulated model's is "
                 "virtual: its profile's seconds per call), robot motion time and tokens."),
            Table(("agent", "model", *headers),
                  tuple((*map(str, s.group), *cells(s))
                        for s in metrics.group_stats(rows, ("agent", "model")))),
            Heading("per setting", 3),
            Table(("setting", "agent", "model", *headers),
                  tuple((*map(str, s.group), *cells(s)) for s in by_setting))]


def _verdict_section(calls: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]]
                     ) -> list[Block]:
    scores = metrics.verdict_scores(calls, rows)
    if not scores:
        return []

    def rate(value: float | None) -> str:
        return "–" if value is None else _pct(value)

    return [Heading("Judging modules against the simulator's truth"),
            Para("Every verdict of a judging module (MALLVI's Reflector: is the move "
                 "complete?; AgenticLab's action checker: do the conditions hold?; its goal "
                 "checker: is the task done?) is compared with the simulator's truth at the "
                 "moment it was given. Positive = \"true\" (complete / holding / done). A "
                 "false positive waves a failed move "
                 "through (the dangerous error: nothing retries it); a false negative costs "
                 "a needless retry. Precision = TP/(TP+FP), recall = TP/(TP+FN)."),
            Table(("module", "task", "model", "verdicts", "TP", "FP", "FN", "TN",
                   "precision", "recall", "false positive rate"),
                  tuple((s.module, *map(str, s.group), str(s.n), str(s.tp), str(s.fp),
                         str(s.fn), str(s.tn), rate(s.precision), rate(s.recall),
                         rate(s.false_positive_rate)) for s in scores))]


def _compounding_section(rows: Sequence[dict[str, Any]]) -> list[Block]:

    points = metrics.compounding_curve(rows)
    if not any(p.error_rate > 0 for p in points):
        return []
    return [Heading("Compounding under injected module error"),
            Para("Error rates are read from the model spec (e.g. sim-oracle?checker=0.3: each "
                 "checker answer is wrong with probability 0.3). Predicted: the success at "
                 "rate 0 times (1 − e)^k, k = mean calls to the module per error-free episode "
                 "— what independent errors with no recovery would give (the paper's 0.9^6 "
                 "argument); observed success above it is recovery (retries, replans)."),
            Table(("module", "verification", "error rate", "n", "success [95 % CI]",
                   "score", "calls/episode", "predicted"),
                  tuple((p.module, p.verification, f"{p.error_rate:.2f}", str(p.n),
                         f"{_pct(p.success_rate)} [{_pct(p.ci_low)}, {_pct(p.ci_high)}]",
                         f"{p.mean_score:.2f}", f"{p.mean_calls:.1f}", _pct(p.predicted))
                        for p in points)),
            Figure("compounding", plots.compounding_plot(points),
                   "Success against injected error rate; dashed: independent-error "
                   "prediction.")]


def _calls_section(calls: Sequence[dict[str, Any]]) -> list[Block]:
    stats = metrics.call_stats(calls)
    return [Heading("Model calls"),
            Table(("module", "model", "calls", "latency s", "tokens in", "tokens out",
                   "failed", "verdicts"),
                  tuple((s.module, s.model, str(s.n), f"{s.mean_latency_s:.3f}",
                         f"{s.mean_input_tokens:,.0f}", f"{s.mean_output_tokens:,.0f}",
                         _pct(s.error_rate),
                         ", ".join(f"{k}: {v}" for k, v in sorted(s.verdicts.items())))
                        for s in stats))]


#: Table II column order and headings.
_TABLE_TWO = (("parser", "Task parser"), ("checker", "Action checker"),
              ("detector", "Object detector"), ("grasp", "Grasp planner"),
              ("goal", "Goal checker"))


def _module_section(instances: Sequence[dict[str, Any]]) -> list[Block]:
    scores = {(s.model, s.module): s for s in metrics.module_table(instances)}
    models = sorted({model for model, _ in scores})
    headers: list[str] = ["model"]
    for module, name in _TABLE_TWO:
        headers += [f"{name} SR", f"{name} time s"]
        if module == "detector":
            headers.insert(len(headers) - 1, "Object detector box IoU")
    rows = []
    for model in models:
        row: list[Cell] = [model]
        for module, _ in _TABLE_TWO:
            s = scores.get((model, module))
            cells = ([f"{_pct(s.success_rate)} (n={s.n})", f"{s.mean_latency_s:.2f}"]
                     if s else ["–", "–"])
            if module == "detector":
                iou = "–" if s is None or s.mean_metric is None else _pct(s.mean_metric)
                cells.insert(1, iou)
            row += cells
        rows.append(tuple(row))
    return [Heading("Module benchmark (shaped like the paper's Table II)"),
            Para("Each module is asked in isolation on instances generated from simulator "
                 "rollouts and graded against ground truth: task parser (its PDDL's plan "
                 "reaches the true goal), action checker (verdict vs true predicates), object "
                 "detector (point inside the true mask; box IoU with the true box), grasp "
                 "planner (verdict vs simulated grasp outcome), goal checker (verdict vs true "
                 "success). SR: success rate; time: mean latency per call."),
            Table(tuple(headers), tuple(rows))]


def _episode_links(row: dict[str, Any], out_dir: pathlib.Path) -> tuple[Cell, Cell]:
    trace = row["trace_dir"]
    if not trace:
        return row["key"], ""
    index, video = pathlib.Path(trace, "index.html"), pathlib.Path(trace, "video.mp4")
    key: Cell = (Link(row["key"], _relative(index, out_dir)) if index.is_file()
                 else row["key"])
    return key, Link("video", _relative(video, out_dir)) if video.is_file() else ""


def _relative(path: pathlib.Path, out_dir: pathlib.Path) -> str:
    return pathlib.Path(os.path.relpath(path.resolve(), out_dir.resolve())).as_posix()


def _episodes_section(rows: Sequence[dict[str, Any]], out_dir: pathlib.Path) -> list[Block]:
    table_rows = []
    for r in rows:
        key, video = _episode_links(r, out_dir)
        table_rows.append((key, r["task"], r["setting"], r["model"], r["verification"],
                           r["disturbance"], r["instruction_category"] or "default",
                           str(r["seed"]), "yes" if r["success"] else "no", f"{r['score']:.2f}",
                           f"{float(r['wall_s'] or 0):.1f}", str(r["actions"]),
                           str(r["replans"]), r["failure"] or "", (r["failure_detail"] or "")[:160],
                           video))
    blocks: list[Block] = [
        Heading("Episodes"),
        Para("The key links to the episode's step-by-step trace when one was written."),
        Table(("episode", "task", "setting", "model", "verification", "disturbance",
               "instruction", "seed", "success", "score", "time s", "actions", "replans",
               "failure", "detail", "video"), tuple(table_rows))]
    errors = [r for r in rows if r["error"]]
    if errors:
        blocks.append(Heading("Crashed episodes", 3))
        blocks += [Code(f"{r['key']} ({r['task']}, {r['model']}, seed {r['seed']}): "
                        f"{r['failure_detail']}", r["error"]) for r in errors]
    return blocks


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;
color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.88em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0}tr:nth-child(even) td{background:#fafafa}
figure{margin:1em 0}figcaption{color:#555;font-size:.9em}img{max-width:100%}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.82em}
details{margin:.3em 0}
"""


def _html_cell(cell: Cell) -> str:
    if isinstance(cell, Link):
        return f'<a href="{html.escape(cell.href)}">{html.escape(cell.text)}</a>'
    return html.escape(cell)


def render_html(title: str, blocks: Sequence[Block]) -> str:
    """Self-contained HTML (figures as PNG data URIs)."""
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif isinstance(block, Para):
            parts.append(f"<p>{html.escape(block.text)}</p>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{html.escape(h)}</th>" for h in block.headers)
            body = "".join("<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in row) + "</tr>"
                           for row in block.rows)
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif isinstance(block, Figure):
            data = base64.b64encode(block.png).decode("ascii")
            parts.append(f'<figure><img alt="{html.escape(block.caption)}" '
                         f'src="data:image/png;base64,{data}"><figcaption>'
                         f"{html.escape(block.caption)}</figcaption></figure>")
        else:
            parts.append(f"<details><summary>{html.escape(block.summary)}</summary>"
                         f"<pre>{html.escape(block.text)}</pre></details>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _md_cell(cell: Cell) -> str:
    if isinstance(cell, Link):
        return f"[{_md_escape(cell.text)}]({cell.href.replace(' ', '%20')})"
    return _md_escape(cell)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(title: str, blocks: Sequence[Block]) -> str:
    """Markdown (figures linked from ``plots/``)."""
    parts = [f"# {title}"]
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"{'#' * block.level} {block.text}")
        elif isinstance(block, Para):
            parts.append(block.text)
        elif isinstance(block, Table):
            lines = ["| " + " | ".join(map(_md_escape, block.headers)) + " |",
                     "|" + "---|" * len(block.headers)]
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
            parts.append("\n".join(lines))
        elif isinstance(block, Figure):
            parts.append(f"![{block.caption}](plots/{block.name}.png)\n\n*{block.caption}*")
        else:
            parts.append(f"**{block.summary}**\n\n```\n{block.text}\n```")
    return "\n\n".join(parts) + "\n"
