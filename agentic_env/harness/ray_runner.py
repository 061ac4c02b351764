"""Ray runner: the same :func:`~agentic_env.harness.execute.run_one` as Ray tasks, each
followed by :func:`~agentic_env.harness.execute.release_memory` in its worker (Ray reuses a
worker for the next task, as the local pool does).

``address`` is what :func:`ray.init` takes (``"auto"``, ``"ray://head:10001"``...) or
``"local"`` for a fresh single-machine instance. If Ray is already initialised in this
process, that cluster is used as is. Each episode is one task with one CPU and no retries
(a retried episode could run twice); a task whose worker dies is recorded as an error.
Trace folders must be on storage every node can write and the harness can read.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

from agentic_env.harness.db import Finished
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.execute import error_result, run_and_release
from agentic_env.harness.extras import require


def run_ray(specs: Iterable[EpisodeSpec], fn_path: str, trace_root: str | None, address: str,
            max_in_flight: int | None = None) -> Iterator[Finished]:
    """Run ``specs`` as Ray tasks; yield each as it finishes (completion order).

    Args:
        specs: episodes to run.
        fn_path: episode function, ``"module:function"`` (importable on every node).
        trace_root: folder for traces (``trace_root/key`` per episode), or ``None``.
        address: Ray address, or ``"local"`` to start a local instance.
        max_in_flight: tasks submitted at once (``None``: twice the cluster's CPUs), so a
            huge sweep does not flood the scheduler.
    """
    ray = require("ray", "ray")
    if not ray.is_initialized():
        ray.init(address=None if address == "local" else address, include_dashboard=False,
                 log_to_driver=False)
    remote = ray.remote(num_cpus=1, max_retries=0)(run_and_release)
    window = max_in_flight or max(1, 2 * int(ray.cluster_resources().get("CPU", 1)))
    queue = list(specs)[::-1]
    pending: dict[Any, tuple[EpisodeSpec, float]] = {}
    while queue or pending:
        while queue and len(pending) < window:
            spec = queue.pop()
            pending[remote.remote(spec.to_dict(), fn_path, trace_root)] = (
                spec, time.perf_counter())
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            spec, started = pending.pop(ref)
            try:
                yield ray.get(ref)
            except ray.exceptions.RayError as exc:
                elapsed = time.perf_counter() - started
                detail = f"Ray task failed: {type(exc).__name__}"
                yield Finished(key=spec.key(), run_s=elapsed, worker="ray",
                               result=error_result(spec, detail, str(exc), wall_s=elapsed))
