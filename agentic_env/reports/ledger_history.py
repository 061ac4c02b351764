"""The predictions ledger's history as text lines (:mod:`agentic_env.reports.ledger`): every
entry with what it recorded (the files hashed, the whole tree, the commit and dirty flag),
every run with its provenance (commit, code changed under it, the database's SHA-256, the
rows' k/n, the scoring code, whether its freeze was committed first) and the annotations
appended since; what an older file did not record reads "not recorded"."""

from __future__ import annotations

from agentic_env.reports.ledger import NOT_RECORDED, SEEN_BEFORE, Prediction, Run


def _short(value: str | None) -> str:
    return NOT_RECORDED if value is None else value[:12]


def history(prediction: Prediction) -> list[str]:
    """One line per entry and run (with what each recorded, in brackets), oldest first,
    then the annotations, for reports and ``predict check``."""
    lines = ([f"TARGET SEEN BEFORE THE FIRST FREEZE: {prediction.seen_before}"]
             if prediction.seen_before else [])
    for entry in prediction.entries:
        annotated = prediction.seen_annotation(entry.revision)
        mark = ""
        if entry.after_target or annotated is not None:
            mark = (" FROZEN AFTER SEEING THE TARGET" if entry.revision == 1
                    else " REVISED AFTER SEEING THE TARGET")
            if not entry.after_target and annotated is not None:
                mark += f" (annotated {annotated.at}; not marked when frozen)"
        tree = (f"whole tree hashed ({len(entry.tree)} folders)" if entry.tree is not None
                else f"whole tree {NOT_RECORDED}")
        git = ("" if entry.commit is None and entry.tree is None
               else f", commit {_short(entry.commit)}" + (" DIRTY" if entry.dirty else ""))
        lines.append(f"revision {entry.revision}, frozen {entry.frozen_at}{mark}: "
                     f"{entry.reason} ({len(entry.hashes)} files hashed; {tree}{git})")
        for run in entry.runs:
            lines.append(f"  run {'' if run.complete else 'started '}{run.at} -> {run.db}: "
                         f"{run.summary} [{run_provenance(run)}]")
    lines += [f"ANNOTATED {a.at}: revision{'s' if len(a.revisions) > 1 else ''} "
              f"{', '.join(map(str, a.revisions))} frozen after the target was seen: {a.note}"
              for a in prediction.annotations if a.kind == SEEN_BEFORE]
    return lines


def run_provenance(run: Run) -> str:
    """One line of what ``run`` recorded: commit and dirty flag, code changed under it, the
    database's SHA-256, its rows' k/n, the scoring code, whether its freeze was committed."""
    if run.commit is None and run.tree is None and run.db_sha256 is None:
        return f"provenance {NOT_RECORDED} (commit, tree, database digest, k/n)"
    parts = [f"commit {_short(run.commit)}" + (" DIRTY" if run.dirty else "")]
    if run.code_changed:
        parts.append(f"CODE CHANGED DURING THE RUN (tree {run.tree} -> {run.tree_after})")
    elif run.code_changed is None:
        parts.append(f"code during the run {NOT_RECORDED}")
    parts.append(f"db sha256 {_short(run.db_sha256)}")
    parts.append(f"{len(run.counts)} rows' k/n" if run.counts is not None
                 else f"k/n {NOT_RECORDED}")
    parts.append(f"scoring code {_short(run.scoring)}")
    if run.freeze_committed is False:
        parts.append("FREEZE NOT COMMITTED BEFORE THE RUN")
    return ", ".join(parts)
