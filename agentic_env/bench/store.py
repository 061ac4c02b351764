"""Where the benchmarks' episodes go: the harness's results database.

Every episode a benchmark runs is recorded into a :class:`~agentic_env.harness.db.ResultStore`
as the :class:`~agentic_env.harness.db.Finished` the sweep runner writes (the spec's key, the
result, the run's wall time in seconds and the worker, ``host:pid``), each in its own
transaction as it finishes, so ``agentic-env report DB`` shows a benchmark's episodes as it
shows a sweep's, and a benchmark stopped half-way leaves the episodes it finished. A
benchmark is a measurement: an episode it runs again (a later run, or the same spec twice in
one run) replaces the one stored under its key, so the database holds what the last run
printed.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterable, Iterator

from agentic_env.harness.db import Finished, ResultStore
from agentic_env.harness.episode import EpisodeResult
from agentic_env.harness.execute import worker_name


def recorded(db: str | pathlib.Path, finished: Iterable[Finished]) -> Iterator[Finished]:
    """Record each of ``finished`` into the database ``db`` (created if missing) as it
    arrives, replacing an episode stored under the same key, and hand it on."""
    with ResultStore(db) as store:
        for item in finished:
            store.record(item, replace=True)
            yield item


def in_process(result: EpisodeResult, run_s: float) -> Finished:
    """An episode run in this process (not on the pool) as the database records it;
    ``run_s``: the wall time of the call that ran it, seconds."""
    return Finished(key=result.spec.key(), result=result, run_s=run_s, worker=worker_name())


def report_command(db: str | pathlib.Path) -> str:
    """The command that shows the episodes of ``db`` (``agentic-env report DB``)."""
    return f"agentic-env report {db}"
