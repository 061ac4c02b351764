"""A prediction's target table when its sweep carries none: the paper's numbers, the rows of
the simulation that predict them, and the arithmetic each row must beat.

One YAML file per paper table under ``predictions/targets/``, naming the predictions it
scores (a sweep's own ``paper_table:`` is scored by :mod:`agentic_env.harness.paper_tables`
instead)::

    id: alrm-table3
    source: ALRM Table III (success per category, latency per task)
    predictions: [alrm-table3-emulated]
    trials: 9                      # the paper's trials per row (a row may give its own)
    breakdown_by: [model]          # columns grouping the first failures (Fig. 5's shape)
    time: model_s                  # the episode column compared with a row's time_s
    note: what the numbers are, the stand-ins, what is assumed
    baselines:                     # each: a product over the row's calls of these roles
      - {name: open loop, roles: all, source: "every call once, none recovering"}
    not_applicable:                # one line each: a baseline that does not apply, and why
      - "checker⁶: ALRM's loop calls no action checker"
    rows:
      - label: Claude-4.1-Opus CaP, canonical
        model: emulated:claude-4.5-opus
        modules: {detector: sim-oracle}
        where: {agent_options: 'mode="cap"', instruction_category: canonical}
        calls: {task_planner: 4, task_executor: 3}
        success: 0.944             # null: the paper prints no measured rate for this row
        time_s: 33.44

A row's episodes are those whose ``model`` column is the row's model label
(:func:`~agentic_env.harness.episode.models_label`) and whose ``where`` columns match (a list
= any of). :func:`compare` scores every row two-sided (the paper's trials against the
simulation's episodes, :mod:`agentic_env.stats`), each baseline per row
(:func:`agentic_env.reports.baselines.open_loop_rate`), and across rows each predictor's ρ,
MMRV and mean absolute error with what the simulation adds.
"""

from __future__ import annotations

import pathlib
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_env.errors import InvalidConfigError, check_keys
from agentic_env.harness.episode import models_label
from agentic_env.harness.extras import require
from agentic_env.harness.paper_tables import within_tolerance
from agentic_env.reports import baselines, noise_matched
from agentic_env.stats import (
    RateAgreement,
    bootstrap_rank_intervals,
    compare_rates,
    leave_one_out,
    mmrv,
    rate_verdict,
    spearman,
    success_rate,
    wilson_interval,
)

#: Where the target tables live, relative to the repository root.
TARGETS_DIR = "predictions/targets"
_KEYS = ("id", "source", "predictions", "trials", "time", "note", "baselines",
         "not_applicable", "rows", "breakdown_by")
_ROW_KEYS = ("label", "model", "modules", "where", "calls", "success", "trials", "time_s")
_ALL = "all"


@dataclass(frozen=True)
class TargetBaseline:
    """A product of module rates over some of each row's calls.

    Attributes:
        name: how the report names it (``checker⁶``, ``open loop``).
        roles: the roles whose calls it multiplies (``None``: all of the row's calls).
        source: where its argument comes from.
    """

    name: str
    roles: tuple[str, ...] | None
    source: str


@dataclass(frozen=True)
class TargetRow:
    """One row of the paper's table (see the module docstring for the fields)."""

    label: str
    model: str
    modules: tuple[tuple[str, str], ...] = ()
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()
    calls: tuple[tuple[str, int], ...] = ()
    success: float | None = None
    trials: int | None = None
    time_s: float | None = None

    @property
    def model_label(self) -> str:
        """The ``model`` column of the episodes that predict this row."""
        return models_label(self.model, self.modules)

    def baseline_calls(self, baseline: TargetBaseline) -> dict[str, int]:
        """The row's calls that ``baseline`` multiplies."""
        return {r: n for r, n in self.calls if baseline.roles is None or r in baseline.roles}


