"""An agent with the sim-oracle, measured (``agentic-env bench-agent``).

The episodes of the benchmark's parts (:func:`task_groups`: every task x setting x
paraphrase category; :func:`checker_groups`: injected checker errors in the ``full`` and
``goal`` verification modes), run on the harness's process pool (:func:`run_all`, with its
crash rule: an episode that raises, or whose worker dies or overruns, is an error result;
each episode recorded into a results database as it finishes, :mod:`agentic_env.bench.store`),
and the table of their figures (:func:`summarise`, :func:`format_rows`). The intervention
part is :mod:`agentic_env.bench.interventions`.
"""

from __future__ import annotations

import math
import pathlib
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from tqdm import tqdm

from agentic_env.bench.store import recorded
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.pool import run_pool
from agentic_env.harness.sweep import DEFAULT_EPISODE_FN


def run_all(specs: list[EpisodeSpec], workers: int, db: str | pathlib.Path | None = None
            ) -> list[EpisodeResult]:
    """Run ``specs`` (without traces) on ``workers`` spawned processes of the harness's pool
    (:func:`agentic_env.harness.pool.run_pool`), with a progress bar; the results in the
    order of ``specs``. With ``db``, each episode is recorded into that results database as
    it finishes (:func:`agentic_env.bench.store.recorded`)."""
    finished = run_pool(specs, DEFAULT_EPISODE_FN, None, workers)
    if db is not None:
        finished = recorded(db, finished)
    results = {item.key: item.result
               for item in tqdm(finished, total=len(specs), desc="episodes", unit="ep")}
    return [results[spec.key()] for spec in specs]


def task_groups(tasks: Sequence[str], settings: Sequence[str], seeds: range, model: str,
                modules: tuple[tuple[str, str], ...], modules_label: str,
                categories: Sequence[str | None], common: dict[str, Any]
                ) -> dict[str, list[EpisodeSpec]]:
    """Part 1's episodes: one labelled group per task x setting x paraphrase category
    (``None``: the task's default instruction), each on ``seeds``.

    Args:
        modules: per-module model overrides (sorted ``(module, spec)`` pairs).
        modules_label: how the label names the overrides (the ``--modules`` text).
        common: the :class:`EpisodeSpec` fields every episode shares (agent, its options,
            realism).
    """
    groups: dict[str, list[EpisodeSpec]] = {}
    for task in tasks:
        for setting in settings:
            for category in categories:
                label = (f"{task} / {setting} / {model}{' ' + modules_label if modules else ''}"
                         f" / " + (category or "full"))
                groups[label] = [EpisodeSpec(task, setting, seed=s, model=model,
                                             modules=modules, instruction_category=category,
                                             **common)
                                 for s in seeds]
    return groups


def checker_groups(tasks: Sequence[str], setting: str, seeds: range, rates: Sequence[float],
                   common: dict[str, Any]) -> dict[str, list[EpisodeSpec]]:
    """Part 2's episodes: the sim-oracle with each checker error rate of ``rates``, in the
    ``full`` and the ``goal`` verification mode, on ``tasks`` in ``setting``."""
    return {f"{task} / checker={rate:g} / {mode}": [
        EpisodeSpec(task, setting, seed=s, model=f"sim-oracle?checker={rate:g}",
                    verification=mode, **common) for s in seeds]
        for task in tasks for rate in rates for mode in ("full", "goal")}


def summarise(label: str, results: Iterable[EpisodeResult]) -> dict[str, float | str | int]:
    """One table row: success rate, means of score, actions, replans, wall time, model
    calls, their latency (s, summed over the episode's calls) and tokens per episode; for
    agents judged
    by ALRM's trace judge also its success rate (sum of scores / 2n) and the share of
    episodes where judge and world state disagree (``nan`` when none was judged; printed
    as ``-``)."""
    results = list(results)
    judged = [(r.judge_score, r.success) for r in results if r.judge_score is not None]
    return {
        "config": label,
        "episodes": len(results),
        "success": sum(r.success for r in results) / len(results),
        "score": statistics.fmean(r.score for r in results),
        "actions": statistics.fmean(r.actions for r in results),
        "replans": statistics.fmean(r.replans for r in results),
        "wall_s": statistics.fmean(r.wall_s for r in results),
        "calls": statistics.fmean(len(r.calls) for r in results),
        "model_s": statistics.fmean(r.model_s for r in results),
        "tokens": statistics.fmean(r.input_tokens + r.output_tokens for r in results),
        "judge": (sum(score for score, _ in judged) / (2 * len(judged)) if judged
                  else float("nan")),
        "disagree": (sum((score == 2) != ok for score, ok in judged) / len(judged)
                     if judged else float("nan")),
    }


def format_rows(rows: list[dict[str, float | str | int]]) -> str:
    """A fixed-width text table of :func:`summarise` rows."""
    lines = [f"{'config':<46}{'n':>4}{'success':>9}{'score':>7}{'actions':>9}{'replans':>9}"
             f"{'wall s':>8}{'calls':>7}{'model s':>9}{'tokens':>8}{'judge':>7}"
             f"{'disagree':>9}"]
    for row in rows:
        lines.append(f"{row['config']:<46}{row['episodes']:>4}{row['success']:>9.0%}"
                     f"{row['score']:>7.2f}{row['actions']:>9.1f}{row['replans']:>9.1f}"
                     f"{row['wall_s']:>8.1f}{row['calls']:>7.1f}{row['model_s']:>9.2f}"
                     f"{row['tokens']:>8.0f}"
                     f"{_share(row['judge']):>7}{_share(row['disagree']):>9}")
    return "\n".join(lines)


def _share(value: float) -> str:
    """A rate as a percentage, ``-`` when there was nothing to measure (``nan``)."""
    return "-" if math.isnan(value) else f"{value:.0%}"
