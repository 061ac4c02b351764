"""The report's section on a paper's end-to-end table: the two-sided verdict of every row,
time and tokens scored, the arithmetic baselines beside the simulation with what the
simulation adds, the first-failure breakdown (Fig. 5's shape) and the prediction's ledger
history."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from agentic_env.harness.paper_tables import (
    COST_TOLERANCE,
    Comparison,
    RowComparison,
    row_episodes,
)
from agentic_env.reports import baselines, failures, noise_matched
from agentic_env.reports.blocks import Block, Heading, Para, Table
from agentic_env.reports.ledger import Prediction
from agentic_env.reports.ledger_history import history
from agentic_env.reports.target_section import matched_lines
from agentic_env.reports.targets import run_calls_of

#: Baselines of each paper table, by the table's id (a table without one gets none).
BASELINES: dict[str, tuple[baselines.Baseline, ...]] = {
    "agenticlab-table1": baselines.TABLE_ONE_BASELINES,
}


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _statistic(value: float | None, interval: tuple[float, float] | None = None) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def _verdict(agrees: bool | None) -> str:
    return {True: "agree", False: "DISAGREE", None: "–"}[agrees]


def _success_cells(c: RowComparison) -> tuple[str, str, str, str, str]:
    if not c.n:
        return "–", "–", "–", "no data", "–"
    wilson = f"{c.successes}/{c.n} = {_pct(c.success)} [{_pct(c.ci_low)}, {_pct(c.ci_high)}]"
    if c.two_sided is None:
        return wilson, "–", "–", _verdict(c.agrees), _verdict(c.wilson_agrees)
    d = c.two_sided
    return (wilson, f"{100 * d.difference:+.0f} [{100 * d.low:+.0f}, {100 * d.high:+.0f}]",
            f"{d.p_value:.2f}", d.describe(), _verdict(c.wilson_agrees))


def paper_table_section(comparison: Comparison, calls: Sequence[dict[str, Any]],
                        rows: Sequence[dict[str, Any]], prediction: Prediction | None = None
                        ) -> list[Block]:
    """The blocks for ``comparison`` (the episodes' ``rows`` and their ``calls`` give the
    failure breakdown), with ``prediction``'s ledger history when it ran for one."""
    table = comparison.table
    counts = Counter(c.label for c in comparison.rows)
    summary = ", ".join(f"{counts[k]} {k}" for k in ("agree", "disagree", "no data")
                        if counts[k])
    trials = next((c.paper_trials for c in comparison.rows if c.paper_trials), None)
    how = (f"the two samples compared: the simulation's episodes against the paper's {trials} "
           "trials per row (Newcombe 95 % interval of the difference, in points; Fisher's "
           "exact p); a row agrees when the interval holds 0. The Wilson column is the "
           "one-sided check kept for reference (the paper's rate inside the simulation's "
           "interval)" if trials else
           "the paper's trial count is unknown, so a row agrees when the paper's rate lies in "
           "the simulation's Wilson interval (one-sided)")
    blocks: list[Block] = [
        Heading(f"{table.source} beside the simulation's prediction"),
        Para(f"Each row of {table.source} beside the same configuration run here ({summary}): "
             f"{how}. Time per episode is robot motion plus virtual model time; time and "
             "tokens are means over the successful episodes (the paper's '–' where none "
             f"succeeded) and agree within a factor {COST_TOLERANCE} either way."),
        Table(("row", "paper", "predicted [Wilson 95 %]", "difference [Newcombe]",
               "Fisher p", "verdict", "Wilson verdict", "time s paper / pred.", "time",
               "tokens paper / pred.", "tokens"),
              tuple((c.row.label, _pct(c.row.success), *_success_cells(c),
                     f"{_number(c.row.time_s)} / {_number(c.time_s)}",
                     _verdict(c.time_agrees),
                     f"{_number(c.row.tokens)} / {_number(c.tokens)}",
                     _verdict(c.tokens_agree))
                    for c in comparison.rows)),
        Para(f"Across rows: Spearman's ρ = "
             f"{_statistic(comparison.spearman, comparison.spearman_ci)}, SIMPLER's MMRV = "
             f"{_statistic(comparison.mmrv, comparison.mmrv_ci)} (brackets: 95 % bootstrap "
             "over both samples); with one row left out, ρ spans "
             f"{_span(comparison.spearman_loo)} and MMRV {_span(comparison.mmrv_loo)}."),
    ]
    blocks += _baseline_blocks(comparison, rows)
    blocks += _failure_blocks(comparison, calls, rows)
    if prediction is not None:
        blocks += ledger_blocks(prediction)
    return blocks


def _span(interval: tuple[float, float] | None) -> str:
    return "–" if interval is None else f"{interval[0]:.2f}–{interval[1]:.2f}"


