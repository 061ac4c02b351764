"""What ``agentic-env predict check`` prints for a prediction's newest finished run, named by
its revision after a plain warning when the newest revision's run did not finish or never
started (:func:`unscored`): every paper row's two-sided verdict with time and tokens, the
arithmetic baselines (the pre-registered one of the run's own calls among them) and what the
simulation adds, per table whether the simulation beats the arithmetic under the
noise-matched, paired comparison (:mod:`agentic_env.reports.noise_matched`), the target
table's rows (:mod:`agentic_env.reports.targets`), why a baseline does not apply, the first
failing module of the AgenticLab episodes (Fig. 5's shape) and the sweep's findings, all read
from the run's results database; before them, whether the database, its rows' k/n and the
scoring code are still those the run recorded (:mod:`agentic_env.reports.run_record`)."""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from typing import Any

from agentic_env.harness import findings, paper_tables
from agentic_env.reports import provenance, run_record
from agentic_env.reports.ledger import Entry, Prediction, Run, scoring_digest
from agentic_env.reports.paper_section import baseline_scores, matched
from agentic_env.reports.report import read_results
from agentic_env.reports.target_section import breakdown_lines, matched_lines, target_lines
from agentic_env.reports.targets import compare, target_for


def latest_run(prediction: Prediction) -> tuple[Entry, Run] | None:
    """The newest finished run of ``prediction`` and the entry it ran under (``None``: no
    run finished)."""
    for entry in reversed(prediction.entries):
        finished = [run for run in entry.runs if run.complete]
        if finished:
            return entry, finished[-1]
    return None


def unscored(prediction: Prediction) -> list[str]:
    """Lines saying plainly what :func:`latest_run` leaves out, with what to do: the newest
    revision's last run did not finish (killed, or still running), or the newest revision
    was never run while an older one was (even a run that did not finish); then, when no
    run of any revision finished, that nothing can be scored (empty: the newest revision's
    last run finished, or nothing was ever run)."""
    current, again = prediction.current, f"agentic-env predict run {prediction.id}"
    lines: list[str] = []
    if current.runs and not current.runs[-1].complete:
        run = current.runs[-1]
        lines.append(f"REVISION {current.revision}'S RUN IS INCOMPLETE (started {run.at}, "
                     f"{run.db}: killed, or still running): finish it with '{again}' (the "
                     "sweep resumes where it stopped)")
    elif not current.runs and any(entry.runs for entry in prediction.entries):
        lines.append(f"REVISION {current.revision} WAS NEVER RUN: run it with '{again}'")
    if lines and latest_run(prediction) is None:
        lines.append("nothing to score: no run of any revision finished")
    return lines


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ci(interval: tuple[float, float] | None) -> str:
    return f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else ""


def _verdict(agrees: bool | None) -> str:
    return {True: "agree", False: "DISAGREE", None: "–"}[agrees]


def _table_lines(comparison: paper_tables.Comparison, episodes: Sequence[dict[str, Any]]
                 ) -> list[str]:
    lines = [f"target: {comparison.table.source}"]
    for c in comparison.rows:
        d = c.two_sided
        diff = (f", difference {100 * d.difference:+.0f} [{100 * d.low:+.0f}, "
                f"{100 * d.high:+.0f}] points, Fisher p {d.p_value:.2f}" if d else "")
        verdict = d.describe() if d else _verdict(c.agrees)
        lines.append(
            f"  {c.row.label}: paper {100 * c.row.success:.0f} %, simulation {c.successes}/"
            f"{c.n}{diff}: {verdict} (Wilson: {_verdict(c.wilson_agrees)}); "
            f"time s {_fmt(c.row.time_s, 0)} / {_fmt(c.time_s, 0)} {_verdict(c.time_agrees)}"
            f"; tokens {_fmt(c.row.tokens, 0)} / {_fmt(c.tokens, 0)} "
            f"{_verdict(c.tokens_agree)}")
    lines.append(f"  rho {_fmt(comparison.spearman)}{_ci(comparison.spearman_ci)}, MMRV "
                 f"{_fmt(comparison.mmrv)}{_ci(comparison.mmrv_ci)} (95 % bootstrap over "
                 "both samples)")
    _, scores, adds = baseline_scores(comparison, episodes)
    lines += [f"  {s.name}: rows {s.rows}, rho {_fmt(s.spearman)}, MMRV {_fmt(s.mmrv)}, "
              f"MAE {_fmt(s.mae)}" for s in scores]
    lines += [f"  {line}" for line in matched_lines(comparison.table.source,
                                                    matched(comparison, episodes))]
    return lines + ([f"  {adds}"] if adds else [])


def scorecard(root: pathlib.Path, prediction: Prediction, scoring: str | None = None
              ) -> list[str]:
    """Lines scoring ``prediction``'s newest finished run (a line saying why when it
    cannot), after the :func:`unscored` lines; the run's revision is named, in capitals when
    it is not the newest revision's newest run; ``scoring``: the scoring code's digest now
    (computed when not given), checked against the one the run was scored with."""
    found, lines = latest_run(prediction), unscored(prediction)
    if found is None:
        return lines or [f"not run yet: run it with 'agentic-env predict run {prediction.id}'"]
    entry, run = found
    db = pathlib.Path(run.db) if pathlib.Path(run.db).is_absolute() else root / run.db
    current = prediction.current
    if entry.revision != current.revision:
        head = (f"SCORING REVISION {entry.revision}'S RUN ({run.at}), not revision "
                f"{current.revision}'s (the newest): {run.db}")
    elif lines:
        head = f"SCORING REVISION {entry.revision}'S EARLIER RUN ({run.at}): {run.db}"
    else:
        head = f"newest run (revision {entry.revision}, {run.at}): {run.db}"
    lines.append(head)
    if not db.is_file():
        rerun = (f": rerun with 'agentic-env predict run {prediction.id}'"
                 if entry.revision == current.revision else "")
        return [*lines, "  its results database is not in this checkout (runs/ is not kept "
                        f"in git){rerun}"]
    db_sha256 = provenance.file_sha256(db)  # before reading it (opening may migrate it)
    rows, calls, table, paper = read_results(db)
    target = target_for(root, prediction.id)
    lines += ["  " + line for line in run_record.verify_lines(
        run, db_sha256, run_record.row_counts(rows, table, target),
        scoring or scoring_digest(root))]
    if table is not None:
        lines += _table_lines(paper_tables.compare(table, rows, prediction.paper_trials), rows)
    if target is not None:
        lines += target_lines(compare(target, rows))
        lines += breakdown_lines(target, rows, calls)
    if table is None and target is None:
        lines.append("no target table: this prediction is scored by its findings alone")
    for verdict in findings.check(paper, rows):
        lines.append(f"  finding {verdict.finding.id}: {verdict.label} ({verdict.measured})")
    return lines
