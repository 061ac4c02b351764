"""Demonstration datasets: ``agentic-env collect``, ``check-dataset`` and ``replay-demo``.

The command lines of :mod:`agentic_env.datasets.collect`, :mod:`agentic_env.datasets.reader`
and :mod:`agentic_env.datasets.replay`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from agentic_env.cli.realism import add_realism_argument
from agentic_env.contract.seeds import DEMONSTRATION_SEED_START, DEMONSTRATION_SEEDS, describe
from agentic_env.datasets import collect, replay
from agentic_env.datasets.reader import DatasetReader, verify_dataset
from agentic_env.datasets.video import CODECS
from agentic_env.errors import AgenticEnvError


def _collect_parser() -> argparse.ArgumentParser:
    from agentic_env.tasks import TASKS

    parser = argparse.ArgumentParser(prog="agentic-env collect", description=collect.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="stacking", choices=sorted(TASKS))
    parser.add_argument("--setting", default="lab")
    parser.add_argument("--episodes", type=int, default=50,
                        help="episodes wanted in the dataset (default 50)")
    parser.add_argument("--out", type=Path, required=True, help="dataset folder")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--resolution", default="640x360", help="camera WxH (default 640x360)")
    parser.add_argument("--depth", action="store_true", help="also record depth (16-bit PNG)")
    parser.add_argument("--randomize", action="store_true",
                        help="randomise the setting's dressing per episode")
    parser.add_argument("--disturbances", nargs="*", default=[],
                        help="kind[:primitive[:occurrence[:magnitude]]], e.g. move_target:pick:1")
    add_realism_argument(parser)
    parser.add_argument("--codec", default="h264", choices=sorted(CODECS))
    parser.add_argument("--crf", type=int, default=23, help="video quality (default 23)")
    parser.add_argument("--keep-failed", action="store_true",
                        help="keep failed expert episodes in the dataset")
    parser.add_argument("--seed-start", type=int, default=DEMONSTRATION_SEED_START,
                        help="first trial seed, in the demonstration range "
                             f"{describe(DEMONSTRATION_SEEDS)} (default "
                             f"{DEMONSTRATION_SEED_START}; evaluations use the seeds below)")
    parser.add_argument("--max-attempts", type=int, default=None,
                        help="seeds to try at most (default 2 * episodes + 10)")
    parser.add_argument("--no-progress", action="store_true")
    return parser


def collect_main(argv: list[str] | None = None) -> int:
    """``agentic-env collect``: return 0 when the dataset holds the requested episodes, 1 when
    it does not, 2 on a usage error (e.g. a seed outside the demonstration range)."""
    args = _collect_parser().parse_args(argv)
    try:
        width, height = collect.parse_resolution(args.resolution)
        config = collect.CollectConfig(
            task=args.task, setting=args.setting, width=width, height=height, depth=args.depth,
            randomize=args.randomize,
            disturbances=tuple(collect.parse_disturbance(d) for d in args.disturbances),
            codec=args.codec, crf=args.crf, keep_failed=args.keep_failed, realism=args.realism)
        summary = collect.collect(args.out, config, args.episodes, args.workers,
                                  args.seed_start, args.max_attempts,
                                  progress=not args.no_progress)
    except AgenticEnvError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"dataset {args.out}: {summary['episodes_in_dataset']} episodes, "
          f"{summary['frames_in_dataset']} frames at {config.control_hz:g} fps; "
          f"expert failed {summary['episodes_failed']} of {summary['episodes_attempted']} "
          f"attempts (seeds {summary['failed_seeds']})")
    print(f"instruction categories: {summary['instruction_categories']}")
    return 0 if summary["episodes_in_dataset"] >= args.episodes else 1


def check_dataset_main(argv: list[str] | None = None) -> int:
    """``agentic-env check-dataset DIR``: structural checks; exit 1 on any problem."""
    parser = argparse.ArgumentParser(prog="agentic-env check-dataset",
                                     description="Check a LeRobot dataset frame by frame.")
    parser.add_argument("root", type=Path)
    args = parser.parse_args(argv)
    report = verify_dataset(args.root)
    print(f"{args.root}: {report.episodes} episodes, {report.frames} frames, "
          f"{'OK' if report.ok else f'{len(report.problems)} problems'}")
    for line in report.problems:
        print(f"  {line}")
    return 0 if report.ok else 1


def replay_demo_main(argv: list[str] | None = None) -> int:
    """``agentic-env replay-demo DIR``: replay episodes; exit 1 if any outcome is not
    reproduced."""
    parser = argparse.ArgumentParser(prog="agentic-env replay-demo", description=replay.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path, help="dataset folder")
    parser.add_argument("--episodes", type=int, nargs="*", default=None,
                        help="episode indices (default: all)")
    parser.add_argument("--mode", default="joint_position", choices=sorted(replay.MODES))
    parser.add_argument("--json", type=Path, default=None, help="also write the reports here")
    args = parser.parse_args(argv)
    episodes = args.episodes if args.episodes is not None else range(len(DatasetReader(args.root)))
    reports = [replay.replay_episode(args.root, e, args.mode) for e in episodes]
    for report in reports:
        print(replay.format_report(report))
    reproduced = sum(r.outcome_reproduced for r in reports)
    print(f"outcome reproduced in {reproduced}/{len(reports)} episodes; faithful (joint drift "
          f"< {replay.JOINT_TOLERANCE} rad) in {sum(r.faithful for r in reports)}")
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in reports], indent=2))
    return 0 if reproduced == len(reports) else 1
