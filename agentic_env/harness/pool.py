"""Local process pool: N spawned workers, one episode each at a time.

Workers are started with the ``spawn`` context (a process that created a GL context must
not fork) and reused across episodes. The parent hands each worker one episode over its own
pipe, so it always knows which episode a worker holds: a worker that dies (segfault, OOM
kill) or overruns the hard time limit is replaced and its episode recorded as an error.
Only the parent writes to the database. Between episodes a worker gives the memory the
episode freed back to the system (:func:`~agentic_env.harness.execute.release_memory`), so
its resident memory stays flat over a long sweep.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import signal
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess

from agentic_env.harness.db import Finished
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.execute import error_result, release_memory, run_one

log = logging.getLogger(__name__)


def _worker_main(conn: Connection, fn_path: str, trace_root: str | None) -> None:
    """Worker loop: receive a spec dict, send back a :class:`Finished`; stop on ``None``/EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    while True:
        try:
            spec_data = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if spec_data is None:
            return
        finished = run_one(spec_data, fn_path, trace_root)
        try:
            conn.send(finished)
        except (BrokenPipeError, OSError):
            return
        del finished
        release_memory()


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    spec: EpisodeSpec | None = None
    started: float = 0.0


def run_pool(specs: Iterable[EpisodeSpec], fn_path: str, trace_root: str | None, workers: int,
             hard_timeout_s: float | None = None) -> Iterator[Finished]:
    """Run ``specs`` on ``workers`` spawned processes; yield each as it finishes.

    Args:
        specs: episodes to run.
        fn_path: episode function, ``"module:function"``.
        trace_root: folder for traces (each episode gets ``trace_root/key``), or ``None``.
        workers: number of worker processes, >= 1.
        hard_timeout_s: kill a worker whose episode runs longer than this many seconds
            (``None``: the spec's ``max_wall_s`` plus 50 % and 60 s, so the agent's own limit
            normally ends it first).
    """
    queue = deque(specs)
    ctx = mp.get_context("spawn")
    pool: list[_Worker] = []

    def start() -> _Worker:
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_worker_main, args=(child, fn_path, trace_root),
                              daemon=True, name="agentic-env-episode")
        process.start()
        child.close()
        return _Worker(process, parent)

    def limit(spec: EpisodeSpec) -> float:
        return hard_timeout_s if hard_timeout_s is not None else spec.max_wall_s * 1.5 + 60.0

    try:
        pool.extend(start() for _ in range(min(workers, len(queue))))
        while True:
            for worker in pool:
                if worker.spec is None and queue:
                    worker.spec = queue.popleft()
                    worker.started = time.perf_counter()
                    worker.conn.send(worker.spec.to_dict())
            busy = [w for w in pool if w.spec is not None]
            if not busy:
                return
            waits = [w.conn for w in busy] + [w.process.sentinel for w in busy]
            wait(waits, timeout=1.0)
            for index, worker in enumerate(pool):
                if worker.spec is None:
                    continue
                spec, elapsed = worker.spec, time.perf_counter() - worker.started
                if worker.conn.poll():
                    try:
                        finished = worker.conn.recv()
                    except (EOFError, OSError):
                        finished = None
                    if finished is not None:
                        worker.spec = None
                        yield finished
                        continue
                if not worker.process.is_alive() or elapsed > limit(spec):
                    why = (f"worker process died (exit code {worker.process.exitcode})"
                           if not worker.process.is_alive()
                           else f"hard time limit {limit(spec):.0f} s exceeded; worker killed")
                    log.warning("episode %s: %s", spec.key(), why)
                    _stop(worker)
                    pool[index] = start()
                    yield Finished(key=spec.key(), run_s=elapsed, worker="pool",
                                   result=error_result(spec, why, why, wall_s=elapsed))
    finally:
        for worker in pool:
            _stop(worker, graceful=worker.spec is None)


def _stop(worker: _Worker, graceful: bool = False) -> None:
    """Stop a worker: ask it to quit when idle, else kill it; close its pipe."""
    if graceful and worker.process.is_alive():
        with contextlib.suppress(BrokenPipeError, OSError):
            worker.conn.send(None)
        worker.process.join(timeout=5.0)
    if worker.process.is_alive():
        worker.process.kill()
        worker.process.join(timeout=5.0)
    worker.conn.close()
