"""``agentic-env trial-report``: sim and real results of the same trials side by side.

Pairs every real episode (key ``<spec key>:real``) of a results database with the sim episode
of the same spec, prints a Markdown table (task, setting, seed, model; success and progress
score in sim and on the robot) and, across the pairs, how well sim predicts real:

* Pearson's correlation of the progress scores;
* MMRV, the mean maximum rank violation of SIMPLER (Li et al., 2024;
  :func:`agentic_env.stats.mmrv`): for each item ``i``, the largest ``|real_i - real_j|``
  over the items ``j`` that sim orders otherwise than real does, averaged over items. 0 means
  sim orders the items as real does; it is in the units of the score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env import stats
from agentic_env.harness.trial import REAL_KEY_SUFFIX, UNSCORED


@dataclass(frozen=True)
class TrialPair:
    """One trial's sim and real episode rows (``ResultStore.episodes`` dicts)."""

    sim: dict[str, Any]
    real: dict[str, Any]


def pair_episodes(rows: Sequence[dict[str, Any]]) -> list[TrialPair]:
    """Real episodes with their sim counterparts, in the order the real ones were stored
    (a real episode the rubric left unscored has no score to pair)."""
    by_key = {row["key"]: row for row in rows}
    pairs = []
    for row in rows:
        if row["key"].endswith(REAL_KEY_SUFFIX) and row["failure"] != UNSCORED:
            sim = by_key.get(row["key"][: -len(REAL_KEY_SUFFIX)])
            if sim is not None:
                pairs.append(TrialPair(sim, row))
    return pairs


def pearson(sim: Sequence[float], real: Sequence[float]) -> float | None:
    """Pearson's r, or ``None`` with fewer than two pairs or no spread on either side."""
    x, y = np.asarray(sim, float), np.asarray(real, float)
    if len(x) < 2 or np.std(x) == 0.0 or np.std(y) == 0.0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def mmrv(sim: Sequence[float], real: Sequence[float]) -> float | None:
    """SIMPLER's mean maximum rank violation of the pairs' scores
    (:func:`agentic_env.stats.mmrv`), ``None`` with fewer than two pairs (nothing to order)."""
    return None if len(sim) < 2 else stats.mmrv(sim, real)


def render_report(pairs: Sequence[TrialPair]) -> str:
    """The Markdown report of ``pairs``."""
    lines = ["# Sim vs real trials", "",
             "| task | setting | seed | model | sim success | sim score | real success | "
             "real score | real actions |", "|---|---|---|---|---|---|---|---|---|"]
    for pair in pairs:
        sim, real = pair.sim, pair.real
        lines.append(f"| {sim['task']} | {sim['setting']} | {sim['seed']} | {sim['model']} | "
                     f"{'yes' if sim['success'] else 'no'} | {sim['score']:.2f} | "
                     f"{'yes' if real['success'] else 'no'} | {real['score']:.2f} | "
                     f"{real['actions']} |")
    sim_scores = [p.sim["score"] for p in pairs]
    real_scores = [p.real["score"] for p in pairs]
    r, violation = pearson(sim_scores, real_scores), mmrv(sim_scores, real_scores)
    lines += ["", f"{len(pairs)} paired trials. Pearson r of the scores: "
              + ("n/a (needs two pairs with spread)" if r is None else f"{r:.3f}")
              + ". MMRV: " + ("n/a" if violation is None else f"{violation:.3f}") + "."]
    return "\n".join(lines) + "\n"
