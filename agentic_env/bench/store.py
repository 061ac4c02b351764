"""Where the benchmarks' episodes go: the harness's results database.

Every episode a benchmark runs is recorded into a :class:`~agentic_env.harness.db.ResultStore`
as the :class:`~agentic_env.harness.db.Finished` the sweep runner writes (the spec's key, the
result, the run's wall time in seconds and the worker, ``host:pid``), each in its own
transaction as it finishes, so ``agentic-env report DB`` shows a benchmark's episodes as it
shows a sweep's, and a benchmark stopped half-way leaves the episodes it finished. A
benchmark is a measurement: an episode it runs again (a later run, or the same spec twice in
one run) replaces the one stored under its key, so the database holds what the last run
printed.

The measurement benchmarks (``bench``, ``bench-grasp``, ``bench-calibration``,
``bench-collect``, ``bench-robosuite``, ``bench-sweep``, ``bench-real``, ``soak``) run no
episodes of a spec: each records its figures as a
:class:`~agentic_env.harness.db.Measurement` (:func:`record_measurements`), keyed by the
benchmark and its parameters, which the same report shows in its measurements section; the
same measurement made again replaces the stored one.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterable, Iterator
from typing import Any

from agentic_env.harness.db import Finished, Measurement, ResultStore
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


def measurement(bench: str, params: dict[str, Any], figures: dict[str, Any],
                run_s: float) -> Measurement:
    """A measurement made in this process as the database records it; ``run_s``: the wall
    time of the run that made it, seconds."""
    return Measurement(bench=bench, params=params, figures=figures, run_s=run_s,
                       worker=worker_name())


def record_measurements(db: str | pathlib.Path, items: Iterable[Measurement]) -> None:
    """Record ``items`` into the database ``db`` (created if missing), each replacing the
    measurement stored under the same benchmark and parameters."""
    with ResultStore(db) as store:
        for item in items:
            store.record_measurement(item)


def report_command(db: str | pathlib.Path) -> str:
    """The command that shows the episodes and measurements of ``db`` (``agentic-env report
    DB``)."""
    return f"agentic-env report {db}"
