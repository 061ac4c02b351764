"""Benchmark harness: ``agentic-env sweep``, ``report`` and ``modules``.

The command lines of :mod:`agentic_env.harness.run`, :mod:`agentic_env.reports.report` and
:mod:`agentic_env.bench.modules`; each imports its library module when it runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import pathlib

from agentic_env.cli.realism import add_realism_argument
from agentic_env.errors import AgenticEnvError, InvalidConfigError


def _sweep_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentic-env sweep",
        description="Run a sweep file's episodes (resumable) and store the results in SQLite; "
                    "given a folder, run each of its sweep files in turn (a suite, e.g. "
                    "sweeps/paper/) and print the wall time per sweep and in total.")
    parser.add_argument("file", type=pathlib.Path,
                        help="sweep file (YAML), or a folder: its *.yaml files in name order, "
                             "each into its own default database")
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1),
                        help="local worker processes (default: min(4, CPUs))")
    parser.add_argument("--ray", metavar="ADDRESS", default=None,
                        help="run on a Ray cluster at ADDRESS ('auto', 'ray://host:10001', or "
                             "'local' for a local instance); needs the 'ray' extra")
    parser.add_argument("--db", type=pathlib.Path, default=None,
                        help="results database (default: runs/sweeps/NAME/results.db)")
    parser.add_argument("--traces", type=pathlib.Path, default=None,
                        help="folder for episode traces (default: beside the database, "
                             "'traces/')")
    parser.add_argument("--no-traces", action="store_true", help="write no episode traces")
    parser.add_argument("--episode-fn", default=None, metavar="MODULE:FUNCTION",
                        help="episode function overriding the sweep file's 'episode_fn'")
    parser.add_argument("--seeds", default=None, metavar="COUNT|START:COUNT",
                        help="run these seeds instead of the file's (e.g. 5 for seeds 0-4): a "
                             "quicker, smaller sample of the same grid; episodes already "
                             "stored are reused")
    parser.add_argument("--tasks", nargs="+", default=None, metavar="TASK",
                        help="run only these tasks' episodes of the grid (with a folder: of "
                             "every sweep; a sweep without them runs nothing), e.g. a quick "
                             "slice of a suite with --seeds 1")
    add_realism_argument(parser, default=None)
    parser.add_argument("--retry-errors", action="store_true",
                        help="run again the episodes stored as errors")
    parser.add_argument("--hard-timeout", type=float, default=None, metavar="SECONDS",
                        help="local pool: kill an episode after this long (default: its "
                             "max_wall_s x 1.5 + 60 s)")
    parser.add_argument("--report", action="store_true",
                        help="then write each sweep's report ('report/' beside its database)")
    return parser


def sweep_main(argv: list[str] | None = None) -> int:
    """``agentic-env sweep FILE|FOLDER``: run a sweep's missing episodes and record them; a
    folder runs each of its sweep files in turn and prints the wall time per sweep and in
    total."""
    parser = _sweep_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    suite = args.file.is_dir()
    if suite and args.db is not None:
        parser.error("--db names one database: with a folder each sweep writes its own")
    files = sorted(args.file.glob("*.yaml")) if suite else [args.file]
    if not files:
        print(f"error: no sweep files (*.yaml) in {args.file}")
        return 2
    timings: list[tuple[str, int, float]] = []
    try:
        for file in files:
            name, ran, wall_s = _run_one(file, args, suite)
            timings.append((name, ran, wall_s))
    except AgenticEnvError as exc:
        print(f"error: {exc}")
        return 2
    except KeyboardInterrupt:
        print("interrupted: finished episodes are saved; run the same command to resume")
        return 130
    if suite:
        width = max(len(name) for name, _, _ in timings)
        print(f"suite {args.file}: wall time per sweep (episodes run)")
        for name, ran, wall_s in timings:
            print(f"  {name:<{width}}  {ran:5d}  {wall_s / 60:7.1f} min")
        total_ran, total_s = sum(t[1] for t in timings), sum(t[2] for t in timings)
        print(f"  {'total':<{width}}  {total_ran:5d}  {total_s / 60:7.1f} min")
    return 0


def _run_one(file: pathlib.Path, args: argparse.Namespace, suite: bool
             ) -> tuple[str, int, float]:
    """Run one sweep file as the command line asks (its report too with ``--report``);
    returns its name, the episodes run and the wall time, seconds."""
    from agentic_env.harness.run import run_sweep
    from agentic_env.harness.sweep import load_sweep

    sweep = load_sweep(file, _seeds_override(args.seeds), args.realism)
    if args.tasks is not None:
        sweep = dataclasses.replace(
            sweep, specs=tuple(s for s in sweep.specs if s.task in set(args.tasks)))
    db = args.db or pathlib.Path("runs") / "sweeps" / sweep.name / "results.db"
    traces = None
    if not args.no_traces:
        traces = db.parent / "traces" if args.traces is None else (
            args.traces / sweep.name if suite else args.traces)
    summary = run_sweep(sweep, db, workers=args.workers, ray_address=args.ray,
                        trace_root=traces, retry_errors=args.retry_errors,
                        episode_fn=args.episode_fn, hard_timeout_s=args.hard_timeout)
    print(f"{sweep.name}: {summary.declared} episodes declared, {summary.skipped} already "
          f"done, {summary.ran} run ({summary.succeeded} succeeded, {summary.failed} failed, "
          f"{summary.errors} errors) in {summary.wall_s:.1f} s")
    if args.report:
        from agentic_env.reports.report import write_report

        files = write_report(db, db.parent / "report")
        print(f"results: {db}    report: {files.html}")
    else:
        print(f"results: {db}    report: agentic-env report {db} --out {db.parent / 'report'}")
    return sweep.name, summary.ran, summary.wall_s


def _seeds_override(text: str | None) -> int | dict[str, int] | None:
    """``--seeds``: ``COUNT`` or ``START:COUNT`` as a sweep grid's ``seeds`` value."""
    if text is None:
        return None
    start, sep, count = text.partition(":")
    if not sep:
        start, count = "0", text
    if not (start.isdigit() and count.isdigit()):
        raise InvalidConfigError(f"--seeds {text!r}: write COUNT or START:COUNT (e.g. 5000:5)")
    return {"start": int(start), "count": int(count)}


