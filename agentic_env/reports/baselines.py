"""The arithmetic a simulated prediction must beat: success as a product of module rates,
read from the same emulated profiles the simulation runs, with no simulation at all.

AgenticLab Sec. VI-A argues that placing three objects makes six action-checker calls, so a
checker right with probability c completes a trial with probability about c⁶ (its "0.9⁶ ≈
0.53"). :data:`TABLE_ONE_BASELINES` holds that argument and the open-loop product of every
module a sorting trial calls once per step (parser once, checker six times, detector three
times). :func:`open_loop_rate` is that product for any role counts (the predictions'
target tables, :mod:`agentic_env.reports.targets`, state theirs per row) and
:func:`open_loop_seconds` the matching model time; :func:`baseline_rates` evaluates a
baseline on a paper table's rows;
:func:`score` gives any predictor's Spearman ρ, MMRV and mean absolute error against the
paper; :func:`what_it_adds` says in one line whether the simulation beats the best baseline.

The exponents above were chosen by argument (and, for the open-loop product, after Table I
was seen). :func:`run_calls_rate` is the pre-registered alternative (:data:`RUN_CALLS`): no
chosen exponents, each episode's own calls per role as the run made them (retries, replans
and early stops included), read from the results database, each call failing independently
at its profile's rate, averaged over the row's episodes. Its definition is code under the
ledger's hashed tree, so it is fixed before any run it scores.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentic_env.errors import InvalidConfigError
from agentic_env.harness.paper_tables import PaperRow
from agentic_env.oracle.profile import load_profile
from agentic_env.stats import mmrv, spearman

_EMULATED = "emulated:"


@dataclass(frozen=True)
class Baseline:
    """Success predicted as ``prod(rate(module) ** calls)`` over ``calls``.

    Attributes:
        name: how the report names it.
        calls: module -> calls per trial, each assumed to fail independently with nothing
            recovering.
        source: where the call counts come from.
    """

    name: str
    calls: Mapping[str, int]
    source: str


#: AgenticLab Table I's baselines (sorting three objects).
TABLE_ONE_BASELINES: tuple[Baseline, ...] = (
    Baseline("checker⁶", {"checker": 6},
             "AgenticLab Sec. VI-A: three objects placed make six action-checker calls"),
    Baseline("parser × checker⁶ × detector³", {"parser": 1, "checker": 6, "detector": 3},
             "open loop: one plan, six checks (Sec. VI-A), one detection per object"),
)


@dataclass(frozen=True)
class Score:
    """One predictor against the paper's rates over the rows it predicts.

    Attributes:
        name: the predictor.
        rows: rows scored.
        spearman / mmrv: as :func:`~agentic_env.stats.spearman` and
            :func:`~agentic_env.stats.mmrv` (``None`` where undefined).
        mae: mean absolute error of the rates, in [0, 1].
    """

    name: str
    rows: int
    spearman: float | None
    mmrv: float | None
    mae: float | None


def module_rate(spec: str, module: str) -> float:
    """The success rate of one call of ``module`` (a role: ``checker``, ``localizer``,
    ``task_executor``...) in the emulated profile ``spec`` (``emulated:NAME``): the rate of
    the measured module that emulates it, and for a role asked once per step of a plan (the
    profile's ``turn_roles``) that module's error rate times ``planner_turn_share``, as the
    emulation draws it.

    Raises:
        InvalidConfigError: ``spec`` is not an emulated model, or its profile lacks the module.
    """
    if not spec.startswith(_EMULATED):
        raise InvalidConfigError(f"{spec!r} is not an emulated model: no profile to read")
    profile = load_profile(_profile_name(spec))
    try:
        rate = profile.module_for(module).success.value
    except KeyError as exc:
        raise InvalidConfigError(f"profile {spec!r} has no {module!r} module") from exc
    if module in profile.turn_roles:
        rate = 1.0 - (1.0 - rate) * profile.planner_turn_share.value
    return rate


def open_loop_rate(model: str, modules: Mapping[str, str], calls: Mapping[str, int]
                   ) -> float | None:
    """``prod(module_rate ** n)`` over ``calls`` (role -> calls per trial), each role read
    from its own model in ``modules`` or else ``model``; ``None`` when ``calls`` is empty or
    a role's model is not emulated (a perfect oracle has no rate to multiply)."""
    if not calls:
        return None
    product = 1.0
    for role, n in calls.items():
        try:
            product *= module_rate(modules.get(role, model), role) ** n
        except InvalidConfigError:
            return None
    return product


def open_loop_seconds(model: str, modules: Mapping[str, str], calls: Mapping[str, int]
                      ) -> float | None:
    """Model time of a trial that makes ``calls`` once each and nothing more: the sum of
    the profiles' seconds per call, virtual seconds; ``None`` as :func:`open_loop_rate`."""
    if not calls:
        return None
    total = 0.0
    for role, n in calls.items():
        spec = modules.get(role, model)
        if not spec.startswith(_EMULATED):
            return None
        try:
            total += n * load_profile(_profile_name(spec)).module_for(role).seconds.value
        except KeyError:
            return None
    return total


#: The pre-registered baseline's name and source (:func:`run_calls_rate`).
RUN_CALLS = "run's own calls"
RUN_CALLS_SOURCE = ("each episode's calls per role as the run made them (from the results "
                    "database), each failing independently at its profile's rate, averaged "
                    "over the row's episodes; no exponent chosen")


def run_calls_rate(model: str, modules: Mapping[str, str],
                   episode_calls: Sequence[Mapping[str, int]]) -> float | None:
    """Mean over episodes of ``prod(module_rate ** calls)`` over each episode's own calls
    (role -> calls made), each role read from its model in ``modules`` or else ``model``; a
    role whose model is not emulated, or whose profile does not rate it, cannot err in the
    emulation and counts as right. ``None`` without episodes or when no role is rated."""
    if not episode_calls:
        return None
    rates: dict[str, float] = {}
    for role in {r for calls in episode_calls for r in calls}:
        try:
            rates[role] = module_rate(modules.get(role, model), role)
        except InvalidConfigError:
            continue
    if not rates and not model.startswith(_EMULATED):
        return None
    return statistics.fmean(
        math.prod(rates.get(role, 1.0) ** n for role, n in calls.items())
        for calls in episode_calls)


def baseline_rate(row: PaperRow, baseline: Baseline) -> float | None:
    """``baseline``'s success for ``row`` (a module swapped in by the row uses its own
    profile); ``None`` when a model is not emulated or lacks a module."""
    return open_loop_rate(row.model, dict(row.modules), baseline.calls)


def baseline_rates(rows: Sequence[PaperRow], baseline: Baseline) -> list[float | None]:
    """:func:`baseline_rate` of each row."""
    return [baseline_rate(row, baseline) for row in rows]


def score(name: str, predicted: Sequence[float | None], paper: Sequence[float]) -> Score:
    """``predicted`` against ``paper`` over the rows it predicts (not ``None``)."""
    pairs = [(p, q) for p, q in zip(predicted, paper, strict=True) if p is not None]
    if not pairs:
        return Score(name, 0, None, None, None)
    xs, ys = [p for p, _ in pairs], [q for _, q in pairs]
    return Score(name, len(pairs), spearman(xs, ys), mmrv(xs, ys),
                 statistics.fmean(abs(p - q) for p, q in pairs))


def what_it_adds(simulation: Score, baselines: Sequence[Score]) -> str:
    """One line: on which of ρ (higher), MMRV and MAE (lower) the simulation beats every
    baseline, or that it adds nothing yet."""
    scored = [b for b in baselines if b.rows]
    if not simulation.rows or not scored:
        return "No comparison: the simulation or the baselines predict no row."
    better = []
    for label, attribute, sign in (("ρ", "spearman", 1), ("MMRV", "mmrv", -1),
                                   ("MAE", "mae", -1)):
        mine = getattr(simulation, attribute)
        theirs = [getattr(b, attribute) for b in scored]
        if mine is not None and all(t is None or sign * (mine - t) > 1e-9 for t in theirs):
            better.append(label)
    flat = (" The simulation's ρ is undefined (its rates are all equal or there are fewer "
            "than two rows): it ranks nothing." if simulation.spearman is None else "")
    if not better:
        return ("The simulation adds nothing yet: a product of the profiles' module rates "
                "does at least as well on ρ, MMRV and MAE." + flat)
    return ("The simulation beats every baseline on " + ", ".join(better)
            + (" (not on " + ", ".join(x for x in ("ρ", "MMRV", "MAE") if x not in better)
               + ")" if len(better) < 3 else "") + "." + flat)


def _profile_name(spec: str) -> str:
    """The profile an ``emulated:PROFILE[?seed=N&ablate=...]`` spec names (its rates are
    the profile's whatever the options)."""
    return spec.removeprefix(_EMULATED).partition("?")[0]
