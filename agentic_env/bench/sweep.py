"""Harness benchmark: episodes per minute with 1 and 2 workers, and harness overhead.

Runs a sweep three ways on the same specs: the episode function called directly in this
process (no harness), the local pool with 1 worker, and with 2 workers (fresh databases in
a temporary folder, traces on as in ``agentic-env sweep``). Prints throughput, the 2-vs-1
worker scaling ratio and the harness overhead per episode two ways: the 1-worker sweep's
wall time minus the direct run's, per episode (simple, but episode times vary between the
runs), and the 1-worker sweep's wall time minus the episode-function time its worker
measured, per episode (worker spawn, dispatch, pickling, SQLite commits; immune to that
variation)::

    agentic-env bench-sweep [sweeps/ci.yaml] [--limit N]

:meth:`HarnessBench.figures` is the run as the results database records it.
"""

from __future__ import annotations

import dataclasses
import pathlib
import tempfile
import time
from typing import Any

from agentic_env.harness.db import ResultStore
from agentic_env.harness.execute import load_episode_fn
from agentic_env.harness.run import run_sweep
from agentic_env.harness.sweep import Sweep


@dataclasses.dataclass(frozen=True)
class HarnessBench:
    """Measured figures (wall seconds unless stated).

    Attributes:
        episodes: episodes in each run.
        direct_s: the episode function called directly, serially, in this process.
        pool1_s / pool2_s: sweeps with 1 and 2 workers (including worker start-up).
        per_minute_1 / per_minute_2: episodes per minute of the two sweeps.
        scaling: ``per_minute_2 / per_minute_1`` (2.0 would be perfect).
        overhead_s: ``(pool1_s - direct_s) / episodes``, harness time per episode.
        inside_overhead_s: ``(pool1_s - sum of run_s) / episodes`` in the 1-worker sweep,
            with ``run_s`` the episode function's time measured in the worker.
    """

    episodes: int
    direct_s: float
    pool1_s: float
    pool2_s: float
    per_minute_1: float
    per_minute_2: float
    scaling: float
    overhead_s: float
    inside_overhead_s: float

    @property
    def overhead_pct(self) -> float:
        """The harness overhead against the direct run: ``overhead_s * episodes / direct_s``,
        per cent of the direct run's wall time."""
        return 100.0 * self.overhead_s * self.episodes / self.direct_s

    def figures(self) -> dict[str, Any]:
        """Every field (seconds, episodes per minute, the scaling ratio) with
        ``direct_s_per_episode`` (seconds) and ``overhead_pct`` (per cent), as the results
        database records them."""
        return {**dataclasses.asdict(self),
                "direct_s_per_episode": self.direct_s / self.episodes,
                "overhead_pct": self.overhead_pct}


def bench(sweep: Sweep, limit: int | None = None) -> HarnessBench:
    """Run ``sweep`` (its first ``limit`` episodes) directly, then with 1 and 2 workers."""
    specs = sweep.specs[:limit] if limit else sweep.specs
    sweep = dataclasses.replace(sweep, specs=specs)
    fn = load_episode_fn(sweep.episode_fn)
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as tmp:
        root = pathlib.Path(tmp)
        start = time.perf_counter()
        for spec in specs:
            fn(spec, trace_root=root / "direct")
        direct = time.perf_counter() - start
        walls = []
        for workers in (1, 2):
            summary = run_sweep(sweep, root / f"pool{workers}.db", workers=workers,
                                trace_root=root / f"traces{workers}", progress=False)
            walls.append(summary.wall_s)
        with ResultStore(root / "pool1.db") as store:
            inside = sum(float(r["run_s"]) for r in store.episodes())
    n = len(specs)
    per_minute = [60.0 * n / wall for wall in walls]
    return HarnessBench(episodes=n, direct_s=direct, pool1_s=walls[0], pool2_s=walls[1],
                        per_minute_1=per_minute[0], per_minute_2=per_minute[1],
                        scaling=per_minute[1] / per_minute[0], overhead_s=(walls[0] - direct) / n,
                        inside_overhead_s=(walls[0] - inside) / n)
