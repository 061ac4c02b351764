"""``agentic-env predict freeze|run|check``: the predictions ledger
(:mod:`agentic_env.reports.ledger`).

``freeze`` writes a prediction (sweep, seeds, target) with the hash of everything it depends
on, or a revision of it with its reason; ``run`` runs it only while those hashes still match
(``--revise REASON`` freezes a revision first, marked as made after seeing the target when an
earlier entry was run), records the run in the ledger and writes the report with the
prediction's history; ``check`` lists every prediction's history, what changed since its
last freeze (exit 1 when anything did) and its newest finished run scored: two-sided
verdicts, the arithmetic baselines and what the simulation adds
(:mod:`agentic_env.reports.scorecard`), named by its revision and preceded by a plain warning
when the newest revision's run did not finish (``run`` books it before it starts, so a killed
run stays on record) or the newest revision was never run. ``report`` rewrites a prediction's
newest finished run's report (its history and target table as
they stand now). ``freeze --seen-before WHERE`` marks a prediction whose target's result was
seen before it entered the ledger; ``annotate ID --seen-before WHERE --revisions N...``
appends to an existing prediction's history that those entries were frozen after their target
was seen (nothing already written changes).

``freeze`` (and ``run --revise``, and ``annotate``) commit the prediction's file alone
(``git add`` + ``git commit --only``; whatever else is staged stays staged), so the freeze is
on record in git before its run; ``--no-commit`` leaves it uncommitted, and a run then
records that its freeze was not committed. ``run`` records the commit and dirty flag, the
whole tree's digest before and after the sweep, the database's SHA-256, every row's k/n and
the scoring code's digest; ``check`` verifies them and says when the scoring code differs
from the one the run was scored with.
"""

from __future__ import annotations

import argparse
import pathlib

