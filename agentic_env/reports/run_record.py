"""What a prediction's run records and what ``predict check`` verifies against it
(:mod:`agentic_env.reports.ledger`): the rows' k/n it was scored on, its results database's
SHA-256 and the scoring code's digest.

:func:`row_counts` gives the k/n of each paper row (the sweep's paper table or the
prediction's target table; else of each model); :func:`verify_lines` says, for a run whose
database is at hand, whether the database, its k/n and the scoring code are still those the
run was recorded with, and "not recorded" for what an older run lacks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentic_env.harness.paper_tables import PaperTable, row_episodes
from agentic_env.reports.ledger import NOT_RECORDED, Run
from agentic_env.reports.targets import TargetTable, target_row_episodes

#: k/n by row label.
Counts = dict[str, tuple[int, int]]


def row_counts(rows: Sequence[Mapping[str, Any]], table: PaperTable | None = None,
               target: TargetTable | None = None) -> Counts:
    """Row label -> ``(successes, episodes)``: the paper table's rows, then the target
    table's (prefixed by its id when both exist), or else each ``model`` column's value."""
    counts: Counts = {}
    if table is not None:
        for row in table.rows:
            mine = row_episodes(table, row, rows)
            counts[row.label] = (sum(bool(e.get("success")) for e in mine), len(mine))
    if target is not None:
        prefix = f"{target.id}: " if table is not None else ""
        for trow in target.rows:
            mine = target_row_episodes(trow, rows)
            counts[prefix + trow.label] = (sum(bool(e.get("success")) for e in mine), len(mine))
    if table is None and target is None:
        for model in sorted({str(e.get("model")) for e in rows}):
            mine = [e for e in rows if str(e.get("model")) == model]
            counts[model] = (sum(bool(e.get("success")) for e in mine), len(mine))
    return counts


def verify_lines(run: Run, db_sha256: str, counts: Mapping[str, tuple[int, int]],
                 scoring: str) -> list[str]:
    """Lines comparing ``run``'s record with its database and the scoring code now: the
    database's SHA-256, each row's k/n, the scoring code's digest, the code under the run."""
    lines = []
    if run.code_changed:
        lines.append(f"CODE CHANGED DURING THIS RUN (tree {run.tree} at its start, "
                     f"{run.tree_after} at its end): its episodes ran on two versions")
    if run.db_sha256 is None:
        lines.append(f"database sha256: {NOT_RECORDED} (run before the ledger recorded it)")
    elif run.db_sha256 != db_sha256:
        lines.append(f"DATABASE CHANGED SINCE THE RUN: sha256 {run.db_sha256[:12]} recorded, "
                     f"{db_sha256[:12]} now")
    else:
        lines.append("database as recorded (sha256 matches)")
    if run.counts is None:
        lines.append(f"rows' k/n: {NOT_RECORDED}")
    else:
        recorded = {k: tuple(v) for k, v in run.counts.items()}
        differ = sorted(k for k in recorded.keys() | counts.keys()
                        if recorded.get(k) != counts.get(k))
        lines.append("ROWS' K/N DIFFER FROM THE RUN'S RECORD: " + "; ".join(
            f"{k} {_kn(recorded.get(k))} recorded, {_kn(counts.get(k))} now" for k in differ)
            if differ else f"every row's k/n as recorded ({len(recorded)} rows)")
    if run.scoring is None:
        lines.append(f"scoring code: {NOT_RECORDED}; the figures below are today's code's")
    elif run.scoring != scoring:
        lines.append(f"SCORING CODE DIFFERS FROM THE ONE THIS RUN WAS SCORED WITH "
                     f"({run.scoring} then, {scoring} now): the figures below are today's "
                     f"code's, not the run's summary's")
    else:
        lines.append("scored with the same scoring code as recorded")
    return lines


def _kn(value: tuple[int, int] | None) -> str:
    return "absent" if value is None else f"{value[0]}/{value[1]}"
