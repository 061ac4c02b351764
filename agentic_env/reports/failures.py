"""The first failing module of each failed episode, booked from the calls' truth where the
database holds it (AgenticLab Fig. 5's breakdown).

An agent books a failure where it gave up (its ``failure`` column): a checker's false "not
holding" after a good pick costs a retry, the retries exhaust the limits, and the episode is
booked to the limits. Where a call carries the simulator's truth (``calls.truth``, see
:mod:`agentic_env.harness.call_truth`), the first call whose verdict contradicts it is the
first failure, whatever the agent booked later. Without any truth the agent's own booking
stands.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentic_env.reports.metrics import UNATTRIBUTED

Row = Mapping[str, Any]


def first_failure(episode: Row, calls: Sequence[Row]) -> str | None:
    """The first failing module of ``episode`` (``None`` when it succeeded): the module of
    its first call (by ``seq``) whose ``verdict`` contradicts its ``truth``, else its
    ``failure`` column, else :data:`~agentic_env.reports.metrics.UNATTRIBUTED`."""
    if episode.get("success"):
        return None
    for call in sorted(calls, key=lambda c: c["seq"]):
        truth, verdict = call.get("truth"), call.get("verdict")
        if truth is not None and verdict is not None and str(verdict) != str(truth):
            return str(call["module"])
    return str(episode.get("failure") or UNATTRIBUTED)


def first_failures(episodes: Iterable[Row], calls: Iterable[Row], by: str = "model"
                   ) -> dict[Any, Counter[str]]:
    """Per value of column ``by``: how many failed episodes each module failed first."""
    per_episode: dict[str, list[Row]] = defaultdict(list)
    for call in calls:
        per_episode[call["episode_key"]].append(call)
    out: dict[Any, Counter[str]] = defaultdict(Counter)
    for episode in episodes:
        module = first_failure(episode, per_episode.get(episode["key"], []))
        if module is not None:
            out[episode.get(by)][module] += 1
    return dict(out)


def truth_coverage(calls: Iterable[Row]) -> float | None:
    """Share of verdict-bearing calls that carry the simulator's truth (``None`` without
    such calls): how much of the breakdown rests on truth rather than the agent's booking."""
    judged = [c for c in calls if c.get("verdict") is not None]
    return sum(c.get("truth") is not None for c in judged) / len(judged) if judged else None
