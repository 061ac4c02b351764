"""``agentic-env train-policy``: demonstrations, a small ACT policy, a checkpoint.

Collects the task's demonstrations with the scripted expert at a reduced camera resolution
(``agentic-env collect``; by default the AgenticLab paper's counts, Sec. VI-E: 40 sorting,
30 stacking; from the reserved demonstration seeds, 1000000 on, so that every evaluation
seed, 0-999999, is a fresh trial), trains a
small ACT on the CPU with LeRobot's classes for a bounded number of steps or minutes
(:mod:`agentic_env.agents.policy.training`), prints steps per second, and saves the
checkpoint, with the demonstrations' seeds, where ``--agent policy`` looks by default
(``runs/policies/<task>``; it refuses to evaluate on those seeds). This is a
small CPU policy, not the paper's pi0.5 (see ``scripts/train_pi05_lora.sh`` for that, on a
GPU). Needs the ``vla`` extra (lerobot, Python >= 3.12).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agentic_env.contract.seeds import DEMONSTRATION_SEED_START, DEMONSTRATION_SEEDS, describe
from agentic_env.errors import AgenticEnvError

#: Demonstrations per task of the paper's VLA baseline (AgenticLab Sec. VI-E / Fig. 8(b):
#: pi0.5 fine-tuned on 40 sorting and 30 stacking demonstrations).
PAPER_DEMONSTRATIONS: dict[str, int] = {"sorting": 40, "stacking": 30}


def _parser() -> argparse.ArgumentParser:
    from agentic_env.tasks import TASKS

    parser = argparse.ArgumentParser(prog="agentic-env train-policy", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="stacking", choices=sorted(TASKS))
    parser.add_argument("--setting", default="lab")
    parser.add_argument("--episodes", type=int, default=None,
                        help="demonstrations (default: the paper's count, 40 sorting / 30 "
                             "stacking, else 30)")
    parser.add_argument("--resolution", default="128x72",
                        help="camera WxH of the demonstrations (default 128x72)")
    parser.add_argument("--workers", type=int, default=1, help="collection processes")
    parser.add_argument("--seed-start", type=int, default=DEMONSTRATION_SEED_START,
                        help="first demonstration seed, in "
                             f"{describe(DEMONSTRATION_SEEDS)} (default "
                             f"{DEMONSTRATION_SEED_START})")
    parser.add_argument("--steps", type=int, default=2000, help="training steps at most")
    parser.add_argument("--max-minutes", type=float, default=30.0,
                        help="training wall-clock limit, minutes (default 30)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--chunk-size", type=int, default=20,
                        help="actions per chunk (default 20: one second at 20 Hz)")
    parser.add_argument("--dataset", type=Path, default=None,
                        help="dataset folder (default runs/datasets/<task>-<WxH>)")
    parser.add_argument("--out", type=Path, default=None,
                        help="checkpoint folder (default runs/policies/<task>)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Collect, train, save; print the training speed. Returns 0 on success, 2 on a usage
    error (e.g. seeds outside the demonstration range, or a dataset collected on others)."""
    from agentic_env.agents.base import agent_entry
    from agentic_env.agents.policy.training import TrainConfig, train_act
    from agentic_env.datasets import collect

    args = _parser().parse_args(argv)
    try:
        width, height = collect.parse_resolution(args.resolution)
        episodes = args.episodes or PAPER_DEMONSTRATIONS.get(args.task, 30)
        dataset = args.dataset or Path(f"runs/datasets/{args.task}-{width}x{height}")
        out = args.out or Path(
            str(agent_entry("policy").options["checkpoint"]).format(task=args.task))
        summary = collect.collect(dataset, collect.CollectConfig(
            task=args.task, setting=args.setting, width=width, height=height),
            episodes, args.workers, args.seed_start)
    except AgenticEnvError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"dataset {dataset}: {summary['episodes_in_dataset']} demonstrations, "
          f"{summary['frames_in_dataset']} frames")
    result = train_act(dataset, out, TrainConfig(
        steps=args.steps, max_s=args.max_minutes * 60.0, batch_size=args.batch_size,
        chunk_size=args.chunk_size), log=print)
    (out / "training.json").write_text(json.dumps(
        {**result, "dataset": str(dataset), "episodes": summary["episodes_in_dataset"],
         "resolution": [width, height], "batch_size": args.batch_size}, indent=2))
    print(f"trained ACT {result['steps']} steps in {result['seconds']:.0f} s: "
          f"{result['steps_per_s']:.3f} steps/s (batch {args.batch_size}, {width}x{height}); "
          f"checkpoint {result['checkpoint']}")
    return 0