def report_main(argv: list[str] | None = None) -> int:
    """``agentic-env report DB --out DIR``: a results database as HTML and Markdown."""
    parser = argparse.ArgumentParser(
        prog="agentic-env report",
        description="Write an HTML (self-contained) and Markdown report of a results database.")
    parser.add_argument("db", type=pathlib.Path, help="results database (from agentic-env sweep)")
    parser.add_argument("--out", type=pathlib.Path, default=None,
                        help="output folder (default: 'report' beside the database)")
    args = parser.parse_args(argv)
    from agentic_env.reports.report import write_report

    try:
        files = write_report(args.db, args.out or args.db.parent / "report")
    except AgenticEnvError as exc:
        print(f"error: {exc}")
        return 2
    print(f"wrote {files.html} and {files.markdown} ({len(files.figures)} figures)")
    return 0


def modules_main(argv: list[str] | None = None) -> int:
    """``agentic-env modules --model M``: the module benchmark (paper Table II); with
    ``--paper``, the paper's rows emulated and checked beside the paper's numbers; with
    ``--replica``, an emulated profile's row on the calibration replica beside the paper's
    (:mod:`agentic_env.reports.replica_table`)."""
    from agentic_env.bench.modules import MODULE_ORDER, run_module_bench
    from agentic_env.reports.paper_modules import TABLE_TWO, format_module_table

    parser = argparse.ArgumentParser(
        prog="agentic-env modules",
        description="Module benchmark (paper Table II) on sim-generated, ground-truth-labelled "
                    "instances.")
    parser.add_argument("--model", default="sim-oracle",
                        help="model spec under test (default sim-oracle; any litellm name)")
    parser.add_argument("--paper", action="store_true",
                        help="instead of --model, benchmark each of the paper's Table II rows "
                             "emulated by the sim-oracle with that row's error rates, and "
                             "print the table beside the paper's with agree/disagree per cell "
                             "and row (see agentic_env.reports.paper_modules)")
    parser.add_argument("--paper-rows", nargs="+", default=[r.model for r in TABLE_TWO],
                        metavar="MODEL", help="with --paper: the rows (default: all), e.g. "
                                              "'Gemini 3 Flash'")
    parser.add_argument("--tasks", nargs="+", default=["sorting", "stacking"],
                        help="tasks to make rollouts of (default: sorting stacking)")
    parser.add_argument("--setting", default="lab", help="setting (default lab)")
    parser.add_argument("--seeds", type=int, default=2, help="rollouts per task (seeds 0..N-1)")
    parser.add_argument("--modules", nargs="+", default=list(MODULE_ORDER),
                        choices=MODULE_ORDER, help="modules to benchmark (default: all)")
    parser.add_argument("--db", type=pathlib.Path,
                        default=pathlib.Path("runs") / "modules" / "results.db",
                        help="results database (a sweep's database puts the table in its "
                             "report); --paper reuses the rows it already holds")
    parser.add_argument("--replica", action="store_true",
                        help="instead of benchmarking, print an emulated profile's Table II "
                             "row on the calibration replica beside the paper's: its models' "
                             "exact mean success rate over the replica's situations (the "
                             "detector's over the benchmark sightings), equal to the paper's "
                             "by construction (a check of the calibration, not a prediction); "
                             "the profile is --model (emulated:NAME), or with --paper each "
                             "of --paper-rows (see agentic_env.reports.replica_table)")
    parser.add_argument("--sample", type=int, default=None, metavar="SEED",
                        help="with --replica: also one sampled pass over the situations "
                             "(seed SEED) and its 95 %% Wilson interval")
    args = parser.parse_args(argv)
    if args.sample is not None and not args.replica:
        parser.error("--sample goes with --replica")
    if args.replica:
        return _replica_main(args)
    os.environ.setdefault("MUJOCO_GL", "egl")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        from agentic_env.agents.models.registry import parse_model_spec
        from agentic_env.harness.db import ResultStore
        from agentic_env.reports.paper_modules import (
            compare,
            emulating_spec,
            format_comparison,
            paper_row,
        )
        from agentic_env.tasks import TASKS

        try:
            rows = [paper_row(name) for name in args.paper_rows] if args.paper else []
        except KeyError as exc:
            raise InvalidConfigError(str(exc.args[0])) from exc
        specs = [emulating_spec(row) for row in rows] if args.paper else [args.model]
        for spec in specs:
            parse_model_spec(spec)
        unknown = [t for t in args.tasks if t not in TASKS]
        if unknown:
            raise InvalidConfigError(f"unknown task(s) {', '.join(unknown)}; valid: "
                                     f"{', '.join(sorted(TASKS))}")
        count = 0
        with ResultStore(args.db) as store:
            for spec in specs:
                if args.paper and any(r["model"] == spec for r in store.module_instances()):
                    continue  # measured before: reuse
                count += run_module_bench(spec, args.tasks, args.setting,
                                          list(range(args.seeds)), store, args.modules)
            instances = [r for r in store.module_instances() if r["model"] in specs]
    except AgenticEnvError as exc:
        print(f"error: {exc}")
        return 2
    print(f"{count} instances graded; stored in {args.db}")
    print(format_module_table(instances))
    if args.paper:
        print("\n" + format_comparison(compare(instances, rows)))
    return 0


def _replica_main(args: argparse.Namespace) -> int:
    """``agentic-env modules --replica``: print the profiles' rows on the calibration
    replica beside Table II (:func:`agentic_env.reports.replica_table.replica_table`)."""
    from agentic_env.reports.replica_table import replica_table

    names = list(args.paper_rows) if args.paper else [args.model]
    try:
        print(replica_table(names, args.modules, args.sample))
    except AgenticEnvError as exc:
        print(f"error: {exc}")
        return 2
    return 0
