"""A sweep's paper findings (:mod:`agentic_env.harness.findings`) checked on its episodes.

:func:`check` turns findings and episode rows (``ResultStore.episodes()``) into
:class:`Verdict` objects: agree, disagree, or no data.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_env.harness.findings import Finding


@dataclass(frozen=True)
class Verdict:
    """A finding checked on the simulation.

    Attributes:
        finding: what was checked.
        measured: the simulation's numbers, as text (``none 0.17 < goal 0.45 < full 0.77``).
        agrees: ``True`` / ``False``, or ``None`` when the sweep has no episodes to check it.
    """

    finding: Finding
    measured: str
    agrees: bool | None

    @property
    def label(self) -> str:
        """``agree``, ``disagree`` or ``no data``."""
        return {True: "agree", False: "disagree", None: "no data"}[self.agrees]


def check(findings: Sequence[Finding], rows: Sequence[Mapping[str, Any]]) -> list[Verdict]:
    """Check each finding on the episode rows."""
    return [_check(finding, rows) for finding in findings]


def _check(finding: Finding, rows: Sequence[Mapping[str, Any]]) -> Verdict:
    selected = [r for r in rows if all(str(r.get(k)) in {str(v) for v in values}
                                       for k, values in finding.where)]
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in selected:
        groups.setdefault(tuple(row.get(k) for k in finding.per), []).append(row)
    parts, results = [], []
    for group, members in sorted(groups.items(), key=lambda item: str(item[0])):
        text, ok = (_order(finding, members) if finding.axis else _range(finding, members))
        if ok is None:
            continue
        prefix = ", ".join(f"{k}={v}" for k, v in zip(finding.per, group, strict=True))
        parts.append(f"{prefix}: {text}" if prefix else text)
        results.append(ok)
    if not results:
        return Verdict(finding, "no matching episodes", None)
    return Verdict(finding, "; ".join(parts), all(results))


def _value(row: Mapping[str, Any], metric: str) -> float:
    """One episode's ``metric`` (the derived ones computed from their columns)."""
    if metric == "episode_s":
        return float(row.get("sim_s") or 0.0) + float(row.get("model_s") or 0.0)
    if metric == "tokens":
        return float(row.get("input_tokens") or 0) + float(row.get("output_tokens") or 0)
    return float(row.get(metric) or 0.0)


def _mean(rows: Sequence[Mapping[str, Any]], metric: str) -> float:
    return statistics.fmean(_value(r, metric) for r in rows)


def _range(finding: Finding, rows: Sequence[Mapping[str, Any]]) -> tuple[str, bool | None]:
    if not rows:
        return "", None
    value = _mean(rows, finding.metric)
    ok = ((finding.at_least is None or value >= finding.at_least - 1e-9)
          and (finding.at_most is None or value <= finding.at_most + 1e-9))
    return f"{finding.metric} {value:.2f} (n={len(rows)})", ok


def _order(finding: Finding, rows: Sequence[Mapping[str, Any]]) -> tuple[str, bool | None]:
    axis = str(finding.axis)
    values = []
    for level in finding.order:
        pooled = {level} if isinstance(level, str) else set(level)
        members = [r for r in rows if str(r.get(axis)) in pooled]
        if not members:
            return "", None
        name = level if isinstance(level, str) else "(" + " | ".join(level) + ")"
        values.append((name, _mean(members, finding.metric), len(members)))
    sign = 1.0 if finding.direction == "increasing" else -1.0
    need = finding.margin - finding.tolerance
    steps = [sign * (b[1] - a[1]) >= need for a, b in itertools.pairwise(values)]
    text = f"{values[0][0]} {values[0][1]:.2f}"
    for ((_, before, _), (level, value, _)), holds in zip(itertools.pairwise(values), steps,
                                                          strict=True):
        text += f" {relation(before, value)} {level} {value:.2f}"
        if not holds:
            text += f" [{_shortfall(sign, need)}]"
    return f"{finding.metric}: {text} (n={min(n for *_, n in values)}+ each)", all(steps)


def relation(before: float, after: float) -> str:
    """The true numeric relation of two values as printed to two decimals: ``<``, ``>``, or
    ``=`` (``≈`` when they print alike but differ), never the verdict's wish."""
    if f"{before:.2f}" == f"{after:.2f}":
        return "=" if before == after else "≈"
    return "<" if before < after else ">"


def _shortfall(sign: float, need: float) -> str:
    """Why a step of an order check fails: what it needed."""
    change = "rise" if sign > 0 else "fall"
    return (f"fails: needs a {change} of at least {need:.2f}" if need > 0
            else f"fails: needs a {change}" if need == 0
            else f"fails: may {'fall' if sign > 0 else 'rise'} by at most {-need:.2f}")
