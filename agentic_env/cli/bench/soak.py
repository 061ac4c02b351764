"""``agentic-env soak``: memory and robustness over a long run (a command, not a timed test).

Three parts. The first two run in this process so that its resident memory (RSS) is the one
measured:

* ``--episodes`` episodes run one after another as a sweep worker runs them (sim-oracle
  models, the tasks in turn, no trace, the worker's memory release between episodes), each
  stored in a results database; RSS is sampled after every episode;
* an MCP session of ``--calls`` seeded hostile calls (:mod:`agentic_env.harness.tools.fuzz`)
  through the SDK's client to the server of one episode (every tool set, sim-oracle
  perception), RSS sampled every 100 calls.

For each it prints the RSS slope fitted after a warm-up (the first fifth of the samples;
for episodes, at least the first round of the tasks, which loads each task's assets) in MiB
per 100 episodes or per 1,000 calls, the crashes (an exception out of an episode or a call) and
the results lost (episodes not in the database, calls not in the episode's call log).

The third, the sweep part (``--sweep-episodes``), runs the real harness as a user does: it
writes a sweep file of that many episodes (the realistic world, emulated models, the tasks, the
four agents and the models in turn, a small ``--max-actions``: that bounds each episode's
length, since this part measures memory and robustness, not success), runs ``agentic-env sweep
FILE --workers W --no-traces`` as a subprocess, SIGKILLs its whole process group once
``--kill-at`` of the episodes are in the results database (polled read-only), then runs the
same command again, which resumes. It checks that every episode is in the database exactly once
(0 lost, 0 duplicated), that nothing is half-written (the database passes SQLite's integrity
check, every row parses, no model call belongs to a missing episode), and that the resident
memory of the sweep process and its workers (the sum over the process group, sampled from
``/proc/PID/statm`` every ``--sample-s`` seconds) stays flat: the slope fitted in each run
after its warm-up (the first fifth of its episodes, at least one round of every task with every
agent), MiB per 100 episodes, against
:data:`~agentic_env.cli.bench.soak_figures.RSS_BOUND_MIB`. The same samples are kept per
process (the sweep process, each worker, the others: the multiprocessing resource tracker, a
worker's planner runs), and the sweep process and each worker are fitted on their own against
their share of the bound (:func:`~agentic_env.cli.bench.soak_figures.process_bound`), so a
growth is pinned on the process that grew; each through its floors, the lowest sample in each
round of episodes (what it keeps between episodes; a sample inside an episode holds its working
set, which swings with the task), a statistic revised after the 200-episode run of
``docs/soak.md`` showed single samples swinging the slopes of two workers of one run to -43 and
+31 MiB; the bound is unchanged.

Each part's summary figures are recorded into the results database ``--db`` (default
``runs/soak.db``; not the sweep part's own database) as one measurement per part
(:mod:`agentic_env.cli.bench.soak_store`); ``agentic-env report DB`` shows them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agentic_env.bench.store import record_measurements
from agentic_env.cli.bench import add_db_argument, print_report_command
from agentic_env.cli.bench.procgroup import group_rss, live, rss_mib
from agentic_env.cli.bench.soak_figures import (
    AGENTS,
    ROUND,
    RSS_BOUND_MIB,
    TASKS,
    ProcessRSS,
    SoakFigures,
    SweepRun,
    SweepSoak,
    fit_figures,
    process_bound,
)
from agentic_env.cli.bench.soak_store import soak_measurements
from agentic_env.cli.realism import add_realism_argument

#: Calls between two RSS samples of the MCP part.
SAMPLE_EVERY = 100
#: Emulated models the sweep part runs, in turn (``agentic_env/oracle/profiles``): a strong,
#: a middling and a weak profile, as in ``sweeps/four-agents.yaml``.
MODELS: tuple[str, ...] = ("emulated:gemini-3-flash", "emulated:qwen3-vl-plus",
                           "emulated:gpt-4o")
def soak_episodes(episodes: int, database: Path, agent: str = "agenticlab") -> SoakFigures:
    """Run ``episodes`` episodes in turn (see the module docstring) into ``database``."""
    from agentic_env.harness.db import Finished, ResultStore
    from agentic_env.harness.episode import EpisodeSpec
    from agentic_env.harness.execute import release_memory
    from agentic_env.harness.runner import run_episode

    at, rss, crashes = [], [], 0
    with ResultStore(database) as store:
        for index in range(episodes):
            spec = EpisodeSpec(task=TASKS[index % len(TASKS)], seed=index // len(TASKS),
                               agent=agent, model="sim-oracle")
            try:
                result = run_episode(spec, video=False)
                store.record(Finished(spec.key(), result, result.wall_s, "soak"))
            except Exception:  # noqa: BLE001 - counted: the soak measures crashes
                crashes += 1
            release_memory()  # as a pool worker does between episodes
            at.append(index + 1)
            rss.append(rss_mib())
        lost = episodes - len(store.finished_keys())
    return fit_figures(at, rss, 100, crashes, lost, warmup=len(TASKS))


def soak_mcp(calls: int, seed: int = 0) -> SoakFigures:
    """A ``calls``-call hostile MCP session (see the module docstring)."""
    import anyio
    from mcp import Client

    from agentic_env.harness.episode import EpisodeSpec
    from agentic_env.harness.tools.backends import open_episode
    from agentic_env.harness.tools.fuzz import hostile_calls
    from agentic_env.harness.tools.mcp_server import build_server

    episode = open_episode(EpisodeSpec(task="sorting", seed=seed, max_actions=2), "all",
                           perception="sim-oracle")
    at: list[int] = []
    rss: list[float] = []
    crashes = 0
    try:
        schemas = {spec.name: spec.parameters for spec in episode.tools.specs()}
        server = build_server(episode, on_finish=lambda: "stored")
        logged = len(episode.context.log.calls)

        async def session() -> None:
            nonlocal crashes
            async with Client(server) as client:
                for index, (name, arguments) in enumerate(hostile_calls(schemas, seed, calls)):
                    try:
                        await client.call_tool(name, arguments)
                    except Exception:  # noqa: BLE001 - counted: the soak measures crashes
                        crashes += 1
                    if (index + 1) % SAMPLE_EVERY == 0:
                        at.append(index + 1)
                        rss.append(rss_mib())

        anyio.run(session)
        lost = calls - (len(episode.context.log.calls) - logged)
    finally:
        episode.close()
    return fit_figures(at, rss, 1000, crashes, lost)


def sweep_file(episodes: int, max_actions: int, realism: str) -> dict[str, Any]:
    """The sweep part's sweep (a YAML-ready mapping): one grid entry per episode, so the
    tasks, the agents and the models come in turn (episode ``i``: task ``i % 5``, agent
    ``i // 5 % 4``, model ``i // 20 % 3``, seed ``i // 60``; each combination once)."""
    entries = []
    for index in range(episodes):
        seed, model = divmod(index // ROUND, len(MODELS))
        entries.append({"tasks": [TASKS[index % len(TASKS)]],
                        "agents": [AGENTS[index // len(TASKS) % len(AGENTS)]],
                        "models": [MODELS[model]], "realism": [realism], "seeds": [seed]})
    return {"name": "soak", "grid": entries, "episode": {"max_actions": max_actions}}


def _stored(db: Path) -> int | None:
    """Episodes in the results database, read through a read-only connection (``None``
    while it cannot be read: not created yet)."""
    if not db.exists():
        return None
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5.0)) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])
    except sqlite3.Error:
        return None


