"""The realistic world's budget measured (``agentic-env bench-world``): the episodes to run
and the results file.

Every agent x task x setting x seed in the ideal world, the realistic one and the realistic
one with each world effect alone (:func:`world_specs`), or each effect alone only on the
trials the realistic world broke (:func:`effect_specs`); the budget of their results is
:mod:`agentic_env.bench.world_budget`'s. The results file holds one
:func:`episode_record` per episode (:func:`load_results` reads it back).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from agentic_env.bench.world_budget import (
    BOUND_CELL,
    REALISTIC,
    classify_failure,
    world_cells,
    world_of,
)
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec


def world_specs(agents: list[str], tasks: list[str], settings: list[str], seeds: range,
                effects: tuple[str, ...], bound_seeds: range = range(0)) -> list[EpisodeSpec]:
    """Every episode to run: each agent x task x setting x seed in the ideal world, the
    realistic world and the realistic world with each of ``effects`` alone; the bound's cell
    (:data:`~agentic_env.bench.world_budget.BOUND_CELL`, where it is asked for) also on
    ``bound_seeds``."""
    worlds: list[tuple[str, tuple[str, ...] | None]] = [("ideal", None), (REALISTIC, None)]
    worlds += [(REALISTIC, (effect,)) for effect in effects]
    return [EpisodeSpec(task, setting, seed=seed, agent=agent, realism=realism,
                        world_effects=world_effects)
            for agent in agents for task in tasks for setting in settings
            for seed in (dict.fromkeys([*seeds, *bound_seeds])
                         if (agent, task, setting) == BOUND_CELL else seeds)
            for realism, world_effects in worlds]


def effect_specs(results: list[EpisodeResult], effects: tuple[str, ...]) -> list[EpisodeSpec]:
    """Each of ``effects`` alone on the trials the realistic world broke (that the ideal world
    solved): which effect reproduces each of the world's failures."""
    return [replace(result.spec, world_effects=(effect,)) for cell in world_cells(results)
            for result in cell.broken(REALISTIC) for effect in effects]


def episode_record(result: EpisodeResult) -> dict[str, object]:
    """One episode for the JSON file, with its world and its failure's cause."""
    return {"spec": result.spec.to_dict(), "world": world_of(result.spec),
            "success": result.success, "failure": result.failure,
            "failure_detail": result.failure_detail,
            "cause": None if result.success else classify_failure(result.failure,
                                                                  result.failure_detail),
            "progress": result.progress, "score": result.score, "actions": result.actions,
            "replans": result.replans, "n_extra": result.n_extra}


def load_results(path: Path) -> list[EpisodeResult]:
    """The episodes of a results file ``agentic-env bench-world`` wrote (one
    :func:`episode_record` each), with what the budget needs of each.

    Raises:
        InvalidConfigError: the file is not one this command wrote.
    """
    try:
        episodes = json.loads(path.read_text())["episodes"]
        return [EpisodeResult(EpisodeSpec.from_dict(e["spec"]), success=e["success"],
                              progress=e["progress"], score=e["score"], failure=e["failure"],
                              failure_detail=e["failure_detail"], actions=e["actions"],
                              replans=e["replans"], n_extra=e["n_extra"]) for e in episodes]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidConfigError(f"--results {path}: not a bench-world results file "
                                 f"({type(exc).__name__}: {exc})") from exc
