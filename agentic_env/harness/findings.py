"""A paper's reported findings: declared in a sweep file, checked on its episodes.

A sweep file may carry a ``paper:`` list; each entry is one finding as the paper states it
(copied as a fact, with its figure or table) and a machine check of the same trend on the
simulation's episodes::

    paper:
      - id: stacking-none-fails
        source: AgenticLab Fig. 7 / Sec. VI-D
        claim: "In stacking, disabling verification leads to zero task success."
        metric: success                 # one of METRICS: success (rate), score, progress,
                                        # actions, replans, wall_s, sim_s, model_s, episode_s,
                                        # tokens; object_success (per object, see below)
        where: {task: stacking, verification: none}   # column filters; a list = any of
        at_most: 0.2                    # a range check: the mean lies in [at_least, at_most]
      - id: score-rises-with-checks
        source: AgenticLab Fig. 7
        claim: "Full checking scores highest, no checking lowest."
        metric: score
        where: {task: stacking}
        axis: verification              # an order check along one column ...
        order: [none, goal, full]       # ... whose means must not decrease (or increase,
        direction: increasing           #     with direction: decreasing)
        margin: 0.05                    # each step must gain at least this much (default 0)
        tolerance: 0.02                 # slack for ties
        per: [disturbance]              # checked separately per group; all must agree

A finding about objects (``metric: object_success``) checks the share of the objects the
goal was about that ended where it wants them (every goal fact about the object holds at the
end: :class:`~agentic_env.harness.episode.ObjectOutcome`). Its rows are the episodes expanded
by :func:`object_rows`, one per listed object, with the columns ``object``, ``object_set``
(``fruit``, ``food``, ``blocks``, ``toys``, ``tools``, ``other``:
:data:`agentic_env.harness.objects.CATEGORY_SETS`), ``object_kind``, ``met_at_start``
(its goal facts held from the start: a distractor asked to stay, a cube already on its
support) and ``object_success``, beside every episode column, so ``axis``, ``where`` and
``per`` work as for the episode metrics and ``n`` counts objects::

      - id: fruit-hardest
        source: untargeted prediction (no paper reports it)
        claim: "Fruit end where the goal wants them less often than tools and toys."
        metric: object_success
        where: {task: sorting, met_at_start: false}
        axis: object_set
        order: [fruit, [tools, toys]]   # fruit lowest, tools and toys pooled
        per: [model]

An ``order`` level may itself be a list of values, whose episodes are pooled into one level:
``order: [high_level, [canonical, lexical, syntactic, semantic]]`` compares the hardest
category with the others together, ``order: [lab, [kitchen, outdoor]]`` the lab with the
shifted settings, and a configuration labelled differently on some tasks (a model swapped in
for one task) is one level.

Times are seconds per episode: ``wall_s`` the host's wall clock, ``sim_s`` the robot's motion
(simulated time), ``model_s`` the model calls' latencies summed (an emulated model's are
virtual: its profile's seconds per call), ``episode_s`` the episode's time as on the real
robot (``sim_s + model_s``); ``tokens`` is input plus output tokens per episode.

:func:`parse_findings` reads a sweep file's findings; :func:`check` turns findings and episode
rows (``ResultStore.episodes()``) into :class:`Verdict` objects: agree, disagree, or no data.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_env.errors import InvalidConfigError

#: Metrics measured per object, on the rows of :func:`object_rows`.
OBJECT_METRICS: tuple[str, ...] = ("object_success",)
#: Episode columns a finding can measure (``episode_s`` and ``tokens`` are derived: see the
#: module docstring), and the per-object ones (:data:`OBJECT_METRICS`).
METRICS: tuple[str, ...] = ("success", "score", "progress", "actions", "replans", "wall_s",
                            "sim_s", "model_s", "episode_s", "tokens", *OBJECT_METRICS)
#: One level of an order check: a column value, or several pooled.
Level = str | tuple[str, ...]
_KEYS = ("id", "source", "claim", "metric", "where", "at_least", "at_most", "axis", "order",
         "direction", "margin", "tolerance", "per")


@dataclass(frozen=True)
class Finding:
    """One reported finding and its check (see the module docstring for the fields)."""

    id: str
    source: str
    claim: str
    metric: str
    where: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    at_least: float | None = None
    at_most: float | None = None
    axis: str | None = None
    order: tuple[Level, ...] = ()
    direction: str = "increasing"
    margin: float = 0.0
    tolerance: float = 0.0
    per: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        """Validate one ``paper:`` entry of a sweep file."""
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise InvalidConfigError(f"paper finding: unknown keys {unknown}; valid: "
                                     + ", ".join(_KEYS))
        for key in ("id", "source", "claim", "metric"):
            if not data.get(key):
                raise InvalidConfigError(f"paper finding needs {key!r}")
        if data["metric"] not in METRICS:
            raise InvalidConfigError(f"paper finding {data['id']}: unknown metric "
                                     f"{data['metric']!r}; valid: {', '.join(METRICS)}")
        is_order = "axis" in data or "order" in data
        is_range = "at_least" in data or "at_most" in data
        if is_order == is_range:
            raise InvalidConfigError(f"paper finding {data['id']}: give either axis + order "
                                     "or at_least / at_most")
        if is_order and (not data.get("axis") or len(data.get("order") or ()) < 2):
            raise InvalidConfigError(f"paper finding {data['id']}: an order check needs "
                                     "'axis' and at least two values in 'order'")
        direction = str(data.get("direction", "increasing"))
        if direction not in ("increasing", "decreasing"):
            raise InvalidConfigError(f"paper finding {data['id']}: direction is increasing "
                                     "or decreasing")
        where = data.get("where") or {}
        if not isinstance(where, Mapping):
            raise InvalidConfigError(f"paper finding {data['id']}: 'where' is a mapping")
        return cls(
            id=str(data["id"]), source=str(data["source"]), claim=str(data["claim"]),
            metric=str(data["metric"]),
            where=tuple((str(k), tuple(v) if isinstance(v, list | tuple) else (v,))
                        for k, v in where.items()),
            at_least=_optional_float(data.get("at_least")),
            at_most=_optional_float(data.get("at_most")),
            axis=data.get("axis"), order=tuple(_level(v) for v in data.get("order") or ()),
            direction=direction, margin=float(data.get("margin", 0.0)),
            tolerance=float(data.get("tolerance", 0.0)),
            per=tuple(data.get("per") or ()))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form that :meth:`from_dict` reads back."""
        out: dict[str, Any] = {"id": self.id, "source": self.source, "claim": self.claim,
                               "metric": self.metric,
                               "where": {k: list(v) for k, v in self.where}}
        if self.axis:
            out |= {"axis": self.axis,
                    "order": [v if isinstance(v, str) else list(v) for v in self.order],
                    "direction": self.direction,
                    "margin": self.margin, "tolerance": self.tolerance}
        else:
            out |= {k: v for k, v in (("at_least", self.at_least), ("at_most", self.at_most))
                    if v is not None}
        if self.per:
            out["per"] = list(self.per)
        return out


