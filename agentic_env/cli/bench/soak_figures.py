"""What ``agentic-env soak`` measures, as data: the tasks and agents its parts run in turn,
the sweep part's RSS bound, each part's figures (:class:`SoakFigures`), the sweep part's
runs and processes (:class:`SweepRun`, :class:`ProcessRSS`, :class:`SweepSoak`) and the lines
fitted through their RSS samples (MiB; slopes per 100 episodes or 1,000 calls). The command
(:mod:`agentic_env.cli.bench.soak`) runs the parts; :mod:`agentic_env.cli.bench.soak_store`
records these figures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Tasks the episode and sweep parts run, in turn.
TASKS: tuple[str, ...] = ("sorting", "stacking", "crossword", "reorientation", "kitchen")
#: Agents the sweep part runs, in turn: the four built-in designs.
AGENTS: tuple[str, ...] = ("agenticlab", "mallvi", "alrm", "planner-executor")
#: Episodes in one round of the sweep part: every task with every agent (the first loads each
#: task's assets and each agent's modules into a worker); each run's RSS fit skips at least one.
ROUND = len(TASKS) * len(AGENTS)
#: The sweep part's bound on the fitted RSS slope of each run, MiB per 100 episodes, set before
#: the first 1,000-episode run. A worker that kept one episode's simulator or one camera frame
#: set (each well over 1 MiB; the leak the episode part once found was ~50 MiB per episode)
#: would grow by 100 MiB or more per 100 episodes, five times the bound; within it a
#: 1,000-episode sweep grows by at most 200 MiB.
RSS_BOUND_MIB = 20.0


def process_bound(workers: int) -> float:
    """The bound on one process's fitted RSS slope, MiB per 100 episodes of the sweep: an
    equal share of :data:`RSS_BOUND_MIB` for the sweep process and each of its ``workers``
    (the shares sum to the group's bound)."""
    return RSS_BOUND_MIB / (workers + 1)


@dataclass(frozen=True)
class SoakFigures:
    """One part's outcome.

    Attributes:
        runs: episodes or calls made.
        rss_start_mib / rss_end_mib: resident memory at the first and the last sample, MiB.
        slope_mib: fitted RSS growth per ``per`` runs, MiB.
        per: the slope's unit (100 episodes, 1,000 calls).
        crashes: runs that raised out of the harness or the server.
        lost: runs whose result was not stored (database row, call log entry).
    """

    runs: int
    rss_start_mib: float
    rss_end_mib: float
    slope_mib: float
    per: int
    crashes: int
    lost: int


def fit_figures(at: Sequence[int], rss: Sequence[float], per: int, crashes: int,
             lost: int, warmup: int = 0) -> SoakFigures:
    """Fit the RSS line after the warm-up: the first fifth of the samples, at least
    ``warmup`` of them."""
    skip = max(len(at) // 5, warmup)
    x, y = np.asarray(at[skip:], float), np.asarray(rss[skip:], float)
    slope = float(np.polyfit(x, y, 1)[0]) * per if len(x) >= 2 else 0.0
    return SoakFigures(int(at[-1]) if len(at) else 0, rss[0] if rss else 0.0,
                       rss[-1] if rss else 0.0, slope, per, crashes, lost)


def fit_after(at: Sequence[int], rss: Sequence[float], warm: int
         ) -> tuple[float, float, float] | None:
    """The samples taken once ``warm`` episodes were stored: (first, last, fitted slope per
    100 episodes), MiB; ``None`` with fewer than 3 samples or 2 episode counts."""
    kept = [(x, y) for x, y in zip(at, rss, strict=True) if x >= warm]
    if len(kept) < 3 or len({x for x, _ in kept}) < 2:
        return None
    x, y = np.asarray(kept, float).T
    return float(y[0]), float(y[-1]), float(np.polyfit(x, y, 1)[0]) * 100


def floor_fit(at: Sequence[int], rss: Sequence[float], warm: int, window: int = ROUND
               ) -> tuple[float, float, float] | None:
    """One process's retained memory after ``warm`` episodes were stored: the samples are cut
    into windows of ``window`` stored episodes, each window's lowest sample (the process between
    episodes, after its release; the highest are an episode's working set, which swings by
    ~150 MiB with the task and phase) is placed at the window's middle and a line fitted
    through those floors: (first floor, last floor, slope per 100 episodes), MiB; ``None``
    with fewer than 3 windows."""
    floors: dict[int, float] = {}
    for x, y in zip(at, rss, strict=True):
        if x >= warm:
            index = (x - warm) // window
            floors[index] = min(y, floors.get(index, y))
    if len(floors) < 3:
        return None
    x = warm + (np.asarray(sorted(floors), float) + 0.5) * window
    y = np.asarray([floors[i] for i in sorted(floors)], float)
    return float(y[0]), float(y[-1]), float(np.polyfit(x, y, 1)[0]) * 100


@dataclass(frozen=True)
class ProcessRSS:
    """One process of a sweep run's process group, sampled while it lived.

    Attributes:
        pid: its process id.
        role: ``sweep`` (the ``agentic-env sweep`` process), ``worker`` (an episode worker
            of its pool) or ``other`` (the multiprocessing resource tracker, a worker's
            planner run, ...).
        at: episodes in the database at each sample it was alive for.
        rss_mib: its resident memory at those samples, MiB.
    """

    pid: int
    role: str
    at: tuple[int, ...]
    rss_mib: tuple[float, ...]


@dataclass(frozen=True)
class SweepRun:
    """One ``agentic-env sweep`` subprocess of the sweep part.

    Attributes:
        stored_start / stored_end: episodes in the database when it started and ended.
        wall_s: its wall time, seconds.
        killed: it was SIGKILLed (with its process group); else it exited by itself.
        exit_code: its exit status (``-9`` when killed).
        survivors: processes of its group still alive (not zombies) 10 s after it ended.
        processes: the most processes its group held at one sample (it, its workers and
            theirs, e.g. a planner run).
        summary: its summary line (``NAME: N episodes declared, K already done, ...``;
            ``(none)`` when killed before it).
        at: episodes in the database at each RSS sample.
        rss_mib: the group's summed resident memory at each sample, MiB.
        per_process: the same samples, per process (in the order they were first seen).
    """

    stored_start: int
    stored_end: int
    wall_s: float
    killed: bool
    exit_code: int
    survivors: int
    processes: int
    summary: str
    at: tuple[int, ...]
    rss_mib: tuple[float, ...]
    per_process: tuple[ProcessRSS, ...] = ()

    def warm(self) -> int:
        """Episodes stored when this run's warm-up ends: the first fifth of its episodes,
        at least :data:`ROUND`."""
        return self.stored_start + max(ROUND, (self.stored_end - self.stored_start) // 5)

    def fit(self) -> tuple[float, float, float] | None:
        """The group's RSS after the warm-up: (first sample, last sample, fitted slope per
        100 episodes), MiB; ``None`` with fewer than 3 samples or 2 episode counts after it."""
        return fit_after(self.at, self.rss_mib, self.warm())

    def process_fits(self) -> list[tuple[ProcessRSS, tuple[float, float, float] | None]]:
        """The sweep process and each worker with the line through its RSS floors after the
        warm-up (:func:`floor_fit`, windows of :data:`ROUND` episodes: what a process keeps
        between episodes, not the working set one is sampled in; the slope is per 100 episodes
        of the sweep, not of the worker)."""
        return [(p, floor_fit(p.at, p.rss_mib, self.warm())) for p in self.per_process
                if p.role != "other"]


@dataclass(frozen=True)
class SweepSoak:
    """The sweep part's outcome.

    Attributes:
        episodes: episodes the sweep file declares.
        workers / max_actions / realism: how they ran.
        runs: the killed run and the resumed one.
        integrity: SQLite's ``PRAGMA integrity_check`` answer (``ok``).
        stored: the declared episodes in the database.
        lost: declared episodes not in it; duplicated: rows beyond one per key; extra: rows
            of episodes the file does not declare.
        unparsable: rows whose spec, intervention or judge panel does not parse, or whose
            spec's key is not the row's key.
        orphan_calls: model-call rows whose episode row is missing (a half-written episode).
        errors: episodes stored as errors (``failure = 'error'``: the episode crashed).
    """

    episodes: int
    workers: int
    max_actions: int
    realism: str
    runs: tuple[SweepRun, SweepRun]
    integrity: str
    stored: int
    lost: int
    duplicated: int
    extra: int
    unparsable: int
    orphan_calls: int
    errors: int

    def intact(self) -> bool:
        """The kill came mid-sweep and the database holds every episode once, whole."""
        killed = self.runs[0].killed and self.runs[0].stored_end < self.episodes
        return killed and self.integrity == "ok" and self.stored == self.episodes and not (
            self.lost or self.duplicated or self.extra or self.unparsable or self.orphan_calls)

    def flat(self) -> bool | None:
        """Every run's fitted RSS slope is within :data:`RSS_BOUND_MIB` (``None``: a run
        has too few samples to fit)."""
        slopes = [fit[2] for fit in map(SweepRun.fit, self.runs) if fit is not None]
        return max(slopes) <= RSS_BOUND_MIB if len(slopes) == len(self.runs) else None

    def flat_per_process(self) -> bool | None:
        """Every fitted sweep process and worker of every run is within
        :func:`process_bound` (``None``: nothing could be fitted)."""
        slopes = [fit[2] for run in self.runs for _, fit in run.process_fits()
                  if fit is not None]
        return max(slopes) <= process_bound(self.workers) if slopes else None
