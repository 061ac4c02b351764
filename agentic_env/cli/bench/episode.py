"""``agentic-env bench-episode``: how fast one sim-oracle episode runs, and where time goes.

Part 1 runs the AgenticLab agent with the perfect sim-oracle on a fixed seed list of every task
in the lab setting, without video (the trace's calls and page are written, as by
``agentic-env run --no-video``), and prints wall time over simulated time per task with the
time of each component: physics (``mj_step``), control (primitive motion planning, IK and the
control loop around the physics), observation renders, model calls (the sim-oracle's answers,
its segmentation renders included), perception and grounding (point clouds, segmentation,
grasps, placement), planning (PDDL parsing, Fast Downward, plan checks), the trace (call
images, the page, taking video frames and waiting for the video at the end; the frames are
rendered and encoded in a worker thread) and the rest (env construction and reset, scoring).
``cpu/sim`` is the CPU time of the process and its subprocesses over simulated time: on a
loaded machine wall time grows with the load, CPU time hardly. Part 2 runs one episode per
setting with the trace video on and off and prints the ratio of their wall times.

Episodes run one after another in this process, after one warm-up episode that pays the
imports and first-use costs (printed, not counted, not recorded). Timings depend on the
machine's load: compare ratios measured in the same run (:mod:`agentic_env.bench.episode`).
Every measured episode is recorded into the results database ``--db`` (default
``runs/bench_episode.db``; ``agentic-env report DB`` shows them; part 2's run with video
replaces the same spec's run without), and the tables are also written as JSON (``--out``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentic_env.bench.episode import (
    DEFAULT_SEEDS,
    SETTINGS,
    VIDEO_EPISODE,
    ComponentClock,
    episode_entry,
    format_task_rows,
    format_video_rows,
    task_row,
    timed_components,
    timed_episode,
    video_row,
)
from agentic_env.bench.store import in_process
from agentic_env.cli.bench import add_db_argument, print_report_command
from agentic_env.cli.realism import add_realism_argument
from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.tasks import BENCHMARK_TASKS


def _record(store: ResultStore, result: EpisodeResult) -> None:
    """Record a measured episode (replacing an earlier run of its spec), without its trace
    folder: the traces are written to a temporary folder, gone when the command ends."""
    store.record(in_process(replace(result, trace_dir=None), result.wall_s), replace=True)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print its tables and write them as JSON."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-episode", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=list(BENCHMARK_TASKS),
                        choices=BENCHMARK_TASKS)
    parser.add_argument("--seeds", nargs="+", type=int, default=list(DEFAULT_SEEDS))
    parser.add_argument("--settings", nargs="*", default=list(SETTINGS), choices=SETTINGS,
                        help="settings of part 2 (video on vs off); none skips part 2")
    parser.add_argument("--video-task", default=VIDEO_EPISODE[0], choices=BENCHMARK_TASKS)
    parser.add_argument("--video-seed", type=int, default=VIDEO_EPISODE[1])
    add_realism_argument(parser)
    parser.add_argument("--out", type=Path, default=Path("bench_episode.json"))
    add_db_argument(parser, "bench_episode")
    args = parser.parse_args(argv)
    clock = ComponentClock()
    episodes: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-episode-") as folder, \
            timed_components(clock), ResultStore(args.db) as store:
        root = Path(folder)
        warm_up, _ = timed_episode(EpisodeSpec("reorientation"), clock, root, video=True)
        print(f"warm-up episode (imports, first renders; not counted): {warm_up.wall_s:.1f} s",
              flush=True)
        task_rows = []
        for task in args.tasks:
            runs = []
            for seed in args.seeds:
                spec = EpisodeSpec(task, seed=seed, realism=args.realism)
                result, seconds = timed_episode(spec, clock, root, video=False)
                _record(store, result)
                runs.append((result, seconds))
                episodes.append({"part": "no video", **episode_entry(result, seconds)})
                print(f"  {task:<14} seed {seed:<3} {result.wall_s:6.2f} s wall "
                      f"{result.sim_s:6.1f} s sim  score {result.score:.2f}  "
                      f"actions {result.actions}", flush=True)
            task_rows.append(task_row(task, runs))
        video_rows = []
        for setting in args.settings:
            spec = EpisodeSpec(args.video_task, setting, args.video_seed,
                               realism=args.realism)
            off, _ = timed_episode(spec, clock, root, video=False)
            on, on_seconds = timed_episode(spec, clock, root, video=True)
            _record(store, off)
            _record(store, on)
            episodes.append({"part": "video", **episode_entry(on, on_seconds)})
            video_rows.append(video_row(setting, off, on, on_seconds))
            print(f"  {setting:<14} video off {off.wall_s:6.2f} s, on {on.wall_s:6.2f} s",
                  flush=True)
    seeds = " ".join(map(str, args.seeds))
    print(f"\nSim-oracle episodes, lab, trace without video, seeds {seeds}: seconds per "
          "episode\n" + format_task_rows(task_rows))
    worst = max(row["wall_per_sim"] for row in task_rows)
    print(f"worst wall/sim {worst:.3f} ({1 / worst:.1f}x real time)")
    if video_rows:
        print(f"\nTrace video on vs off, {args.video_task} seed {args.video_seed}:\n"
              + format_video_rows(video_rows))
    args.out.write_text(json.dumps({"tasks": task_rows, "video": video_rows,
                                    "episodes": episodes}, indent=1, default=str))
    print(f"\nwrote {args.out}")
    print_report_command(args.db)
    return 0