@dataclass(frozen=True)
class TargetTable:
    """A paper's table a prediction is scored on (see the module docstring)."""

    id: str
    source: str
    predictions: tuple[str, ...]
    rows: tuple[TargetRow, ...] = ()
    trials: int | None = None
    time: str | None = None
    note: str = ""
    baselines: tuple[TargetBaseline, ...] = ()
    not_applicable: tuple[str, ...] = ()
    breakdown_by: tuple[str, ...] = ("model",)

    def baselines_names(self) -> tuple[str, ...]:
        """The baselines' names, in order."""
        return tuple(b.name for b in self.baselines)


def parse_target(data: Any) -> TargetTable:
    """Validate a target file's mapping.

    Raises:
        InvalidConfigError: a key is unknown or missing, or a value has the wrong shape.
    """
    if not isinstance(data, Mapping):
        raise InvalidConfigError("a target table is a mapping with keys " + ", ".join(_KEYS))
    check_keys(data, _KEYS, "target table")
    for key in ("id", "source", "predictions"):
        if not data.get(key):
            raise InvalidConfigError(f"target table needs {key!r}")
    rows = tuple(_row(entry, data["id"]) for entry in data.get("rows") or ())
    declared = tuple(
        TargetBaseline(name=str(b["name"]), source=str(b.get("source", "")),
                       roles=None if b.get("roles", _ALL) == _ALL else tuple(b["roles"]))
        for b in data.get("baselines") or ())
    return TargetTable(id=str(data["id"]), source=str(data["source"]),
                       predictions=tuple(str(p) for p in data["predictions"]), rows=rows,
                       trials=_count(data.get("trials"), f"{data['id']}: trials"),
                       time=data.get("time"), note=str(data.get("note") or ""),
                       baselines=declared,
                       not_applicable=tuple(str(x) for x in data.get("not_applicable") or ()),
                       breakdown_by=_columns(data.get("breakdown_by") or ["model"]))


def _columns(value: Any) -> tuple[str, ...]:
    return (str(value),) if isinstance(value, str) else tuple(str(v) for v in value)


