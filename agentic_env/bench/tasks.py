"""Scripted-expert benchmark over tasks x settings (``agentic-env bench-tasks``).

The privileged scripted expert (Fast Downward reference plan, ground-truth grasps,
replanning after failed steps) on seeds of every task x setting cell, in spawned worker
processes (:func:`run_expert_episodes`, one :class:`ExpertEpisode` each), and per cell the
success rate and mean wall time per episode (:func:`summarise`, :func:`format_table`; target
:data:`SUCCESS_TARGET` everywhere).
"""
from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

#: Success-rate target of every task x setting cell.
SUCCESS_TARGET = 0.9
#: The env of each (task, setting) cell a worker process has built, reused across seeds.
_ENVS: dict[tuple[str, str], Any] = {}


@dataclass(frozen=True)
class ExpertEpisode:
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


def _run_episode(job: tuple[str, str, int, int]) -> ExpertEpisode:
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
        progress = env.episode_score()
        score = None if progress is None else progress.score
        return ExpertEpisode(task, setting, seed, bool(info["success"]), score, steps,
                             float(info["sim_time"]), time.perf_counter() - start)
    except Exception as error:  # a crashed episode is a result, not the end of the sweep
        return ExpertEpisode(task, setting, seed, False, None, 0, 0.0,
                             time.perf_counter() - start, f"{type(error).__name__}: {error}")


def summarise(results: list[ExpertEpisode]) -> list[dict[str, Any]]:
    """Per task x setting: episodes, success rate, mean progress score and wall time."""
    cells: dict[tuple[str, str], list[ExpertEpisode]] = {}
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


def run_expert_episodes(tasks: Sequence[str], settings: Sequence[str], seeds: int,
                        resolution: int, workers: int) -> list[ExpertEpisode]:
    """The expert on seeds ``0..seeds-1`` of every task x setting cell, on ``workers``
    spawned processes (GL contexts must not be forked), with a progress bar; cameras
    ``resolution`` pixels wide (16:9)."""
    jobs = [(task, setting, seed, resolution) for task in tasks
            for setting in settings for seed in range(seeds)]
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers) as pool:
        return list(tqdm(pool.imap_unordered(_run_episode, jobs), total=len(jobs),
                         desc="expert episodes", unit="episode"))