from agentic_env.errors import AgenticEnvError, InvalidConfigError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentic-env predict",
        description="Freeze a prediction before its first run, run it only as frozen, check "
                    "the ledger (predictions/ at the repository root).")
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path("."),
                        help="repository root holding predictions/ (default: .)")
    commands = parser.add_subparsers(dest="command", required=True)
    freeze = commands.add_parser("freeze", help="freeze a new prediction or a revision")
    freeze.add_argument("id", help="prediction id (its file: predictions/ID.yaml)")
    freeze.add_argument("--sweep", help="sweep file, relative to the root (new prediction)")
    freeze.add_argument("--seeds", metavar="START:COUNT",
                        help="seeds to run (new prediction): ones the project never used")
    freeze.add_argument("--target", help="the paper result it predicts (new prediction)")
    freeze.add_argument("--realism", default=None, help="world: ideal or realistic")
    freeze.add_argument("--paper-trials", type=int, default=None,
                        help="the paper's trials per row, for two-sided verdicts")
    freeze.add_argument("--reason", default=None, help="why (needed for a revision)")
    freeze.add_argument("--seen-before", default=None, metavar="WHERE",
                        help="new prediction whose target's result was already seen outside "
                             "the ledger (say where): every entry is marked after the target")
    freeze.add_argument("--depends", nargs="+", default=None, metavar="GLOB",
                        help="extra files it depends on (new prediction; globs relative to "
                             "the root, beside the default profiles, world and emulation)")
    freeze.add_argument("--no-commit", action="store_true",
                        help="leave the freeze uncommitted (its run records so)")
    annotate = commands.add_parser("annotate", help="append an annotation to a prediction's "
                                   "history (entries frozen after their target was seen)")
    annotate.add_argument("id")
    annotate.add_argument("--seen-before", required=True, metavar="WHERE",
                          help="where the target's result had been seen before those freezes")
    annotate.add_argument("--revisions", type=int, nargs="+", default=[1], metavar="N",
                          help="the entries it is about (default: 1)")
    annotate.add_argument("--no-commit", action="store_true",
                          help="leave the annotated file uncommitted")
    run = commands.add_parser("run", help="run a frozen prediction (refused if it drifted)")
    run.add_argument("id")
    run.add_argument("--revise", metavar="REASON", default=None,
                     help="parameters changed: freeze a revision with this reason, then run")
    run.add_argument("--workers", type=int, default=1, help="local worker processes")
    run.add_argument("--count", type=int, default=None,
                     help="run only the first COUNT frozen seeds (a partial run, so marked)")
    run.add_argument("--db", type=pathlib.Path, default=None,
                     help="results database (default: runs/predictions/ID/revN/results.db)")
    run.add_argument("--no-commit", action="store_true",
                     help="with --revise: leave the revision uncommitted")
    report = commands.add_parser("report", help="rewrite a prediction's newest run's report "
                                 "(its history and target table as they stand now)")
    report.add_argument("id")
    check = commands.add_parser("check", help="history and drift of every prediction")
    check.add_argument("ids", nargs="*", help="predictions to check (default: all)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Dispatch ``predict`` subcommands; 0 on success, 1 when ``check`` finds drift, 2 on
    an error or a refused run."""
    args = _parser().parse_args(argv)
    root = args.root.resolve()
    try:
        if args.command == "freeze":
            return _freeze(root, args)
        if args.command == "run":
            return _run(root, args)
        if args.command == "report":
            return _report(root, args.id)
        if args.command == "annotate":
            return _annotate(root, args)
        return _check(root, args.ids)
    except AgenticEnvError as exc:
        print(f"error: {exc}")
        return 2


def _freeze(root: pathlib.Path, args: argparse.Namespace) -> int:
    from agentic_env.reports import ledger

    path = ledger.ledger_path(root, args.id)
    if path.is_file():
        given = [f"--{k.replace('_', '-')}" for k in
                 ("sweep", "seeds", "target", "seen_before", "depends") if getattr(args, k)]
        if given:
            raise InvalidConfigError(
                f"prediction {args.id!r} exists: {', '.join(given)} cannot change (freeze a "
                "new prediction instead"
                + ("; to record that a freeze came after its target was seen: agentic-env "
                   f"predict annotate {args.id} --seen-before WHERE --revisions N"
                   if args.seen_before else "") + ")")
        prediction = ledger.load_prediction(root, args.id)
    else:
        if not (args.sweep and args.seeds and args.target):
            raise InvalidConfigError("a new prediction needs --sweep, --seeds and --target")
        start, _, count = args.seeds.partition(":")
        if not (start.isdigit() and count.isdigit()):
            raise InvalidConfigError(f"--seeds {args.seeds!r}: write START:COUNT")
        prediction = ledger.Prediction(
            id=args.id, target=args.target, sweep=args.sweep,
            seeds={"start": int(start), "count": int(count)}, realism=args.realism,
            paper_trials=args.paper_trials, seen_before=args.seen_before,
            depends=(*ledger.DEFAULT_DEPENDS, *(args.depends or ())))
    prediction = ledger.freeze(root, prediction, args.reason)
    ledger.save_prediction(root, prediction)
    entry = prediction.current
    seen = "frozen" if entry.revision == 1 else "revised"
    print(f"{args.id}: revision {entry.revision} frozen ({len(entry.hashes)} files hashed, "
          f"whole tree in {len(entry.tree or {})} folders"
          + (", on a DIRTY tree" if entry.dirty else "") + ")"
          + (f" - {seen} after seeing the target" if entry.after_target else "")
          + f" -> {path}")
    return _commit(root, path, f"Ledger: freeze {args.id} revision {entry.revision} "
                   f"({entry.reason})", args.no_commit)


def _commit(root: pathlib.Path, path: pathlib.Path, message: str, skip: bool) -> int:
    """Commit the ledger file ``path`` alone (unless ``skip``); 0, or 2 when git refused."""
    from agentic_env.reports import provenance

    if skip:
        print(f"not committed (--no-commit): {path.name} is uncommitted")
        return 0
    try:
        commit = provenance.commit_file(root, path, message)
    except RuntimeError as exc:
        print(f"error: the ledger file is written but NOT COMMITTED: {exc}")
        return 2
    print(f"committed {path.name} alone: {commit}" if commit else
          f"not committed: {root} is not a git work tree")
    return 0


def _annotate(root: pathlib.Path, args: argparse.Namespace) -> int:
    from agentic_env.reports import ledger

    prediction = ledger.annotate(ledger.load_prediction(root, args.id), args.seen_before,
                                 args.revisions)
    path = ledger.save_prediction(root, prediction)
    note = prediction.annotations[-1]
    print(f"{args.id}: annotated revision(s) {', '.join(map(str, note.revisions))} as frozen "
          f"after the target was seen -> {path}")
    return _commit(root, path, f"Ledger: {args.id} revision(s) "
                   f"{', '.join(map(str, note.revisions))} annotated as frozen after the "
                   "target was seen", args.no_commit)


def _run(root: pathlib.Path, args: argparse.Namespace) -> int:
    from agentic_env.harness.run import run_sweep
    from agentic_env.harness.sweep import load_sweep
    from agentic_env.reports import ledger, provenance
    from agentic_env.reports.report import prediction_summary, read_results, write_report
    from agentic_env.reports.run_record import row_counts
    from agentic_env.reports.targets import target_for

    prediction = ledger.load_prediction(root, args.id)
    elsewhere = provenance.code_elsewhere(root)
    if elsewhere:
        print(f"refused: this interpreter imports {'; '.join(elsewhere)} from outside {root}, "
              "so the run would execute code the ledger does not hash; run it with an "
              f"environment installed from {root} (pip install -e {root})")
        return 2
    changed = ledger.check_current(root, prediction)
    if changed:
        if not args.revise:
            print(f"refused: {args.id} changed since revision {prediction.current.revision} "
                  f"({changed.describe()}); freeze a revision with its reason "
                  "(agentic-env predict run ID --revise REASON)")
            return 2
        prediction = ledger.freeze(root, prediction, args.revise)
        path = ledger.save_prediction(root, prediction)
        print(f"revision {prediction.current.revision} frozen: {args.revise}"
              + (" (revised after seeing the target)" if prediction.current.after_target
                 else ""))
        if _commit(root, path, f"Ledger: freeze {args.id} revision "
                   f"{prediction.current.revision} ({args.revise})", args.no_commit):
            return 2
    seeds = dict(prediction.seeds)
    if args.count is not None:
        seeds["count"] = min(seeds["count"], args.count)
    sweep = load_sweep(root / prediction.sweep, seeds, prediction.realism)
    db = args.db or (root / "runs" / "predictions" / prediction.id
                     / f"rev{prediction.current.revision}" / "results.db")
    shown = db.resolve().relative_to(root) if db.resolve().is_relative_to(root) else db
    freeze_committed = provenance.committed(root, ledger.ledger_path(root, prediction.id))
    state, tree = provenance.git_state(root), ledger.tree_digest(root)
    ledger.save_prediction(root, ledger.start_run(prediction, str(shown)))  # a kill stays booked
    run_sweep(sweep, db, workers=args.workers)
    tree_after = ledger.tree_digest(root)
    target = target_for(root, prediction.id)
    db_sha256 = provenance.file_sha256(db)  # before anything reads it again
    rows, _, table, _ = read_results(db)
    summary = prediction_summary(db, prediction.paper_trials, target)
    if seeds["count"] < prediction.seeds["count"]:
        summary = f"partial: {seeds['count']} of {prediction.seeds['count']} seeds; {summary}"
    prediction = ledger.record_run(
        prediction, str(shown), summary, commit=state.commit, dirty=state.dirty, tree=tree,
        tree_after=tree_after, db_sha256=db_sha256, counts=row_counts(rows, table, target),
        scoring=ledger.scoring_digest(root), freeze_committed=freeze_committed)
    ledger.save_prediction(root, prediction)
    if tree_after != tree:
        print(f"WARNING: the code changed while {args.id} ran (tree {tree} -> {tree_after}); "
              "the ledger records it")
    files = write_report(db, db.parent / "report", prediction=prediction, target=target)
    print(f"{args.id}: {summary}\nreport: {files.html}")
    return 0


def _report(root: pathlib.Path, prediction_id: str) -> int:
    from agentic_env.reports import ledger
    from agentic_env.reports.report import write_report
    from agentic_env.reports.scorecard import latest_run, unscored
    from agentic_env.reports.targets import target_for

    prediction = ledger.load_prediction(root, prediction_id)
    found = latest_run(prediction)
    if found is None:
        raise InvalidConfigError(f"prediction {prediction_id!r} was never run to the end: "
                                 f"agentic-env predict run {prediction_id}")
    entry, run = found
    db = root / run.db
    files = write_report(db, db.parent / "report", prediction=prediction,
                         target=target_for(root, prediction_id))
    print("\n".join([*unscored(prediction),
                     f"report of revision {entry.revision}'s run ({run.at}): {files.html}"]))
    return 0


def _check(root: pathlib.Path, ids: list[str]) -> int:
    from agentic_env.reports import ledger
    from agentic_env.reports.ledger_history import history
    from agentic_env.reports.scorecard import scorecard

    predictions = ([ledger.load_prediction(root, i) for i in ids] if ids
                   else ledger.all_predictions(root))
    tree, scoring = ledger.tree_digests(root), ledger.scoring_digest(root)
    drifted = 0
    for prediction in predictions:
        changed = ledger.check_current(root, prediction, tree)
        drifted += bool(changed)
        print(f"{prediction.id} ({prediction.target}; {prediction.sweep}, seeds "
              f"{prediction.seeds['start']}:{prediction.seeds['count']}): "
              + ("CHANGED since its last freeze: " + changed.describe() if changed
                 else "as frozen")
              + ("" if changed.tree_recorded else
                 f" (its files; the whole tree and settings: {ledger.NOT_RECORDED} in "
                 f"revision {prediction.current.revision})"))
        print("\n".join("  " + line for line in
                        (*history(prediction), *scorecard(root, prediction, scoring))))
    return 1 if drifted else 0
