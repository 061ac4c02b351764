"""``agentic-env sweep FILE``: run a sweep's missing episodes and record them.

Re-running the same command resumes: episodes whose key is in the database are skipped,
the rest run (on a local spawn pool, or on Ray with ``--ray``) and each is committed in one
transaction as it finishes. A progress bar shows done / failed / errors and the ETA.
"""

from __future__ import annotations

import logging
import pathlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tqdm import tqdm

from agentic_env.harness.db import Finished, ResultStore
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.sweep import Sweep

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
        if sweep.findings:
            store.set_meta("paper_findings", [f.to_dict() for f in sweep.findings])
        if sweep.paper_table is not None:
            store.set_meta("paper_table", sweep.paper_table.to_dict())
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
