"""Demonstration-collection benchmark (``agentic-env bench-collect``).

Collects ``--episodes`` scripted-expert episodes into a fresh dataset at the default camera
resolution (640 x 360) and prints: frames recorded per second of wall time (rendering both
cameras every control period, encoding, writing), the same per worker, and the dataset size
per episode split into videos and Parquet. Writes the figures as JSON to ``--json``
(:mod:`agentic_env.bench.collect`) and records them into the results database ``--db``
(default ``runs/bench_collect.db``) as one measurement keyed by task, setting, episodes,
workers, resolution, depth, codec and world (recordings without an episode spec, so not
episodes); ``agentic-env report DB`` shows them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agentic_env.bench.collect import run_benchmark
from agentic_env.bench.store import measurement, record_measurements
from agentic_env.cli.bench import add_db_argument, print_report_command
from agentic_env.datasets.collect import CollectConfig, parse_resolution


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-collect", description=__doc__)
    parser.add_argument("--task", default="stacking")
    parser.add_argument("--setting", default="lab")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--resolution", default="640x360")
    parser.add_argument("--depth", action="store_true")
    parser.add_argument("--codec", default="h264", choices=("h264", "av1"))
    parser.add_argument("--out", type=Path, default=None, help="keep the dataset here")
    parser.add_argument("--json", type=Path, default=Path("runs/bench_collect.json"))
    add_db_argument(parser, "bench_collect", "measurement")
    args = parser.parse_args(argv)
    width, height = parse_resolution(args.resolution)
    config = CollectConfig(task=args.task, setting=args.setting, width=width, height=height,
                           depth=args.depth, codec=args.codec)
    figures = run_benchmark(config, args.episodes, args.workers, args.out)
    print(f"{figures['task']}/{figures['setting']} at {figures['resolution']} "
          f"({figures['codec']}, depth {'on' if figures['depth'] else 'off'}), "
          f"{figures['workers']} worker(s): {figures['episodes']} episodes, "
          f"{figures['frames']} frames in {figures['wall_s']:.1f} s")
    print(f"  frames recorded per second: {figures['frames_per_s']:.1f} "
          f"({figures['frames_per_s_per_worker']:.1f} per worker)")
    print(f"  MB per episode: {figures['mb_per_episode']:.2f} (video "
          f"{figures['video_mb_per_episode']:.2f}, parquet {figures['parquet_mb_per_episode']:.2f}"
          f"); {figures['frames_per_episode']:.0f} frames per episode, "
          f"{figures['kb_per_frame']:.1f} kB per frame")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(figures, indent=2))
    params = {"task": config.task, "setting": config.setting, "episodes": args.episodes,
              "workers": args.workers, "resolution": figures["resolution"],
              "depth": config.depth, "codec": config.codec, "world": config.realism}
    record_measurements(args.db,
                        [measurement("bench-collect", params, figures, figures["wall_s"])])
    print(f"JSON figures: {args.json}")
    print_report_command(args.db, "measurements")
    return 0

