"""``agentic-env soak``'s figures as the results database records them: one measurement per
part it ran (:mod:`agentic_env.bench.store`), the summary it prints, not its RSS samples.

* the episode part (``part = episodes``, keyed by episodes and agent) and the MCP part
  (``part = mcp``, keyed by calls and seed): the part's
  :class:`~agentic_env.cli.bench.soak_figures.SoakFigures` (runs, RSS at the first and last sample
  and the fitted slope, MiB, the slope's unit ``per`` runs, crashes, results lost) and
  ``unit`` (``episodes``, ``calls``);
* the sweep part (``part = sweep``, keyed by episodes, workers, ``kill_at``, ``max_actions``
  and world): :func:`sweep_figures`.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, cast

from agentic_env.bench.store import measurement
from agentic_env.cli.bench.soak_figures import SoakFigures, SweepRun, SweepSoak
from agentic_env.harness.db import Measurement

#: Seed of the MCP part's hostile calls (``soak_mcp``'s default, the one the command runs).
MCP_SEED = 0


def _fit(fit: tuple[float, float, float] | None, first: str) -> dict[str, float | None]:
    keys = (f"{first}_first_mib", f"{first}_last_mib", "slope_mib")
    return dict(zip(keys, fit if fit is not None else (None, None, None), strict=True))


def _run_figures(run: SweepRun) -> dict[str, Any]:
    """One ``agentic-env sweep`` run of the sweep part: its outcome, the group's fit (first
    and last sample after the warm-up, slope per 100 episodes, MiB; ``None`` without a fit)
    and each fitted process's line through its floors; the other processes counted, with the
    largest one's peak (MiB)."""
    others = [p for p in run.per_process if p.role == "other"]
    return {"stored_start": run.stored_start, "stored_end": run.stored_end,
            "wall_s": run.wall_s, "killed": run.killed, "exit_code": run.exit_code,
            "survivors": run.survivors, "processes": run.processes, "summary": run.summary,
            "samples": len(run.at), "warm": run.warm(), **_fit(run.fit(), "rss"),
            "per_process": [{"pid": p.pid, "role": p.role, "samples": len(p.at),
                             **_fit(fit, "floor")} for p, fit in run.process_fits()],
            "others": len(others),
            "others_largest_mib": max((max(p.rss_mib) for p in others if p.rss_mib),
                                      default=None)}


def sweep_figures(soak: SweepSoak, bound_mib: float, share_mib: float) -> dict[str, Any]:
    """The sweep part's summary: how it ran (episodes, workers, ``max_actions``, world), the
    database checks (integrity, stored, lost, duplicated, extra, unparsable, orphan calls,
    errors; ``intact``), each run (:func:`_run_figures`) and the RSS verdicts: ``flat``
    against ``bound_mib`` (the group's bound, MiB per 100 episodes) and ``flat_per_process``
    against ``share_mib`` (each process's share), ``None`` where nothing could be fitted."""
    return {"episodes": soak.episodes, "workers": soak.workers,
            "max_actions": soak.max_actions, "realism": soak.realism,
            "integrity": soak.integrity, "stored": soak.stored, "lost": soak.lost,
            "duplicated": soak.duplicated, "extra": soak.extra,
            "unparsable": soak.unparsable, "orphan_calls": soak.orphan_calls,
            "errors": soak.errors, "intact": soak.intact(),
            "runs": [_run_figures(run) for run in soak.runs],
            "rss_bound_mib": bound_mib, "process_bound_mib": share_mib,
            "flat": soak.flat(), "flat_per_process": soak.flat_per_process()}


def soak_measurements(figures: Mapping[str, SoakFigures | SweepSoak],
                      args: argparse.Namespace, walls: Mapping[str, float],
                      bound_mib: float, share_mib: float) -> list[Measurement]:
    """A measurement per part in ``figures`` (``episodes``, ``mcp``, ``sweep``) with the
    parameters ``args`` ran it with and its wall time ``walls[part]`` (seconds); the sweep
    part's bounds as in :func:`sweep_figures`."""
    items = []
    for part, outcome in figures.items():
        if part == "sweep":
            params: dict[str, Any] = {
                "episodes": args.sweep_episodes, "workers": args.workers,
                "kill_at": args.kill_at, "max_actions": args.max_actions,
                "realism": args.realism}
            data = {**sweep_figures(cast("SweepSoak", outcome), bound_mib, share_mib),
                    "kill_at": args.kill_at, "sample_s": args.sample_s}
        elif part == "episodes":
            params = {"episodes": args.episodes, "agent": args.agent}
            data = {**asdict(outcome), "unit": "episodes"}
        else:
            params = {"calls": args.calls, "seed": MCP_SEED}
            data = {**asdict(outcome), "unit": "calls"}
        items.append(measurement("soak", {"part": part, **params}, data, walls[part]))
    return items