def _run_sweep(command: list[str], log: Path, db: Path, kill_at: int | None,
               poll_s: float, sample_s: float) -> SweepRun:
    """Run ``command`` in a new process group (output to ``log``), polling ``db`` every
    ``poll_s`` seconds and sampling RSS every ``sample_s``; SIGKILL the group once ``kill_at``
    episodes are stored (``None``: let it finish)."""
    stored = start = _stored(db) or 0
    at: list[int] = []
    rss: list[float] = []
    series: dict[int, tuple[str, list[int], list[float]]] = {}
    processes, killed, started, sample_due = 0, False, time.monotonic(), 0.0
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    while process.poll() is None:
        now = _stored(db)
        stored = stored if now is None else now
        if time.monotonic() >= sample_due:
            sample = group_rss(process.pid)
            at.append(stored)
            rss.append(sum(mib for _, mib in sample.values()))
            for pid, (role, mib) in sample.items():
                _, xs, ys = series.setdefault(pid, (role, [], []))
                xs.append(stored)
                ys.append(mib)
            processes, sample_due = max(processes, len(sample)), time.monotonic() + sample_s
        if kill_at is not None and stored >= kill_at:
            os.killpg(process.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(poll_s)
    exit_code, wall_s = process.wait(), time.monotonic() - started
    deadline = time.monotonic() + 10.0
    while live(process.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    summary = [line for line in log.read_text(errors="replace").splitlines()
               if " episodes declared, " in line]
    return SweepRun(start, _stored(db) or 0, wall_s, killed, exit_code,
                    len(live(process.pid)), processes,
                    summary[-1].rsplit("\r", 1)[-1] if summary else "(none)", tuple(at),
                    tuple(rss), tuple(ProcessRSS(pid, role, tuple(xs), tuple(ys))
                                      for pid, (role, xs, ys) in series.items()))


def _check(db: Path, keys: set[str]) -> dict[str, Any]:
    """The database checks of :class:`~agentic_env.cli.bench.soak_figures.SweepSoak` (its
    fields from ``integrity`` to ``errors``), on a read-only connection."""
    from agentic_env.harness.episode import EpisodeSpec

    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        integrity = str(conn.execute("PRAGMA integrity_check").fetchone()[0])
        rows = conn.execute("SELECT key, spec_json, intervention_json, judge_panel_json, "
                            "failure FROM episodes").fetchall()
        orphans = int(conn.execute("SELECT COUNT(*) FROM calls WHERE episode_key NOT IN "
                                   "(SELECT key FROM episodes)").fetchone()[0])

    def parses(key: str, spec: str, *extras: str | None) -> bool:
        try:
            for text in extras:
                if text is not None:
                    json.loads(text)
            return EpisodeSpec.from_dict(json.loads(spec)).key() == key
        except (ValueError, TypeError, KeyError):
            return False

    stored = [row[0] for row in rows]
    return {"integrity": integrity, "stored": len(keys & set(stored)),
            "lost": len(keys - set(stored)), "duplicated": len(stored) - len(set(stored)),
            "extra": len(set(stored) - keys),
            "unparsable": sum(not parses(*row[:4]) for row in rows),
            "orphan_calls": orphans, "errors": sum(row[4] == "error" for row in rows)}


def soak_sweep(episodes: int, folder: Path, workers: int = 2, kill_at: float = 0.5,
               max_actions: int = 8, realism: str = "realistic", poll_s: float = 0.5,
               sample_s: float = 3.0) -> SweepSoak:
    """The sweep part (see the module docstring) in ``folder`` (the sweep file ``soak.yaml``,
    its database ``results.db``, each run's output ``run-1.log`` and ``run-2.log``); prints a
    line as each run ends. ``kill_at`` is the fraction of the episodes stored before the kill,
    ``poll_s`` and ``sample_s`` the seconds between database polls and between RSS samples."""
    import yaml

    from agentic_env.harness.sweep import load_sweep

    folder.mkdir(parents=True, exist_ok=True)
    file, db = folder / "soak.yaml", folder / "results.db"
    file.write_text(yaml.safe_dump(sweep_file(episodes, max_actions, realism), sort_keys=False))
    keys = {spec.key() for spec in load_sweep(file).specs}
    command = [sys.executable, "-m", "agentic_env.cli", "sweep", str(file), "--workers",
               str(workers), "--no-traces", "--db", str(db)]
    kill_count = min(max(1, math.ceil(kill_at * episodes)), episodes - 1)
    runs = []
    for index, kill in enumerate((kill_count, None), 1):
        runs.append(_run_sweep(command, folder / f"run-{index}.log", db, kill, poll_s,
                               sample_s))
        print(_run_line(index, runs[-1], episodes), flush=True)
    return SweepSoak(episodes, workers, max_actions, realism, (runs[0], runs[1]),
                     **_check(db, keys))


def _run_line(index: int, run: SweepRun, episodes: int) -> str:
    ran = run.stored_end - run.stored_start
    rate = 60.0 * ran / run.wall_s if run.wall_s else 0.0
    end = (f"SIGKILLed (process group) with {run.stored_end} of {episodes} stored"
           if run.killed else f"exited {run.exit_code} with {run.stored_end} of {episodes} stored")
    return (f"  run {index}: {ran} episodes in {run.wall_s / 60:.1f} min ({rate:.2f} per min), "
            f"{end}; {run.processes} processes at most, {run.survivors} alive after it; "
            f"its summary: {run.summary}")


def _sweep_lines(soak: SweepSoak) -> list[str]:
    lines = [f"  database: integrity {soak.integrity}; {soak.stored} of {soak.episodes} "
             f"episodes stored: {soak.lost} lost, {soak.duplicated} duplicated, {soak.extra} "
             f"extra, {soak.unparsable} unparsable rows, {soak.orphan_calls} orphan calls, "
             f"{soak.errors} stored as errors: {'PASS' if soak.intact() else 'MISS'}"]
    for index, run in enumerate(soak.runs, 1):
        fit = run.fit()
        lines.append(f"  run {index} RSS (sweep process + workers): " + (
            "too few samples after the warm-up to fit" if fit is None else
            f"{fit[0]:.0f} -> {fit[1]:.0f} MiB after the warm-up, slope {fit[2]:+.1f} MiB "
            "per 100 episodes"))
        lines.extend(_process_lines(run))
    bound = process_bound(soak.workers)
    lines.append(f"  RSS bound {RSS_BOUND_MIB:.0f} MiB per 100 episodes in each run: "
                 f"{_verdict(soak.flat())}; per process (the sweep process and each worker, "
                 f"its share {bound:.1f} MiB): {_verdict(soak.flat_per_process())}")
    return lines


def _verdict(flat: bool | None) -> str:
    return "n/a" if flat is None else "PASS" if flat else "MISS"


def _process_lines(run: SweepRun) -> list[str]:
    """A line per fitted process of ``run`` and one for the others (not fitted: they come
    and go)."""
    lines = []
    for process, fit in run.process_fits():
        name = "sweep process" if process.role == "sweep" else "worker"
        lines.append(f"    {name} {process.pid}: " + (
            "too few samples after the warm-up to fit" if fit is None else
            f"floor {fit[0]:.0f} -> {fit[1]:.0f} MiB after the warm-up, slope {fit[2]:+.1f} "
            f"MiB per 100 episodes"))
    others = [p for p in run.per_process if p.role == "other"]
    if others:
        largest = max(max(p.rss_mib) for p in others)
        lines.append(f"    {len(others)} other processes (resource tracker, planner runs), "
                     f"not fitted: the largest {largest:.0f} MiB")
    return lines


def _line(label: str, unit: str, figures: SoakFigures) -> str:
    return (f"{label}: {figures.runs} {unit}, RSS {figures.rss_start_mib:.0f} -> "
            f"{figures.rss_end_mib:.0f} MiB, slope {figures.slope_mib:+.1f} MiB per "
            f"{figures.per:,} {unit}, {figures.crashes} crashes, {figures.lost} lost")


def main(argv: list[str] | None = None) -> int:
    """Run the parts asked for, print their figures and record each part's in ``--db``
    (:mod:`agentic_env.cli.bench.soak_store`); returns 0."""
    parser = argparse.ArgumentParser(prog="agentic-env soak", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=200, help="episodes (0: skip)")
    parser.add_argument("--calls", type=int, default=10_000, help="MCP calls (0: skip)")
    parser.add_argument("--agent", default="agenticlab")
    parser.add_argument("--sweep-episodes", type=int, default=200,
                        help="episodes of the sweep part (0: skip; at least 2)")
    parser.add_argument("--kill-at", type=float, default=0.5, metavar="FRACTION",
                        help="SIGKILL the sweep once this fraction of its episodes is stored")
    parser.add_argument("--workers", type=int, default=2, help="the sweep's worker processes")
    parser.add_argument("--max-actions", type=int, default=8,
                        help="primitive actions per sweep episode (bounds episode length)")
    add_realism_argument(parser)
    parser.add_argument("--sample-s", type=float, default=3.0,
                        help="seconds between the sweep part's RSS samples")
    parser.add_argument("--sweep-dir", type=Path,
                        help="keep the sweep file, database and run logs here (default: a "
                             "temporary folder, removed)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    add_db_argument(parser, "soak", "measurement")  # the sweep part's episodes: --sweep-dir
    args = parser.parse_args(argv)
    if args.sweep_episodes and (args.sweep_episodes < 2 or not 0 < args.kill_at < 1):
        parser.error("--sweep-episodes needs at least 2 episodes and 0 < --kill-at < 1")
    figures: dict[str, SoakFigures | SweepSoak] = {}
    walls: dict[str, float] = {}
    mark = time.perf_counter()
    if args.episodes:
        with tempfile.TemporaryDirectory() as folder:
            figures["episodes"] = soak_episodes(args.episodes, Path(folder) / "soak.sqlite",
                                                args.agent)
        print(_line("sweep worker", "episodes", figures["episodes"]), flush=True)
        walls["episodes"], mark = time.perf_counter() - mark, time.perf_counter()
    if args.calls:
        figures["mcp"] = soak_mcp(args.calls)
        walls["mcp"], mark = time.perf_counter() - mark, time.perf_counter()
        print(_line("MCP server", "calls", figures["mcp"]), flush=True)
    if args.sweep_episodes:
        print(f"sweep killed and resumed: {args.sweep_episodes} episodes, {args.realism} world, "
              f"models {', '.join(MODELS)}, agents {', '.join(AGENTS)}, tasks in turn, "
              f"workers {args.workers}, SIGKILL at {args.kill_at:.0%} stored; max_actions "
              f"{args.max_actions} bounds each episode's length: this measures memory and "
              "robustness, not success", flush=True)
        with tempfile.TemporaryDirectory() as folder:
            sweep = soak_sweep(args.sweep_episodes, args.sweep_dir or Path(folder),
                               args.workers, args.kill_at, args.max_actions, args.realism,
                               sample_s=args.sample_s)
        figures["sweep"], walls["sweep"] = sweep, time.perf_counter() - mark
        print("\n".join(_sweep_lines(sweep)), flush=True)
    if args.json:
        args.json.write_text(json.dumps({k: asdict(v) for k, v in figures.items()}, indent=2))
    record_measurements(args.db, soak_measurements(figures, args, walls, RSS_BOUND_MIB,
                                                   process_bound(args.workers)))
    print_report_command(args.db, "measurements")
    return 0
