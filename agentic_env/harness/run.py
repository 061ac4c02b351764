"""``agentic-env sweep FILE``: run a sweep's missing episodes and record them.

Re-running the same command resumes: episodes whose key is in the database are skipped,
the rest run (on a local spawn pool, or on Ray with ``--ray``) and each is committed in one
transaction as it finishes. A progress bar shows done / failed / errors and the ETA.
"""

from __future__ import annotations

import argparse
import logging
import os
import pathlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tqdm import tqdm

from agentic_env.errors import AgenticEnvError
from agentic_env.harness.db import Finished, ResultStore
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.sweep import Sweep, load_sweep

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SweepSummary:
    """What one ``run_sweep`` call did.

    Attributes:
        declared: episodes in the sweep.
        skipped: already in the database before this call.
        ran: episodes run and recorded by this call.
        succeeded / failed / errors: outcomes of the episodes run by this call
            (``errors`` counts crashed episodes, which are also counted as failed).
        wall_s: wall time of this call, seconds.
    """

    declared: int
    skipped: int
    ran: int
    succeeded: int
    failed: int
    errors: int
    wall_s: float


def run_sweep(sweep: Sweep, db_path: str | pathlib.Path, *, workers: int = 1,
              ray_address: str | None = None, trace_root: str | pathlib.Path | None = None,
              retry_errors: bool = False, episode_fn: str | None = None,
              hard_timeout_s: float | None = None, progress: bool = True) -> SweepSummary:
    """Run the sweep's episodes that ``db_path`` does not hold yet.

    Args:
        sweep: the parsed sweep.
        db_path: SQLite results database (created if missing).
        workers: local worker processes (ignored with ``ray_address``).
        ray_address: run on Ray at this address (``"local"``: a local instance).
        trace_root: folder for episode traces (``trace_root/KEY``), ``None`` for no traces.
        retry_errors: run again the episodes stored as errors.
        episode_fn: ``"module:function"`` overriding the sweep file's episode function.
        hard_timeout_s: pool only: kill an episode's worker after this many seconds.
        progress: show a tqdm progress bar (on stderr).
    """
    started = time.perf_counter()
    fn_path = episode_fn or sweep.episode_fn
    with ResultStore(db_path) as store:
        if retry_errors:
            store.delete_errors(s.key() for s in sweep.specs)
        done = store.finished_keys()
        todo = [s for s in sweep.specs if s.key() not in done]
        skipped = len(sweep.specs) - len(todo)
        root = None if trace_root is None else str(pathlib.Path(trace_root).resolve())
        counts = {"ran": 0, "succeeded": 0, "errors": 0}
        bar = tqdm(total=len(sweep.specs), initial=skipped, unit="ep", disable=not progress,
                   desc=sweep.name, dynamic_ncols=True)
        try:
            for finished in _backend(todo, fn_path, root, workers, ray_address, hard_timeout_s):
                store.record(finished)
                counts["ran"] += 1
                counts["succeeded"] += int(finished.result.success)
                counts["errors"] += int(finished.result.failure == "error")
                bar.update(1)
                bar.set_postfix(failed=counts["ran"] - counts["succeeded"],
                                errors=counts["errors"], refresh=False)
        finally:
            bar.close()
    return SweepSummary(declared=len(sweep.specs), skipped=skipped, ran=counts["ran"],
                        succeeded=counts["succeeded"],
                        failed=counts["ran"] - counts["succeeded"], errors=counts["errors"],
                        wall_s=time.perf_counter() - started)


def _backend(todo: Sequence[EpisodeSpec], fn_path: str, trace_root: str | None, workers: int,
             ray_address: str | None, hard_timeout_s: float | None) -> Iterator[Finished]:
    if not todo:
        return iter(())
    if ray_address:
        from agentic_env.harness.ray_runner import run_ray

        return run_ray(todo, fn_path, trace_root, ray_address)
    from agentic_env.harness.pool import run_pool

    return run_pool(todo, fn_path, trace_root, workers, hard_timeout_s)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentic-env sweep",
        description="Run a sweep file's episodes (resumable) and store the results in SQLite.")
    parser.add_argument("file", type=pathlib.Path, help="sweep file (YAML)")
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
    parser.add_argument("--retry-errors", action="store_true",
                        help="run again the episodes stored as errors")
    parser.add_argument("--hard-timeout", type=float, default=None, metavar="SECONDS",
                        help="local pool: kill an episode after this long (default: its "
                             "max_wall_s x 1.5 + 60 s)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``agentic-env sweep``."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.workers < 1:
        _parser().error("--workers must be >= 1")
    try:
        sweep = load_sweep(args.file)
        db = args.db or pathlib.Path("runs") / "sweeps" / sweep.name / "results.db"
        traces = None if args.no_traces else (args.traces or db.parent / "traces")
        summary = run_sweep(sweep, db, workers=args.workers, ray_address=args.ray,
                            trace_root=traces, retry_errors=args.retry_errors,
                            episode_fn=args.episode_fn, hard_timeout_s=args.hard_timeout)
    except AgenticEnvError as exc:
        print(f"error: {exc}")
        return 2
    except KeyboardInterrupt:
        print("interrupted: finished episodes are saved; run the same command to resume")
        return 130
    print(f"{sweep.name}: {summary.declared} episodes declared, {summary.skipped} already "
          f"done, {summary.ran} run ({summary.succeeded} succeeded, {summary.failed} failed, "
          f"{summary.errors} errors) in {summary.wall_s:.1f} s")
    print(f"results: {db}    report: agentic-env report {db} --out {db.parent / 'report'}")
    return 0
