"""Scripted-expert benchmark over tasks x settings (``agentic-env bench-tasks``).

The privileged scripted expert (Fast Downward reference plan, ground-truth grasps,
replanning after failed steps) on seeds of every task x setting cell (:func:`expert_specs`:
one :class:`~agentic_env.harness.episode.EpisodeSpec` each, agent :data:`EXPERT_AGENT`), run
by :func:`run_expert_episodes` on the harness's process pool with its crash rule (an episode
that raises, or whose worker dies or overruns, is an error result) and recorded into a results
database (:mod:`agentic_env.bench.store`); per cell the success rate and mean wall time per
episode (:func:`summarise`, :func:`format_table`; target :data:`SUCCESS_TARGET` everywhere).
"""
from __future__ import annotations

import os
import pathlib
import time
from collections.abc import Sequence
from typing import Any

from tqdm import tqdm

from agentic_env.bench.store import recorded
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.pool import run_pool
from agentic_env.sim.realism import BENCHMARK_REALISM

#: Success-rate target of every task x setting cell.
SUCCESS_TARGET = 0.9
#: The agent column of the expert's episodes (no registered agent: the expert reads the
#: simulator's state, which no agent may).
EXPERT_AGENT = "scripted-expert"
#: The model column of the expert's episodes: it asks no model.
EXPERT_MODEL = "none"
#: The episode function the pool's workers run (:func:`run_expert_episode`).
EXPERT_EPISODE_FN = "agentic_env.bench.tasks:run_expert_episode"
#: Camera width in pixels (16:9) when the spec names none.
DEFAULT_RESOLUTION = 320
#: The env of each (task, setting, realism, resolution) a worker process has built, reused
#: across seeds.
_ENVS: dict[tuple[str, str, str, int], Any] = {}


def expert_specs(tasks: Sequence[str], settings: Sequence[str], seeds: int,
                 resolution: int = DEFAULT_RESOLUTION, realism: str = BENCHMARK_REALISM
                 ) -> list[EpisodeSpec]:
    """The expert's episodes: seeds ``0..seeds-1`` of every task x setting cell, cameras
    ``resolution`` pixels wide (an agent option of the spec, so it is part of the key), in the
    ``realism`` world."""
    return [EpisodeSpec(task, setting, seed=seed, agent=EXPERT_AGENT, model=EXPERT_MODEL,
                        agent_options=(("resolution", resolution),), realism=realism)
            for task in tasks for setting in settings for seed in range(seeds)]


def run_expert_episode(spec: EpisodeSpec, *, trace_root: pathlib.Path | None = None
                       ) -> EpisodeResult:
    """Run the expert on ``spec``'s trial (the pool's episode function; envs are cached per
    worker process and cell). ``trace_root`` is ignored: the expert writes no trace. Scored as
    the harness scores an agent (:func:`agentic_env.harness.runner.run_episode`: with no
    reference plan the score is the success); an unmet goal is an ``execution`` failure.
    Anything raised is the pool's to record as an error result."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    from agentic_env.contract.workcell import SceneConfig
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.experts import expert_actions

    resolution = int(spec.options().get("resolution", DEFAULT_RESOLUTION))
    cell = (spec.task, spec.setting, spec.realism, resolution)
    start = time.perf_counter()
    if cell not in _ENVS:
        scene = SceneConfig.at_resolution(resolution, resolution * 9 // 16)
        _ENVS[cell] = SimEnv(task=spec.task, setting=spec.setting, scene=scene,
                             realism=spec.realism)
    env = _ENVS[cell]
    _, info = env.reset(seed=spec.seed)
    steps = 0
    for action in expert_actions(env.task, env.scene_state):
        _, _, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            break
    success = bool(info["success"])
    score = env.episode_score()
    counts = ((float(success), 0, 0, 0) if score is None
              else (score.score, score.n_done, score.n_extra, score.n_required))
    return EpisodeResult(
        spec=spec, success=success, progress=env.task.evaluate(env.scene_state).progress,
        score=counts[0], n_done=counts[1], n_extra=counts[2], n_required=counts[3],
        actions=steps, wall_s=time.perf_counter() - start, sim_s=float(info["sim_time"]),
        failure=None if success else "execution",
        failure_detail="" if success else "the expert's plan ran out with the goal unmet")


def run_expert_episodes(specs: Sequence[EpisodeSpec], workers: int, db: str | pathlib.Path
                        ) -> list[EpisodeResult]:
    """Run ``specs`` (from :func:`expert_specs`) on ``workers`` spawned processes of the
    harness's pool (:func:`agentic_env.harness.pool.run_pool`; GL contexts must not be
    forked), each recorded into the results database ``db`` as it finishes, with a progress
    bar; the results in the order of ``specs``."""
    finished = recorded(db, run_pool(specs, EXPERT_EPISODE_FN, None, workers))
    results = {item.key: item.result for item in tqdm(finished, total=len(specs),
                                                      desc="expert episodes", unit="episode")}
    return [results[spec.key()] for spec in specs]


def summarise(results: list[EpisodeResult]) -> list[dict[str, Any]]:
    """Per task x setting: episodes, success rate, mean progress score, wall and simulated
    time (seconds) and crashed episodes."""
    cells: dict[tuple[str, str], list[EpisodeResult]] = {}
    for result in results:
        cells.setdefault((result.spec.task, result.spec.setting), []).append(result)
    rows = []
    for (task, setting), episodes in sorted(cells.items()):
        rows.append({
            "task": task, "setting": setting, "episodes": len(episodes),
            "success_rate": sum(e.success for e in episodes) / len(episodes),
            "mean_progress_score": sum(e.score for e in episodes) / len(episodes),
            "mean_wall_s": sum(e.wall_s for e in episodes) / len(episodes),
            "mean_sim_s": sum(e.sim_s for e in episodes) / len(episodes),
            "errors": sum(e.failure == "error" for e in episodes),
        })
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    """A fixed-width table of :func:`summarise` rows with PASS/MISS against the target."""
    lines = [f"{'task':<14}{'setting':<10}{'episodes':>9}{'success':>9}{'score':>7}"
             f"{'wall s':>8}{'sim s':>8}  target"]
    for row in rows:
        verdict = "PASS" if row["success_rate"] >= SUCCESS_TARGET else "MISS"
        lines.append(
            f"{row['task']:<14}{row['setting']:<10}{row['episodes']:>9}"
            f"{row['success_rate']:>8.0%} {row['mean_progress_score']:>6.2f}"
            f"{row['mean_wall_s']:>8.1f}{row['mean_sim_s']:>8.1f}  {verdict}"
        )
    return "\n".join(lines)
