"""Scripted-expert benchmark over tasks x settings (``agentic-env bench-tasks``).

Runs the privileged scripted expert (Fast Downward reference plan, ground-truth grasps,
replanning after failed steps) for ``--seeds`` seeds in every task x setting cell, in
``--workers`` spawned processes, and prints the success rate and mean wall time per episode of
each cell (target: >= 90 % success everywhere). Writes every episode to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

#: Success-rate target of every task x setting cell.
SUCCESS_TARGET = 0.9
_ENVS: dict[tuple[str, str], Any] = {}


@dataclass(frozen=True)
class EpisodeResult:
    """One expert episode: its cell, outcome and cost."""

    task: str
    setting: str
    seed: int
    success: bool
    progress_score: float | None
    primitives: int
    sim_time: float
    wall_time: float
    error: str = ""


def _run_episode(job: tuple[str, str, int, int]) -> EpisodeResult:
    """Run the expert on one seed (in a worker process; envs are cached per cell)."""
    task, setting, seed, resolution = job
    os.environ.setdefault("MUJOCO_GL", "egl")
    from agentic_env.contract.workcell import SceneConfig
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.experts import expert_actions

    key = (task, setting)
    start = time.perf_counter()
    try:
        if key not in _ENVS:
            width, height = resolution, resolution * 9 // 16
            scene = SceneConfig.at_resolution(width, height)
            _ENVS[key] = SimEnv(task=task, setting=setting, scene=scene)
        env = _ENVS[key]
        _, info = env.reset(seed=seed)
        steps = 0
        for action in expert_actions(env.task, env.scene_state):
            _, _, terminated, truncated, info = env.step(action)
            steps += 1
            if terminated or truncated:
                break
        score = None
        if hasattr(env.task, "domain"):
            score = env.progress_score().score
        return EpisodeResult(task, setting, seed, bool(info["success"]), score, steps,
                             float(info["sim_time"]), time.perf_counter() - start)
    except Exception as error:  # a crashed episode is a result, not the end of the sweep
        return EpisodeResult(task, setting, seed, False, None, 0, 0.0,
                             time.perf_counter() - start, f"{type(error).__name__}: {error}")


def summarise(results: list[EpisodeResult]) -> list[dict[str, Any]]:
    """Per task x setting: episodes, success rate, mean progress score and wall time."""
    cells: dict[tuple[str, str], list[EpisodeResult]] = {}
    for result in results:
        cells.setdefault((result.task, result.setting), []).append(result)
    rows = []
    for (task, setting), episodes in sorted(cells.items()):
        scores = [e.progress_score for e in episodes if e.progress_score is not None]
        rows.append({
            "task": task, "setting": setting, "episodes": len(episodes),
            "success_rate": sum(e.success for e in episodes) / len(episodes),
            "mean_progress_score": sum(scores) / len(scores) if scores else None,
            "mean_wall_s": sum(e.wall_time for e in episodes) / len(episodes),
            "mean_sim_s": sum(e.sim_time for e in episodes) / len(episodes),
            "errors": sum(bool(e.error) for e in episodes),
        })
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    """A fixed-width table of :func:`summarise` rows with PASS/MISS against the target."""
    lines = [f"{'task':<14}{'setting':<10}{'episodes':>9}{'success':>9}{'score':>7}"
             f"{'wall s':>8}{'sim s':>8}  target"]
    for row in rows:
        score = row["mean_progress_score"]
        verdict = "PASS" if row["success_rate"] >= SUCCESS_TARGET else "MISS"
        lines.append(
            f"{row['task']:<14}{row['setting']:<10}{row['episodes']:>9}"
            f"{row['success_rate']:>8.0%} {'-' if score is None else f'{score:.2f}':>6}"
            f"{row['mean_wall_s']:>8.1f}{row['mean_sim_s']:>8.1f}  {verdict}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the sweep; return 1 with ``--strict`` if a cell misses the target."""
    from agentic_env.registry import ENV_IDS
    from agentic_env.sim.settings import available_settings

    tasks = [task for task in ENV_IDS.values() if task != "tabletop"]
    parser = argparse.ArgumentParser(prog="agentic-env bench-tasks", description=__doc__)
    parser.add_argument("--tasks", nargs="+", default=tasks, help=f"default: {tasks}")
    parser.add_argument("--settings", nargs="+", default=available_settings())
    parser.add_argument("--seeds", type=int, default=20, help="seeds per cell (default 20)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--resolution", type=int, default=320,
                        help="camera width in pixels (16:9; default 320)")
    parser.add_argument("--out", type=Path, default=Path("runs/bench_tasks.json"))
    parser.add_argument("--strict", action="store_true", help="exit 1 if a cell misses")
    args = parser.parse_args(argv)
    jobs = [(task, setting, seed, args.resolution) for task in args.tasks
            for setting in args.settings for seed in range(args.seeds)]
    context = multiprocessing.get_context("spawn")  # GL contexts must not be forked
    with context.Pool(args.workers) as pool:
        results = list(tqdm(pool.imap_unordered(_run_episode, jobs), total=len(jobs),
                            desc="expert episodes", unit="episode"))
    rows = summarise(results)
    print(format_table(rows))
    for failure in (r for r in results if r.error):
        print(f"error in {failure.task}/{failure.setting}/seed {failure.seed}: {failure.error}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"cells": rows, "episodes": [asdict(r) for r in results]},
                                   indent=2))
    print(f"JSON report: {args.out}")
    missed = any(row["success_rate"] < SUCCESS_TARGET for row in rows)
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