def baseline_columns(comparison: Comparison, episodes: Sequence[dict[str, Any]] = ()
                     ) -> dict[str, list[float | None]]:
    """Each baseline's rate for the rows with episodes: the table's declared baselines, then
    the pre-registered one of the run's own calls (:data:`baselines.RUN_CALLS`) where
    ``episodes`` (the report's rows, with ``module_calls``) recorded any."""
    measured = [c for c in comparison.rows if c.n]
    columns = {b.name: baselines.baseline_rates([c.row for c in measured], b)
               for b in BASELINES.get(comparison.table.id, ())}
    own = [run_calls_of(c.row.model, dict(c.row.modules),
                        row_episodes(comparison.table, c.row, episodes)) for c in measured]
    if any(rate is not None for rate in own):
        columns[baselines.RUN_CALLS] = own
    return columns


def baseline_scores(comparison: Comparison, episodes: Sequence[dict[str, Any]] = ()
                    ) -> tuple[tuple[baselines.Baseline, ...], list[baselines.Score], str]:
    """The table's declared baselines, the simulation's score then each baseline's
    (:func:`baseline_columns`) over the rows with episodes, and the one line of what the
    simulation adds (``((), [], "")`` for a table without baselines)."""
    declared = BASELINES.get(comparison.table.id, ())
    columns = baseline_columns(comparison, episodes)
    if not columns:
        return (), [], ""
    measured = [c for c in comparison.rows if c.n]
    paper = [c.row.success for c in measured]
    simulation = baselines.score("simulation", [c.success for c in measured], paper)
    scored = [baselines.score(name, rates, paper) for name, rates in columns.items()]
    return declared, [simulation, *scored], baselines.what_it_adds(simulation, scored)


def matched(comparison: Comparison, episodes: Sequence[dict[str, Any]] = ()
            ) -> list[noise_matched.Matched]:
    """The noise-matched, paired comparison of the simulation with each baseline of
    :func:`baseline_columns` (none without the paper's trials)."""
    measured = [c for c in comparison.rows if c.n]
    paper = [(c.row.success * c.paper_trials, c.paper_trials) if c.paper_trials else None
             for c in measured]
    return noise_matched.compare([(c.successes, c.n) for c in measured], paper,
                                 baseline_columns(comparison, episodes))


def _baseline_blocks(comparison: Comparison, episodes: Sequence[dict[str, Any]]
                     ) -> list[Block]:
    declared, scores, adds = baseline_scores(comparison, episodes)
    if not scores:
        return []
    sources = [f"{b.name} ({b.source})" for b in declared]
    if any(s.name == baselines.RUN_CALLS for s in scores):
        sources.append(f"{baselines.RUN_CALLS}, pre-registered ({baselines.RUN_CALLS_SOURCE})")
    return [Heading("The arithmetic to beat", 3),
            Para("Success predicted with no simulation, from the same profiles' module "
                 "rates, each call failing independently and nothing recovering: "
                 + "; ".join(sources) + "."),
            Table(("predictor", "rows", "ρ", "MMRV", "MAE"),
                  tuple((s.name, str(s.rows), _statistic(s.spearman), _statistic(s.mmrv),
                         _statistic(s.mae)) for s in scores)),
            Para(adds),
            *(Para(line) for line in matched_lines(comparison.table.source,
                                                   matched(comparison, episodes), ""))]


def _failure_blocks(comparison: Comparison, calls: Sequence[dict[str, Any]],
                    rows: Sequence[dict[str, Any]]) -> list[Block]:
    labels = {c.row.model_label: c.row.label for c in comparison.rows}
    mine = [r for r in rows if r.get("model") in labels]
    keys = {r["key"] for r in mine}
    own_calls = [c for c in calls if c["episode_key"] in keys]
    breakdown = failures.first_failures(mine, own_calls)
    if not breakdown:
        return []
    modules = sorted({m for counts in breakdown.values() for m in counts})
    coverage = failures.truth_coverage(own_calls)
    return [Heading("First failing module per row (Fig. 5's shape)", 3),
            Para("Failed episodes by the module that failed first: the first call whose "
                 "verdict contradicts the simulator's truth where calls carry it, else the "
                 "agent's own booking. "
                 + ("No call of these episodes carries the truth, so every booking is the "
                    "agent's (a false 'not holding' followed by exhausted retries is booked "
                    "to the limits, not the checker)." if not coverage else
                    f"{_pct(coverage)} of the verdicts carry the truth.")),
            Table(("row", "failed", *modules),
                  tuple((labels[model], str(sum(counts.values())),
                         *(str(counts.get(m, 0)) for m in modules))
                        for model, counts in breakdown.items()))]


def ledger_blocks(prediction: Prediction) -> list[Block]:
    """The prediction's ledger: target, sweep, seeds and every entry's history."""
    return [Heading(f"Prediction ledger: {prediction.id}", 3),
            Para(f"Predicts {prediction.target} with {prediction.sweep}, seeds "
                 f"{prediction.seeds['start']}–"
                 f"{prediction.seeds['start'] + prediction.seeds['count'] - 1}; every "
                 "revision after the first says why it was made, and one made after a run had "
                 "shown the target is marked so."),
            Table(("history",), tuple((line,) for line in history(prediction)))]
