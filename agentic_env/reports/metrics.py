"""Metrics over stored episodes: success with Wilson intervals
(:func:`~agentic_env.stats.wilson_interval`), score/time/token means,
first-failing-module breakdowns, compounding under injected error, module-benchmark tables.

Every function takes plain row mappings (as :class:`~agentic_env.harness.db.ResultStore`
returns them), so they are easy to test on known inputs.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_env.agents.base import failure_sources
from agentic_env.errors import InvalidConfigError
from agentic_env.stats import wilson_interval

#: Breakdown column for a failed episode with no recorded failure source.
UNATTRIBUTED = "unattributed"

Row = Mapping[str, Any]


@dataclass(frozen=True)
class GroupStats:
    """Aggregate of the episodes in one group.

    Attributes:
        group: the values of the grouping columns, in order.
        n / successes / errors: episodes, successes, crashed episodes.
        success_rate / ci_low / ci_high: success fraction and its 95 % Wilson interval.
        mean_score / std_score: AgenticLab progress score (0..1), mean and sample std.
        mean_progress: fraction of goal predicates satisfied, mean.
        mean_wall_s / std_wall_s: episode wall time, seconds.
        mean_tokens: input + output tokens per episode.
        mean_cost_usd: mean over episodes with a known cost, ``None`` if none known.
        mean_episode_s / std_episode_s: the episode's time as on the real robot, seconds:
            robot motion (``sim_s``) plus model time (``model_s``; an emulated model's is
            virtual, its profile's seconds per call).
        mean_model_s / mean_sim_s: the two parts of it, seconds per episode.
        mean_calls: model calls per episode (rows without ``module_calls`` count none).
    """

    group: tuple[Any, ...]
    n: int
    successes: int
    errors: int
    success_rate: float
    ci_low: float
    ci_high: float
    mean_score: float
    std_score: float
    mean_progress: float
    mean_wall_s: float
    std_wall_s: float
    mean_tokens: float
    mean_cost_usd: float | None
    mean_episode_s: float = 0.0
    std_episode_s: float = 0.0
    mean_model_s: float = 0.0
    mean_sim_s: float = 0.0
    mean_calls: float = 0.0


def _std(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def _groups(rows: Iterable[Row], by: Sequence[str]) -> dict[tuple[Any, ...], list[Row]]:
    groups: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for row in rows:
        groups[tuple(row[column] for column in by)].append(row)
    return dict(sorted(groups.items(), key=lambda item: tuple(map(str, item[0]))))


def group_stats(rows: Iterable[Row], by: Sequence[str]) -> list[GroupStats]:
    """Per-group success (Wilson 95 %), score, time, tokens and cost, sorted by group.

    Rows need ``success``, ``score``, ``progress``, ``wall_s``, ``input_tokens``,
    ``output_tokens``, ``cost_usd``, ``failure`` and the ``by`` columns; ``sim_s``,
    ``model_s`` and ``module_calls`` (module -> calls) are read when present.
    """
    out = []
    for group, members in _groups(rows, by).items():
        n = len(members)
        successes = sum(bool(r["success"]) for r in members)
        low, high = wilson_interval(successes, n)
        scores = [float(r["score"]) for r in members]
        walls = [float(r["wall_s"] or 0.0) for r in members]
        costs = [float(r["cost_usd"]) for r in members if r["cost_usd"] is not None]
        models = [float(r.get("model_s") or 0.0) for r in members]
        robot = [float(r.get("sim_s") or 0.0) for r in members]
        episode = [m + r for m, r in zip(models, robot, strict=True)]
        out.append(GroupStats(
            group=group, n=n, successes=successes,
            errors=sum(r["failure"] == "error" for r in members),
            success_rate=successes / n, ci_low=low, ci_high=high,
            mean_score=statistics.fmean(scores), std_score=_std(scores),
            mean_progress=statistics.fmean(float(r["progress"]) for r in members),
            mean_wall_s=statistics.fmean(walls), std_wall_s=_std(walls),
            mean_tokens=statistics.fmean(
                int(r["input_tokens"] or 0) + int(r["output_tokens"] or 0) for r in members),
            mean_cost_usd=statistics.fmean(costs) if costs else None,
            mean_episode_s=statistics.fmean(episode), std_episode_s=_std(episode),
            mean_model_s=statistics.fmean(models), mean_sim_s=statistics.fmean(robot),
            mean_calls=statistics.fmean(sum((r.get("module_calls") or {}).values())
                                        for r in members)))
    return out


def failure_breakdown(rows: Iterable[Row], by: Sequence[str]
                      ) -> dict[tuple[Any, ...], dict[str, int]]:
    """First-failing source of each failed episode, counted per group.

    Returns:
        group -> {source: count} over the registered agents' failure sources (see
        :func:`~agentic_env.agents.base.failure_sources`), any other source the rows name
        and :data:`UNATTRIBUTED`, every source present (zeros included), for groups with at
        least one episode.
    """
    rows = list(rows)
    known = failure_sources()
    named = dict.fromkeys(r["failure"] for r in rows if r["failure"] and r["failure"] not in known)
    sources = (*known, *named, UNATTRIBUTED)
    out = {}
    for group, members in _groups(rows, by).items():
        counts = Counter(r["failure"] or UNATTRIBUTED for r in members if not r["success"])
        out[group] = {source: counts.get(source, 0) for source in sources}
    return out


def injected_errors(model: str, modules: Mapping[str, str] | None = None) -> dict[str, float]:
    """Per-module error rates injected through sim-oracle specs (``sim-oracle?checker=0.1``).

    The base model's rates apply to every module it names; a per-module override decides
    the rate of its module (its own rate for that module, 0 if it names none or is not a
    sim-oracle). Modules with rate 0 are absent; specs that do not parse inject nothing.
    """
    rates = _oracle_rates(model)
    for module, spec in (modules or {}).items():
        rates[module] = _oracle_rates(spec).get(module, 0.0)
    return {m: r for m, r in rates.items() if r > 0.0}


def _oracle_rates(spec: str) -> dict[str, float]:
    from agentic_env.agents.models.registry import parse_model_spec

    try:
        parsed = parse_model_spec(spec)
    except InvalidConfigError:
        return {}
    return dict(parsed.error_rates) if parsed.kind == "sim-oracle" else {}


@dataclass(frozen=True)
class CompoundingPoint:
    """Success at one injected error rate of one module (the paper's 0.9^6 argument).

    Attributes:
        module: module whose answers were corrupted.
        verification: verification mode of the episodes.
        error_rate: injected error rate, 0..1 (0: no injection).
        n / successes / success_rate / ci_low / ci_high: as in :class:`GroupStats`.
        mean_score: mean progress score.
        mean_calls: calls to ``module`` per episode, mean.
        predicted: success expected if every call the error-free run needs may fail
            independently and nothing recovers: ``p0 * (1 - error_rate) ** k0``, with ``p0``
            the success rate and ``k0`` the mean calls at rate 0 (without uninjected
            episodes: ``p0 = 1`` and ``k0 = mean_calls``).
    """

    module: str
    verification: str
    error_rate: float
    n: int
    successes: int
    success_rate: float
    ci_low: float
    ci_high: float
    mean_score: float
    mean_calls: float
    predicted: float


def compounding_curve(rows: Iterable[Row]) -> list[CompoundingPoint]:
    """Success vs injected error rate, per injected module and verification mode.

    Rows need ``injected`` (module -> rate, see :func:`injected_errors`), ``module_calls``
    (module -> calls in the episode), ``verification``, ``success`` and ``score``. Episodes
    with errors injected into several modules at once are left out; uninjected episodes
    are the 0 point of every module's curve.
    """
    rows = list(rows)
    modules = sorted({m for r in rows if len(r["injected"]) == 1 for m in r["injected"]})
    points = []
    for module in modules:
        by_key: dict[tuple[str, float], list[Row]] = defaultdict(list)
        for row in rows:
            injected = row["injected"]
            if set(injected) <= {module}:
                by_key[(row["verification"], injected.get(module, 0.0))].append(row)
        for (mode, rate), members in sorted(by_key.items()):
            n = len(members)
            successes = sum(bool(r["success"]) for r in members)
            low, high = wilson_interval(successes, n)
            calls = statistics.fmean(r["module_calls"].get(module, 0) for r in members)
            base = by_key.get((mode, 0.0))
            p0 = sum(bool(r["success"]) for r in base) / len(base) if base else 1.0
            k0 = (statistics.fmean(r["module_calls"].get(module, 0) for r in base) if base
                  else calls)
            points.append(CompoundingPoint(
                module=module, verification=mode, error_rate=rate, n=n, successes=successes,
                success_rate=successes / n, ci_low=low, ci_high=high,
                mean_score=statistics.fmean(float(r["score"]) for r in members),
                mean_calls=calls, predicted=p0 * (1.0 - rate) ** k0))
    return points


@dataclass(frozen=True)
class CallStats:
    """Model calls of one (module, model) pair.

    Attributes:
        module / model: the pair.
        n: calls.
        mean_latency_s: mean wall time per call, seconds.
        mean_input_tokens / mean_output_tokens: per call.
        error_rate: fraction of calls that failed, 0..1.
        verdicts: verdict -> count (calls without a verdict left out).
    """

    module: str
    model: str
    n: int
    mean_latency_s: float
    mean_input_tokens: float
    mean_output_tokens: float
    error_rate: float
    verdicts: dict[str, int]


def call_stats(calls: Iterable[Row]) -> list[CallStats]:
    """Per (module, model) call statistics, sorted."""
    out = []
    for (module, model), members in _groups(calls, ("module", "model")).items():
        out.append(CallStats(
            module=module, model=model, n=len(members),
            mean_latency_s=statistics.fmean(float(c["latency_s"] or 0.0) for c in members),
            mean_input_tokens=statistics.fmean(int(c["input_tokens"] or 0) for c in members),
            mean_output_tokens=statistics.fmean(int(c["output_tokens"] or 0) for c in members),
            error_rate=sum(c["error"] is not None for c in members) / len(members),
            verdicts=dict(Counter(c["verdict"] for c in members if c["verdict"] is not None))))
    return out


@dataclass(frozen=True)
class ModuleScore:
    """One cell of the module table (Table II): a module under one model.

    Attributes:
        model / module: the cell.
        n / successes / success_rate / ci_low / ci_high: graded instances and accuracy.
        mean_metric: mean graded figure where the module has one (detector: box IoU),
            else ``None``.
        mean_latency_s: mean call latency, seconds.
        mean_tokens: input + output tokens per call.
    """

    model: str
    module: str
    n: int
    successes: int
    success_rate: float
    ci_low: float
    ci_high: float
    mean_metric: float | None
    mean_latency_s: float
    mean_tokens: float


def module_table(instances: Iterable[Row]) -> list[ModuleScore]:
    """Aggregate graded module-benchmark instances per (model, module), sorted."""
    out = []
    for (model, module), members in _groups(instances, ("model", "module")).items():
        n = len(members)
        successes = sum(bool(r["success"]) for r in members)
        low, high = wilson_interval(successes, n)
        metrics = [float(r["metric"]) for r in members if r["metric"] is not None]
        out.append(ModuleScore(
            model=model, module=module, n=n, successes=successes, success_rate=successes / n,
            ci_low=low, ci_high=high, mean_metric=statistics.fmean(metrics) if metrics else None,
            mean_latency_s=statistics.fmean(float(r["latency_s"] or 0.0) for r in members),
            mean_tokens=statistics.fmean(
                int(r["input_tokens"] or 0) + int(r["output_tokens"] or 0) for r in members)))
    return out


@dataclass(frozen=True)
class VerdictScore:
    """A judging module's verdicts against the simulator's truth in one group ("true" is
    the positive class: for MALLVI's Reflector, "the move is complete").

    Attributes:
        module: the judging module.
        group: the values of the grouping columns, in order.
        n: scored verdicts.
        tp / fp / fn / tn: true "true", false "true" (a failed move waved through: the
            dangerous error), false "false" (a needless retry), true "false".
        precision / recall / false_positive_rate: tp/(tp+fp), tp/(tp+fn), fp/(fp+tn);
            ``None`` where the denominator is 0.
    """

    module: str
    group: tuple[Any, ...]
    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float | None
    recall: float | None
    false_positive_rate: float | None


def verdict_scores(calls: Iterable[Row], episodes: Iterable[Row],
                   by: Sequence[str] = ("task", "model")) -> list[VerdictScore]:
    """Per module and group of episode columns ``by``: the verdicts of the calls that carry
    a truth (``calls.truth``) scored against it, sorted."""
    owners = {e["key"]: e for e in episodes}
    groups: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for call in calls:
        episode = owners.get(call["episode_key"])
        if call.get("truth") is None or call["verdict"] is None or episode is None:
            continue
        groups[(call["module"], *(episode[c] for c in by))].append(call)

    def rate(num: int, den: int) -> float | None:
        return None if den == 0 else num / den

    out = []
    for key, members in sorted(groups.items(), key=lambda item: str(item[0])):
        pairs = Counter((c["verdict"] == "true", c["truth"] == "true") for c in members)
        tp, fp = pairs[(True, True)], pairs[(True, False)]
        fn, tn = pairs[(False, True)], pairs[(False, False)]
        out.append(VerdictScore(module=key[0], group=key[1:], n=len(members), tp=tp, fp=fp,
                                fn=fn, tn=tn, precision=rate(tp, tp + fp),
                                recall=rate(tp, tp + fn), false_positive_rate=rate(fp, fp + tn)))
    return out
