"""Measure the memory of one rendered ``lerobot-eval`` episode through the env plugin.

Runs LeRobot's own evaluation loop (``lerobot.scripts.lerobot_eval.eval_policy``, one episode,
rendered into a video as ``lerobot-eval`` renders its first ten) on the benchmark env, once
per render mode, each in a fresh process: ``frames`` (the env returns each 360 x 960 frame
and LeRobot keeps them all until the episode ends: the behaviour before streaming) and
``stream`` (the plugin's default: the env encodes each frame at once and LeRobot keeps a
16 x 16 placeholder). It prints the process's resident memory (RSS) every 200 control periods,
the growth from period 200 to the last and per period, and the peak.

Usage::

    MUJOCO_GL=egl .venv/bin/python scripts/measure_eval_memory.py --policy CHECKPOINT \\
        [--steps 2400] [--modes frames stream]

``CHECKPOINT`` is a LeRobot policy folder (``pretrained_model``) trained on the exporter's
dataset, e.g. by ``agentic-env train-policy``; an untrained policy never succeeds, so the
episode runs to the step limit. Both runs together take about five minutes of CPU at 2,400
periods.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import psutil

#: The task, setting and seed of the measured episode.
TASK, SETTING, SEED = "stacking", "lab", 1000
#: Control periods between two RSS samples.
SAMPLE_EVERY = 200


class _RssSampler:
    """Wraps a vector env's ``step``: the process's RSS (MB) every :data:`SAMPLE_EVERY`
    periods."""

    def __init__(self, step: Any) -> None:
        self._step = step
        self._process = psutil.Process()
        self.periods = 0
        self.samples: list[tuple[int, float]] = []

    def __call__(self, actions: Any) -> Any:
        result = self._step(actions)
        self.periods += 1
        if self.periods % SAMPLE_EVERY == 0:
            self.samples.append((self.periods, self._process.memory_info().rss / 2**20))
        return result


def measure(policy_path: Path, steps: int, mode: str) -> dict[str, Any]:
    """Run one rendered episode of ``steps`` periods with ``render=mode``; RSS samples, MB."""
    import torch
    from lerobot.configs.policies import PreTrainedConfig
    from lerobot.envs import make_env, make_env_pre_post_processors
    from lerobot.policies import make_policy, make_pre_post_processors
    from lerobot.scripts.lerobot_eval import eval_policy

    from agentic_env.envs.lerobot import AgenticEnvConfig

    policy_config = PreTrainedConfig.from_pretrained(policy_path)
    policy_config.pretrained_path = policy_path
    policy_config.device = "cpu"
    _, height, width = policy_config.input_features["observation.images.shoulder"].shape
    scratch = Path(tempfile.mkdtemp(prefix="agentic-env-memory-"))
    env_config = AgenticEnvConfig(task=TASK, setting=SETTING, episode_length=steps,
                                  observation_width=width, observation_height=height,
                                  render=mode, video_dir=str(scratch / "plugin-videos"))
    env = make_env(env_config, n_envs=1)[SETTING][TASK]
    policy = make_policy(cfg=policy_config, env_cfg=env_config)
    preprocessor, postprocessor = make_pre_post_processors(
        policy_cfg=policy_config, pretrained_path=str(policy_path),
        preprocessor_overrides={"device_processor": {"device": "cpu"}})
    env_preprocessor, env_postprocessor = make_env_pre_post_processors(env_config, policy_config)
    sampler = _RssSampler(env.step)
    env.step = sampler  # type: ignore[method-assign]
    with torch.no_grad():
        info = eval_policy(env, policy, env_preprocessor, env_postprocessor, preprocessor,
                           postprocessor, n_episodes=1, max_episodes_rendered=1,
                           videos_dir=scratch / "videos", start_seed=SEED)
    env.close()
    return {"mode": mode, "periods": sampler.periods, "samples": sampler.samples,
            "after_mb": psutil.Process().memory_info().rss / 2**20,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "success": info["per_episode"][0]["success"], "scratch": str(scratch)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", type=Path, required=True, help="policy checkpoint folder")
    parser.add_argument("--steps", type=int, default=2400, help="control periods (limit)")
    parser.add_argument("--modes", nargs="+", default=["frames", "stream"],
                        choices=["frames", "stream"])
    parser.add_argument("--one", choices=["frames", "stream"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # the child: one mode in a fresh process
        print(json.dumps(measure(args.policy, args.steps, args.one)))
        return
    for mode in args.modes:
        done = subprocess.run([sys.executable, __file__, "--policy", str(args.policy),
                               "--steps", str(args.steps), "--one", mode],
                              capture_output=True, text=True, check=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        samples = result["samples"]
        print(f"render={mode}: {result['periods']} control periods, success "
              f"{result['success']}")
        print("  RSS, MB, by period: " + ", ".join(f"{n}: {mb:.0f}" for n, mb in samples))
        if len(samples) > 1:
            (first, low), (last, high) = samples[0], samples[-1]
            print(f"  growth from period {first} to {last}: {high - low:+.0f} MB "
                  f"({(high - low) / (last - first) * 1024:+.1f} kB per period)")
        print(f"  after the video was written: {result['after_mb']:.0f} MB; "
              f"peak {result['peak_mb']:.0f} MB")


if __name__ == "__main__":
    main()