def _count(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or value < 1:
        raise InvalidConfigError(f"{what} is a positive count, got {value!r}")
    return value


def _row(entry: Any, table: str) -> TargetRow:
    if not isinstance(entry, Mapping):
        raise InvalidConfigError(f"target table {table}: a row is a mapping of "
                                 + ", ".join(_ROW_KEYS))
    check_keys(entry, _ROW_KEYS, f"target table {table} row")
    if not (entry.get("label") and entry.get("model")):
        raise InvalidConfigError(f"target table {table}: every row needs 'label' and 'model'")
    success = entry.get("success")
    if success is not None and not 0.0 <= float(success) <= 1.0:
        raise InvalidConfigError(f"target table {table} row {entry['label']!r}: success is a "
                                 f"rate in [0, 1], got {success}")
    where = entry.get("where") or {}
    return TargetRow(
        label=str(entry["label"]), model=str(entry["model"]),
        modules=tuple(sorted((str(k), str(v)) for k, v in (entry.get("modules") or {}).items())),
        where=tuple((str(k), tuple(str(x) for x in v) if isinstance(v, list) else (str(v),))
                    for k, v in where.items()),
        calls=tuple((str(k), int(v)) for k, v in (entry.get("calls") or {}).items()),
        success=None if success is None else float(success),
        trials=_count(entry.get("trials"), f"{table} row {entry['label']!r}: trials"),
        time_s=None if entry.get("time_s") is None else float(entry["time_s"]))


def load_targets(root: pathlib.Path) -> list[TargetTable]:
    """Every target table under ``root/predictions/targets/``, by file name."""
    yaml = require("yaml", "harness")
    tables = []
    for path in sorted((root / TARGETS_DIR).glob("*.yaml")):
        try:
            tables.append(parse_target(yaml.safe_load(path.read_text())))
        except yaml.YAMLError as exc:
            raise InvalidConfigError(f"target table {path.name}: not valid YAML: {exc}") from exc
    return tables


def target_for(root: pathlib.Path, prediction_id: str) -> TargetTable | None:
    """The target table that names ``prediction_id`` (``None``: none does).

    Raises:
        InvalidConfigError: two tables name it.
    """
    found = [t for t in load_targets(root) if prediction_id in t.predictions]
    if len(found) > 1:
        raise InvalidConfigError(f"prediction {prediction_id!r} is named by target tables "
                                 f"{[t.id for t in found]}; keep one")
    return found[0] if found else None


@dataclass(frozen=True)
class TargetRowResult:
    """One row beside its prediction.

    Attributes:
        row: the paper's row.
        n / successes: the predicting episodes and how many succeeded.
        ci_low / ci_high: Wilson 95 % interval of the simulated rate.
        trials: the paper's trials behind the row (``None``: unknown).
        two_sided: the two samples compared (``None`` without episodes, a paper rate or
            its trials).
        time_s: mean of the table's time column over the row's episodes (``None``: none).
        baselines: each table baseline's rate for the row (``None``: it does not apply).
        baseline_time_s: the row's calls' model time, each once (``None``: not computable).
        run_calls: the pre-registered baseline of the row's episodes' own calls
            (:func:`~agentic_env.reports.baselines.run_calls_rate`; ``None``: no call
            recorded, or no role rated).
    """

    row: TargetRow
    n: int
    successes: int
    ci_low: float
    ci_high: float
    trials: int | None
    two_sided: RateAgreement | None
    time_s: float | None
    baselines: tuple[float | None, ...]
    baseline_time_s: float | None
    run_calls: float | None = None

    @property
    def success(self) -> float:
        """The simulated success rate (0 without episodes)."""
        return success_rate(self.successes, self.n)

    @property
    def agrees(self) -> bool | None:
        """Two-sided verdict; the paper's rate inside the Wilson interval when its trials
        are unknown; ``None`` without episodes or a paper rate."""
        return rate_verdict(self.two_sided, self.n, self.ci_low, self.ci_high,
                            self.row.success)

    @property
    def time_agrees(self) -> bool | None:
        """The simulated time within the stated tolerance of the paper's."""
        return within_tolerance(self.time_s, self.row.time_s)


@dataclass(frozen=True)
class TargetComparison:
    """A target table beside its prediction.

    Attributes:
        table: the target.
        rows: one result per row, in the paper's order.
        scores: the simulation's and each baseline's :class:`~agentic_env.reports.baselines.Score`
            against the paper over the rows with a paper rate and episodes.
        spearman_ci / mmrv_ci: the simulation's 95 % bootstrap intervals over both samples
            (``None`` without every row's trials).
        spearman_loo / mmrv_loo: lowest and highest with one row left out.
        adds: one line: what the simulation adds over the baselines.
        matched: the noise-matched, paired comparison with each baseline, the
            pre-registered one of the run's own calls included
            (:mod:`agentic_env.reports.noise_matched`).
    """

    table: TargetTable
    rows: tuple[TargetRowResult, ...]
    scores: tuple[baselines.Score, ...]
    spearman_ci: tuple[float, float] | None
    mmrv_ci: tuple[float, float] | None
    spearman_loo: tuple[float, float] | None
    mmrv_loo: tuple[float, float] | None
    adds: str
    matched: tuple[noise_matched.Matched, ...] = ()


def target_row_episodes(row: TargetRow, episodes: Sequence[Mapping[str, Any]]
                        ) -> list[Mapping[str, Any]]:
    """The episodes that predict ``row``: its model label and ``where`` columns match."""
    return [e for e in episodes if e.get("model") == row.model_label
            and all(str(e.get(k)) in values for k, values in row.where)]


def compare(table: TargetTable, episodes: Sequence[Mapping[str, Any]]) -> TargetComparison:
    """Each row of ``table`` beside the episodes (report rows: ``model``, ``success``,
    ``agent_options`` and the ``where`` and time columns) that predict it."""
    results = []
    for row in table.rows:
        mine = target_row_episodes(row, episodes)
        won = sum(bool(e.get("success")) for e in mine)
        trials = row.trials or table.trials
        low, high = wilson_interval(won, len(mine))
        two_sided = (compare_rates(won, len(mine), round(row.success * trials), trials)
                     if mine and trials and row.success is not None else None)
        times = [float(e[table.time]) for e in mine
                 if table.time and e.get(table.time) is not None]
        modules = dict(row.modules)
        results.append(TargetRowResult(
            row=row, n=len(mine), successes=won, ci_low=low, ci_high=high, trials=trials,
            two_sided=two_sided, time_s=statistics.fmean(times) if times else None,
            baselines=tuple(baselines.open_loop_rate(row.model, modules, row.baseline_calls(b))
                            for b in table.baselines),
            baseline_time_s=baselines.open_loop_seconds(row.model, modules, dict(row.calls)),
            run_calls=run_calls_of(row.model, modules, mine)))
    return _across(table, tuple(results))


def run_calls_of(model: str, modules: Mapping[str, str],
                 episodes: Sequence[Mapping[str, Any]]) -> float | None:
    """:func:`~agentic_env.reports.baselines.run_calls_rate` of ``episodes``' own calls
    (their ``module_calls``); ``None`` when none of them recorded a call."""
    calls = [e.get("module_calls") or {} for e in episodes]
    return baselines.run_calls_rate(model, modules, calls) if any(calls) else None


def _across(table: TargetTable, results: tuple[TargetRowResult, ...]) -> TargetComparison:
    scored = [r for r in results if r.n and r.row.success is not None]
    paper = [r.row.success for r in scored if r.row.success is not None]
    simulated = [r.success for r in scored]
    sim_score = baselines.score("simulation", simulated, paper)
    columns = {b.name: [r.baselines[i] for r in scored] for i, b in enumerate(table.baselines)}
    if any(r.run_calls is not None for r in scored):
        columns[baselines.RUN_CALLS] = [r.run_calls for r in scored]
    base_scores = [baselines.score(name, rates, paper) for name, rates in columns.items()]
    matched = noise_matched.compare(
        [(r.successes, r.n) for r in scored],
        [(p * r.trials, r.trials) if r.trials else None for r, p in zip(scored, paper,
                                                                         strict=True)],
        columns)
    intervals: list[tuple[float, float] | None] = [None, None]
    if scored and all(r.trials for r in scored):
        intervals = bootstrap_rank_intervals(
            [(r.successes, r.n) for r in scored],
            [(p * (r.trials or 1), r.trials or 1) for r, p in zip(scored, paper, strict=True)],
            (spearman, mmrv))
    adds = (baselines.what_it_adds(sim_score, base_scores) if scored
            else _departure(table, results))
    return TargetComparison(table=table, rows=results, scores=(sim_score, *base_scores),
                            spearman_ci=intervals[0], mmrv_ci=intervals[1],
                            spearman_loo=leave_one_out(simulated, paper, spearman),
                            mmrv_loo=leave_one_out(simulated, paper, mmrv), adds=adds,
                            matched=tuple(matched))


def _departure(table: TargetTable, results: Sequence[TargetRowResult]) -> str:
    """Without measured paper rates: how far the simulation departs from each baseline."""
    measured = [r for r in results if r.n]
    if not measured or not table.baselines:
        return "No comparison: no row has both a paper rate and episodes."
    parts = []
    for i, b in enumerate(table.baselines):
        against = baselines.score(b.name, [r.baselines[i] for r in measured],
                                  [r.success for r in measured])
        if against.rows:
            rho = "–" if against.spearman is None else f"{against.spearman:.2f}"
            parts.append(f"{b.name} {against.mae:.2f} (ρ {rho} over {against.rows} rows)")
    return ("The paper prints no measured rate for these rows (its own number is the "
            "arithmetic); the simulation departs from it by a mean absolute "
            + ("difference of " + ", ".join(parts) if parts else "difference that cannot be "
               "computed") + ": closed-loop recovery, or errors that persist, is what the "
            "arithmetic leaves out.")
