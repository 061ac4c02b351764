"""Reinforcement learning: ``agentic-env train-rl``, the command line of
:mod:`agentic_env.rl.train`."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentic_env.rl import train
from agentic_env.rl.wrapper import OBSERVATIONS, TASKS, ReachPickConfig


def main(argv: list[str] | None = None) -> int:
    """``agentic-env train-rl``: train, evaluate and print the figures."""
    parser = argparse.ArgumentParser(prog="agentic-env train-rl", description=train.__doc__)
    parser.add_argument("--task", default="reach", choices=TASKS)
    parser.add_argument("--obs", default="state", choices=OBSERVATIONS)
    parser.add_argument("--algo", default="ppo", choices=train.ALGORITHMS)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--goal-range", type=float, default=0.0,
                        help="half-extent of the random reach goal box, m (0 = fixed goal)")
    parser.add_argument("--episode-steps", type=int, default=None,
                        help="control periods per episode (default 50 reach, 100 pick)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None,
                        help="run folder (default runs/rl-<task>-<algo>)")
    args = parser.parse_args(argv)
    steps = args.episode_steps or (50 if args.task == "reach" else 100)
    config = train.TrainConfig(
        env=ReachPickConfig(task=args.task, observation=args.obs, episode_steps=steps,
                            goal_range=args.goal_range),
        algo=args.algo, steps=args.steps, seed=args.seed, eval_episodes=args.eval_episodes)
    out = args.out or Path("runs") / f"rl-{args.task}-{args.algo}"
    result = train.train(config, out, progress=True)
    figures = train.summary(config, result)
    print(f"{args.algo} on {args.task} ({args.obs}), {figures['steps']} steps in "
          f"{figures['wall_s']:.0f} s ({figures['steps_per_s']:.0f} steps/s)")
    print(f"  training return: first 10 episodes {figures['first10_return']:.2f}, last 10 "
          f"{figures['last10_return']:.2f}; losses finite: {figures['losses_finite']}")
    print(f"  evaluation ({config.eval_episodes} episodes): return {figures['eval_return']:.2f}, "
          f"success {figures['eval_success_rate']:.0%}")
    print(f"wrote {out}/model.zip, log.json, summary.json")
    return 0
