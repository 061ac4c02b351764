"""``agentic-env soak``: memory and robustness over a long run (a command, not a timed test).

Two parts, each in this process so that its resident memory (RSS) is the one measured:

* ``--episodes`` episodes run one after another as a sweep worker runs them (sim-oracle
  models, the tasks in turn, no trace), each stored in a results database; RSS is sampled
  after every episode;
* an MCP session of ``--calls`` seeded hostile calls (:mod:`agentic_env.harness.tools.fuzz`)
  through the SDK's client to the server of one episode (every tool set, sim-oracle
  perception), RSS sampled every 100 calls.

For each part it prints the RSS slope fitted after a warm-up (the first fifth of the samples;
for episodes, at least the first round of the tasks, which loads each task's assets) in MiB
per 100 episodes or per 1,000 calls, the crashes (an exception out of an episode or a call) and
the results lost (episodes not in the database, calls not in the episode's call log).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

#: Tasks the episode part runs, in turn.
TASKS: tuple[str, ...] = ("sorting", "stacking", "crossword", "reorientation", "kitchen")
#: Calls between two RSS samples of the MCP part.
SAMPLE_EVERY = 100


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


def rss_mib() -> float:
    """This process's resident memory, MiB (Linux ``/proc``)."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _figures(at: Sequence[int], rss: Sequence[float], per: int, crashes: int,
             lost: int, warmup: int = 0) -> SoakFigures:
    """Fit the RSS line after the warm-up: the first fifth of the samples, at least
    ``warmup`` of them."""
    skip = max(len(at) // 5, warmup)
    x, y = np.asarray(at[skip:], float), np.asarray(rss[skip:], float)
    slope = float(np.polyfit(x, y, 1)[0]) * per if len(x) >= 2 else 0.0
    return SoakFigures(int(at[-1]) if len(at) else 0, rss[0] if rss else 0.0,
                       rss[-1] if rss else 0.0, slope, per, crashes, lost)


def soak_episodes(episodes: int, database: Path, agent: str = "agenticlab") -> SoakFigures:
    """Run ``episodes`` episodes in turn (see the module docstring) into ``database``."""
    from agentic_env.harness.db import Finished, ResultStore
    from agentic_env.harness.episode import EpisodeSpec
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
            at.append(index + 1)
            rss.append(rss_mib())
        lost = episodes - len(store.finished_keys())
    return _figures(at, rss, 100, crashes, lost, warmup=len(TASKS))


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
    return _figures(at, rss, 1000, crashes, lost)


def _line(label: str, unit: str, figures: SoakFigures) -> str:
    return (f"{label}: {figures.runs} {unit}, RSS {figures.rss_start_mib:.0f} -> "
            f"{figures.rss_end_mib:.0f} MiB, slope {figures.slope_mib:+.1f} MiB per "
            f"{figures.per:,} {unit}, {figures.crashes} crashes, {figures.lost} lost")


def main(argv: list[str] | None = None) -> int:
    """Run both parts and print their figures; returns 0."""
    parser = argparse.ArgumentParser(prog="agentic-env soak", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=200, help="episodes (0: skip)")
    parser.add_argument("--calls", type=int, default=10_000, help="MCP calls (0: skip)")
    parser.add_argument("--agent", default="agenticlab")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    figures: dict[str, SoakFigures] = {}
    if args.episodes:
        with tempfile.TemporaryDirectory() as folder:
            figures["episodes"] = soak_episodes(args.episodes, Path(folder) / "soak.sqlite",
                                                args.agent)
        print(_line("sweep worker", "episodes", figures["episodes"]), flush=True)
    if args.calls:
        figures["mcp"] = soak_mcp(args.calls)
        print(_line("MCP server", "calls", figures["mcp"]), flush=True)
    if args.json:
        args.json.write_text(json.dumps({k: asdict(v) for k, v in figures.items()}, indent=2))
    return 0