def parse_findings(data: Any) -> tuple[Finding, ...]:
    """The ``paper:`` list of a sweep file (``None`` -> no findings)."""
    if data is None:
        return ()
    if not isinstance(data, list):
        raise InvalidConfigError("'paper' is a list of findings (see agentic_env.harness."
                                 "findings)")
    findings = tuple(Finding.from_dict(entry) for entry in data)
    ids = [f.id for f in findings]
    if len(set(ids)) != len(ids):
        raise InvalidConfigError(f"paper findings need unique ids; got {ids}")
    return findings


def _level(value: Any) -> Level:
    """One ``order`` entry: a value, or a list of values pooled into one level."""
    if isinstance(value, list | tuple):
        if len(value) < 1:
            raise InvalidConfigError("paper finding: a pooled order level lists at least one "
                                     "value")
        return tuple(str(v) for v in value)
    return str(value)


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


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


def object_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The episode rows expanded one row per object outcome (the row's ``objects``, as
    ``ResultStore.episodes()`` reads them back): each episode column, and ``object`` (the
    body name), ``object_set``, ``object_kind`` (catalogue kind or ``None``),
    ``met_at_start`` and ``object_success`` (bools). An episode without outcomes gives no
    row."""
    return [{**row, "object": item["name"], "object_set": item["object_set"],
             "object_kind": item.get("kind"),
             "met_at_start": bool(item.get("met_at_start", False)),
             "object_success": bool(item["placed"])}
            for row in rows for item in row.get("objects") or ()]


def _check(finding: Finding, rows: Sequence[Mapping[str, Any]]) -> Verdict:
    if finding.metric in OBJECT_METRICS:
        rows = object_rows(rows)
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
        return Verdict(finding, "no matching "
                       + ("objects" if finding.metric in OBJECT_METRICS else "episodes"), None)
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
