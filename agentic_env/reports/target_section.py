"""The report's section on a prediction's target table (:mod:`agentic_env.reports.targets`):
each row's two-sided verdict and time, the arithmetic baselines beside the simulation with
what it adds, why a baseline does not apply, and the first failing module per group (Fig.
5's shape) where the agent is AgenticLab. :func:`target_lines` gives the same as text lines
for ``agentic-env predict check``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from agentic_env.harness.paper_tables import COST_TOLERANCE
from agentic_env.reports import baselines, failures, noise_matched
from agentic_env.reports.blocks import Block, Heading, Para, Table
from agentic_env.reports.targets import TargetComparison, TargetRowResult, TargetTable

_AGENTICLAB = "agenticlab"
_GROUP = "_group"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _verdict(agrees: bool | None) -> str:
    return {True: "agree", False: "DISAGREE", None: "–"}[agrees]


def _interval(value: float | None, interval: tuple[float, float] | None) -> str:
    return _num(value) + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def row_cells(r: TargetRowResult, with_time: bool = True) -> tuple[str, ...]:
    """One row: label, paper rate (trials), simulated k/n [Wilson], Newcombe difference,
    Fisher p, verdict, each baseline's rate and (``with_time``) time paper / simulated /
    arithmetic and the time verdict."""
    paper = (_pct(r.row.success) + (f" of {r.trials}" if r.trials else "")
             if r.row.success is not None else "not printed")
    simulated = (f"{r.successes}/{r.n} = {_pct(r.success)} [{_pct(r.ci_low)}, "
                 f"{_pct(r.ci_high)}]" if r.n else "no episodes")
    d = r.two_sided
    diff = f"{100 * d.difference:+.0f} [{100 * d.low:+.0f}, {100 * d.high:+.0f}]" if d else "–"
    time = ((f"{_num(r.row.time_s, 0)} / {_num(r.time_s, 0)} / {_num(r.baseline_time_s, 0)}",
             _verdict(r.time_agrees)) if with_time else ())
    return (r.row.label, paper, simulated, diff, f"{d.p_value:.2f}" if d else "–",
            d.describe() if d else _verdict(r.agrees), *(_pct(b) for b in r.baselines), *time)


def _header(table: TargetTable) -> tuple[str, ...]:
    return ("row", "paper", "simulation [Wilson 95 %]", "difference [Newcombe], points",
            "Fisher p", "verdict", *table.baselines_names(),
            *((f"time s paper / sim. / arithmetic ({table.time})", "time") if table.time
              else ()))


def _across(c: TargetComparison) -> str:
    sim = c.scores[0]
    return (f"Across {sim.rows} scored rows: the simulation's Spearman ρ "
            f"{_interval(sim.spearman, c.spearman_ci)}, MMRV {_interval(sim.mmrv, c.mmrv_ci)}"
            f" (brackets: 95 % bootstrap over both samples), MAE {_num(sim.mae)}; one row "
            f"left out, ρ spans {_span(c.spearman_loo)} and MMRV {_span(c.mmrv_loo)}.")


def _span(interval: tuple[float, float] | None) -> str:
    return "–" if interval is None else f"{interval[0]:.2f}–{interval[1]:.2f}"


def target_blocks(c: TargetComparison, rows: Sequence[dict[str, Any]],
                  calls: Sequence[dict[str, Any]]) -> list[Block]:
    """The blocks for ``c`` (``rows`` and ``calls``: the report's episodes and calls)."""
    table = c.table
    blocks: list[Block] = [Heading(f"{table.source} beside the simulation's prediction")]
    if table.note:
        blocks.append(Para(table.note))
    if table.rows:
        blocks += [
            Para("Two samples compared: a row agrees when the Newcombe 95 % interval of the "
                 "difference holds 0 (the paper's rate inside the simulation's Wilson "
                 "interval where its trials are unknown). Baseline columns: the success the "
                 "arithmetic predicts for the row."
                 + (f" Time agrees within a factor {COST_TOLERANCE} either way; the "
                    "arithmetic's time is each call once." if table.time else "")),
            Table(_header(table), tuple(row_cells(r, bool(table.time)) for r in c.rows))]
        if len(c.scores) > 1 and c.scores[0].rows:
            sources = [f"{b.name}: {b.source}" for b in table.baselines]
            if any(s.name == baselines.RUN_CALLS for s in c.scores):
                sources.append(f"{baselines.RUN_CALLS} (pre-registered): "
                               f"{baselines.RUN_CALLS_SOURCE}")
            blocks += [Heading("The arithmetic to beat", 3),
                       Para("; ".join(sources) + "."),
                       Table(("predictor", "rows", "ρ", "MMRV", "MAE"),
                             tuple((s.name, str(s.rows), _num(s.spearman), _num(s.mmrv),
                                    _num(s.mae)) for s in c.scores))]
        blocks += [Para(_across(c))] if c.scores[0].rows else []
        blocks.append(Para(c.adds))
        blocks += [Para(line) for line in matched_lines(table.source, c.matched, "")]
    blocks += [Para(f"Does not apply: {line}") for line in table.not_applicable]
    return blocks + breakdown_blocks(table, rows, calls)


def failure_groups(table: TargetTable, rows: Sequence[dict[str, Any]],
                   calls: Sequence[dict[str, Any]]) -> dict[str, Counter[str]]:
    """The first failing module of each failed AgenticLab episode (Fig. 5's shape), counted
    per group: the values of the table's ``breakdown_by`` columns that vary among them."""
    mine = [r for r in rows if r.get("agent") == _AGENTICLAB]
    varying = [c for c in table.breakdown_by if len({str(r.get(c)) for r in mine}) > 1]
    keyed = [{**r, _GROUP: " / ".join(f"{c} {r.get(c)}" for c in varying) or "all"}
             for r in mine]
    return {str(k): v for k, v in failures.first_failures(keyed, calls, by=_GROUP).items()}


def breakdown_blocks(table: TargetTable, rows: Sequence[dict[str, Any]],
                     calls: Sequence[dict[str, Any]]) -> list[Block]:
    """:func:`failure_groups` as a table; nothing when no AgenticLab episode failed."""
    breakdown = failure_groups(table, rows, calls)
    if not breakdown:
        return []
    modules = sorted({m for counts in breakdown.values() for m in counts})
    coverage = failures.truth_coverage(calls)
    return [Heading("First failing module (Fig. 5's shape)", 3),
            Para("Failed AgenticLab episodes by the module that failed first: the first "
                 "call whose verdict contradicts the simulator's truth, else the agent's own "
                 "booking (" + ("no call carries the truth" if not coverage else
                                f"{_pct(coverage)} of the verdicts carry it") + ")."),
            Table(("group", "failed", *modules),
                  tuple((group, str(sum(counts.values())),
                         *(str(counts.get(m, 0)) for m in modules))
                        for group, counts in sorted(breakdown.items())))]


def breakdown_lines(table: TargetTable, rows: Sequence[dict[str, Any]],
                    calls: Sequence[dict[str, Any]]) -> list[str]:
    """:func:`failure_groups` as text lines (``predict check``)."""
    return [f"  first failures (Fig. 5's shape), {group}: "
            + ", ".join(f"{module} {n}" for module, n in counts.most_common())
            for group, counts in sorted(failure_groups(table, rows, calls).items())]


def target_lines(c: TargetComparison) -> list[str]:
    """The section as text lines (``predict check``)."""
    table = c.table
    lines = [f"target: {table.source}"]
    missing = sum(not r.n for r in c.rows)
    if missing:
        lines.append(f"  ({missing} of {len(c.rows)} rows have no episodes in this run)")
    for r in (r for r in c.rows if r.n):
        cells = row_cells(r, bool(table.time))
        bases = ", ".join(f"{b} {v}" for b, v in zip(table.baselines_names(),
                                                     cells[6:6 + len(table.baselines)],
                                                     strict=True))
        verdict = (f", difference {cells[3]} points, Fisher p {cells[4]}: {cells[5]}"
                   if r.two_sided else f": {cells[5]}" if r.agrees is not None else "")
        lines.append(f"  {cells[0]}: paper {cells[1]}, simulation {cells[2]}{verdict}"
                     + (f"; arithmetic: {bases}" if bases else "")
                     + (f"; time s paper / sim. / arithmetic {cells[-2]} {cells[-1]}"
                        if table.time else ""))
    if c.scores[0].rows:
        lines += [f"  {s.name}: rows {s.rows}, rho {_num(s.spearman)}, MMRV {_num(s.mmrv)}, "
                  f"MAE {_num(s.mae)}" for s in c.scores]
        lines.append("  " + _across(c))
    if table.rows:
        lines.append("  " + c.adds)
        lines += ["  " + line for line in matched_lines(table.source, c.matched)]
    lines += [f"  does not apply: {line}" for line in table.not_applicable]
    return lines


def matched_lines(source: str, matched: Sequence[noise_matched.Matched], indent: str = "  "
                  ) -> list[str]:
    """The noise-matched comparison's verdict for the table ``source``, then one line per
    baseline after ``indent`` (nothing when no baseline was compared)."""
    if not matched:
        return []
    return [noise_matched.verdict_line(source, matched),
            *(f"{indent}{m.describe()}" for m in matched if m.rows)]
