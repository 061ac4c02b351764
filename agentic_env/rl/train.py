"""Train an SB3 baseline on the reach / pick task (``agentic-env train-rl``).

PPO (default) or SAC from stable-baselines3 on :class:`~agentic_env.rl.wrapper.ReachPickEnv`,
CPU only. Every logged value (losses, mean episode reward) is kept; at the end the policy is
evaluated deterministically and the model, the log and a summary are written to ``--out``.
Example: ``agentic-env train-rl --task reach --steps 20000 --goal-range 0.1``.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.rl.wrapper import ReachPickConfig, ReachPickEnv

#: Supported algorithms.
ALGORITHMS: tuple[str, ...] = ("ppo", "sac")


def _sb3() -> Any:
    try:
        import stable_baselines3
    except ImportError as missing:
        raise AgenticEnvError(
            "training needs stable-baselines3 and torch: install the 'rl' extra "
            "(pip install -e '.[rl]', CPU torch)"
        ) from missing
    return stable_baselines3


@dataclass(frozen=True)
class TrainConfig:
    """A training run.

    Attributes:
        env: the task settings.
        algo: ``ppo`` or ``sac``.
        steps: environment steps (control periods) to train for.
        seed: seed of the policy, the env and SB3.
        learning_rate: optimiser step size.
        eval_episodes: deterministic evaluation episodes at the end.
        torch_threads: CPU threads for torch; 1 is fastest for these small networks (more
            threads oversubscribe the cores the simulator needs: 20x slower measured on 2 cores).
    """

    env: ReachPickConfig = field(default_factory=ReachPickConfig)
    algo: str = "ppo"
    steps: int = 20_000
    seed: int = 0
    learning_rate: float = 3e-4
    eval_episodes: int = 10
    torch_threads: int = 1

    def __post_init__(self) -> None:
        if self.algo not in ALGORITHMS:
            raise InvalidConfigError(
                f"unknown algorithm {self.algo!r}; valid: {', '.join(ALGORITHMS)}"
            )
        if self.steps < 1:
            raise InvalidConfigError(f"steps must be >= 1, got {self.steps}")


@dataclass
class TrainResult:
    """What a run produced.

    Attributes:
        episode_returns: return of every training episode, in order.
        logs: every dumped SB3 log record (``train/loss``, ``train/value_loss``,
            ``train/actor_loss``, ``rollout/ep_rew_mean``...).
        eval_return: mean return of the deterministic evaluation episodes.
        eval_success_rate: fraction of evaluation episodes ending in success.
        wall_s: training wall time, seconds.
        steps: environment steps taken.
    """

    episode_returns: list[float] = field(default_factory=list)
    logs: list[dict[str, float]] = field(default_factory=list)
    eval_return: float = float("nan")
    eval_success_rate: float = float("nan")
    wall_s: float = 0.0
    steps: int = 0

    def losses(self) -> list[float]:
        """Every logged loss value (any ``train/*loss`` key)."""
        return [value for record in self.logs for key, value in record.items()
                if key.startswith("train/") and key.endswith("loss")]

    def window_means(self, window: int = 10) -> tuple[float, float]:
        """Mean return of the first and of the last ``window`` training episodes."""
        returns = self.episode_returns
        if not returns:
            return float("nan"), float("nan")
        return float(np.mean(returns[:window])), float(np.mean(returns[-window:]))


def _policy(config: TrainConfig) -> str:
    return "MlpPolicy" if config.env.observation == "state" else "MultiInputPolicy"


def make_model(config: TrainConfig, env: Any) -> Any:
    """The SB3 model for ``config`` (small networks; hyperparameters for 20 Hz, 2.5 s tasks)."""
    sb3 = _sb3()
    if config.algo == "ppo":
        return sb3.PPO(_policy(config), env, learning_rate=config.learning_rate, n_steps=512,
                       batch_size=64, n_epochs=10, gamma=0.95, gae_lambda=0.9,
                       policy_kwargs={"net_arch": [64, 64]}, seed=config.seed, device="cpu",
                       verbose=0)
    return sb3.SAC(_policy(config), env, learning_rate=config.learning_rate,
                   buffer_size=100_000, learning_starts=500, batch_size=128, gamma=0.95,
                   policy_kwargs={"net_arch": [128, 128]}, seed=config.seed, device="cpu",
                   verbose=0)


def evaluate(model: Any, env: ReachPickEnv, episodes: int, seed: int) -> tuple[float, float]:
    """(mean return, success rate) of ``episodes`` deterministic episodes."""
    returns, successes = [], []
    for episode in range(episodes):
        obs, info = env.reset(seed=seed + episode)
        total, done = 0.0, False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, info = env.step(action)
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
        successes.append(bool(info["is_success"]))
    return float(np.mean(returns)), float(np.mean(successes))


def train(config: TrainConfig, out: Path | None = None, progress: bool = False) -> TrainResult:
    """Train, evaluate, and (with ``out``) save ``model.zip``, ``log.json``, ``summary.json``.

    Raises:
        AgenticEnvError: without the ``rl`` extra installed.
    """
    _sb3()  # a clear error without the rl extra
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import KVWriter, Logger
    from stable_baselines3.common.monitor import Monitor
    from tqdm import tqdm

    torch.set_num_threads(config.torch_threads)
    result = TrainResult()

    class Capture(KVWriter):
        """Keeps every dumped log record."""

        def write(self, key_values: dict[str, Any], key_excluded: dict[str, Any],
                  step: int = 0) -> None:
            record = {k: float(v) for k, v in key_values.items()
                      if isinstance(v, int | float | np.floating)}
            result.logs.append({"step": float(step), **record})

    class Progress(BaseCallback):
        """Collects episode returns and advances the progress bar."""

        def __init__(self) -> None:
            super().__init__()
            self.bar = tqdm(total=config.steps, desc=f"{config.algo} {config.env.task}",
                            unit="step", disable=not progress)

        def _on_training_start(self) -> None:
            self.bar.total = self.model._total_timesteps  # SB3 rounds up to whole rollouts

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", []):
                if "episode" in info:
                    result.episode_returns.append(float(info["episode"]["r"]))
                    self.bar.set_postfix(ret=f"{result.episode_returns[-1]:.1f}")
            self.bar.update(1)
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    env = Monitor(ReachPickEnv(config.env))
    eval_env = ReachPickEnv(config.env)
    try:
        model = make_model(config, env)
        model.set_logger(Logger(folder=None, output_formats=[Capture()]))
        start = time.perf_counter()
        model.learn(total_timesteps=config.steps, callback=Progress(),
                    log_interval=1 if config.algo == "ppo" else 4)
        result.wall_s = time.perf_counter() - start
        result.steps = int(model.num_timesteps)
        result.eval_return, result.eval_success_rate = evaluate(
            model, eval_env, config.eval_episodes, seed=10_000 + config.seed)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            model.save(out / "model.zip")
            (out / "log.json").write_text(json.dumps(
                {"episode_returns": result.episode_returns, "logs": result.logs}))
            (out / "summary.json").write_text(json.dumps(summary(config, result), indent=2))
    finally:
        env.close()
        eval_env.close()
    return result


def summary(config: TrainConfig, result: TrainResult) -> dict[str, Any]:
    """JSON-ready figures of a run."""
    first, last = result.window_means()
    losses = result.losses()
    return {"config": asdict(config), "steps": result.steps, "wall_s": result.wall_s,
            "steps_per_s": result.steps / result.wall_s if result.wall_s else None,
            "episodes": len(result.episode_returns), "first10_return": first,
            "last10_return": last, "eval_return": result.eval_return,
            "eval_success_rate": result.eval_success_rate,
            "losses_finite": bool(losses) and all(math.isfinite(v) for v in losses)}
