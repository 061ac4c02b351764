"""The paper's Table II (the module benchmark) beside the simulation's module benchmark.

:data:`TABLE_TWO` holds the paper's reported success rates, read from the model profiles that
copied them (:mod:`agentic_env.oracle.profile`: each profile named after a row holds that row's
numbers, each with its paper, table, row and column), so each number has one copy; the code
holds only the rows' order. Offline, each paper row is *emulated*: the sim-oracle answers every
module with an injected error rate of one minus the paper's success rate
(:func:`emulating_spec`; a module the paper marks "–", no usable result, gets rate 1). The
module benchmark then grades that emulation on simulator instances like any model, and each cell
is checked as a paper finding (:mod:`agentic_env.harness.findings`): the paper's rate must lie
within the 95 % Wilson interval of the benchmark's measurement. An agreeing row says the
benchmark's grading measures a model with the paper's error profile at the paper's numbers; a
disagreeing cell points at a module whose grading in the simulator differs from the paper's
protocol (e.g. the grasp labels come from simulated picks, which a perfect answer does not
always match). Latencies are not compared (the sim-oracle's are not a model's), nor the
detector's box IoU (the sim-oracle's boxes are exact whenever its point is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_env.bench.modules import MODULE_ORDER
from agentic_env.errors import InvalidConfigError
from agentic_env.harness import findings
from agentic_env.oracle.profile import ModelProfile, load_profile, profile_names
from agentic_env.reports.metrics import module_table
from agentic_env.stats import wilson_interval

#: Where the numbers come from.
SOURCE = "AgenticLab Table II"


@dataclass(frozen=True)
class PaperRow:
    """One model's row of Table II.

    Attributes:
        model: the model as the paper names it.
        success: module -> success rate in [0, 1] (the detector's: pointing); ``None`` where
            the paper reports "–" (no usable result).
    """

    model: str
    success: Mapping[str, float | None]


#: The rows of Table II, as the paper names its models, in the paper's order: each is the
#: ``title`` of the packaged profile that holds its numbers.
ROWS: tuple[str, ...] = ("Gemini 3 Pro", "Gemini 3 Flash", "Gemini Robotics", "Qwen3-VL-Plus",
                         "Qwen-VL-Max", "GPT-5.2", "GPT-4o", "Claude-4.5-Opus",
                         "Claude-4.5-Sonnet", "Qwen2.5-VL-7B", "Molmo-7B")
#: How a profile's number read from a row of Table II names its source
#: (:attr:`agentic_env.oracle.profile.Number.source`).
CITATION = "paper AgenticLab, table II, row {row}, column "
#: How a profile marks a cell the paper prints as "–" (no usable result): the value 0 with
#: a note on the reading that starts so.
NO_RESULT = "('-':"


def _row(profile: ModelProfile) -> PaperRow:
    """The Table II row ``profile`` copies: its modules' success rates, ``None`` where it
    marks the paper's "–".

    Raises:
        InvalidConfigError: a module's success rate is not read from the profile's row of
            Table II, or a "–" cell holds a rate other than 0.
    """
    success: dict[str, float | None] = {}
    for module in MODULE_ORDER:
        number = profile.modules[module].success if module in profile.modules else None
        if number is None or not number.source.startswith(CITATION.format(row=profile.title)):
            raise InvalidConfigError(
                f"model profile {profile.name!r}: {module} success is not read from "
                f"{SOURCE}, row {profile.title!r} ({number.source if number else 'absent'})")
        absent = NO_RESULT in number.source
        if absent and number.value != 0.0:
            raise InvalidConfigError(f"model profile {profile.name!r}: {module} is the paper's "
                                     f"'-' but holds the rate {number.value}")
        success[module] = None if absent else number.value
    return PaperRow(profile.title, success)


def table_two() -> tuple[PaperRow, ...]:
    """Table II's :data:`ROWS`, each read from the packaged profile titled after it.

    Raises:
        InvalidConfigError: a row has no profile, or its profile's rates are not the row's
            (:func:`_row`).
    """
    profiles = {profile.title: profile for profile in map(load_profile, profile_names())}
    missing = [row for row in ROWS if row not in profiles]
    if missing:
        raise InvalidConfigError(f"{SOURCE}: no model profile is titled {', '.join(missing)}")
    return tuple(_row(profiles[row]) for row in ROWS)


#: Table II of the paper: the success rates of the task parser, action checker, object
#: detector (pointing), grasp planner and goal checker; "–" (no usable result) is ``None``.
#: (The paper's times and the detector's box IoU are not compared, see the module docstring.)
TABLE_TWO: tuple[PaperRow, ...] = table_two()


def paper_row(name: str) -> PaperRow:
    """The row of the model the paper calls ``name`` (case-insensitive).

    Raises:
        KeyError: no such row; the message lists the rows.
    """
    for row in TABLE_TWO:
        if row.model.lower() == name.lower():
            return row
    raise KeyError(f"Table II has no row {name!r}; rows: {', '.join(r.model for r in TABLE_TWO)}")


def emulating_spec(row: PaperRow) -> str:
    """The sim-oracle spec whose per-module error rates are the row's failure rates."""
    rates = "&".join(f"{module}={1.0 - (sr if sr is not None else 0.0):.3f}"
                     for module, sr in row.success.items())
    return f"sim-oracle?{rates}"


@dataclass(frozen=True)
class Cell:
    """One module of one paper row, checked: the finding's verdict and the measurement."""

    module: str
    verdict: findings.Verdict
    measured: float | None  # the benchmark's success rate (None: no instances)
    n: int


def cell_findings(row: PaperRow, spec: str, instances: Sequence[Mapping[str, Any]]
                  ) -> tuple[findings.Finding, ...]:
    """One finding per module of ``row``: the 95 % Wilson interval of the success rate the
    benchmark measures for model ``spec`` holds the paper's rate; as a range of the measured
    rate, the successes k of n instances whose interval holds it."""
    out = []
    for module, rate in row.success.items():
        reported = 0.0 if rate is None else rate
        n = len(_cell(instances, spec, module))
        held = [k for k in range(n + 1)
                if wilson_interval(k, n)[0] <= reported <= wilson_interval(k, n)[1]]
        low, high = (min(held) / n, max(held) / n) if n else (0.0, 1.0)
        shown = "–" if rate is None else f"{100 * rate:.1f} %"
        out.append(findings.Finding(
            id=f"{row.model} / {module}", source=SOURCE,
            claim=f"{row.model}: {module} success rate {shown}", metric="success",
            where=(("model", (spec,)), ("module", (module,))), at_least=low, at_most=high))
    return tuple(out)


def compare(instances: Sequence[Mapping[str, Any]], rows: Sequence[PaperRow] = TABLE_TWO,
            spec_of: Mapping[str, str] | None = None) -> list[tuple[PaperRow, list[Cell]]]:
    """Check every cell of ``rows`` on the benchmark's graded ``instances``; ``spec_of``
    maps a paper model to the spec that stood in for it (default: its emulation)."""
    out = []
    for row in rows:
        spec = (spec_of or {}).get(row.model, emulating_spec(row))
        verdicts = findings.check(cell_findings(row, spec, instances), instances)
        cells = []
        for module, verdict in zip(row.success, verdicts, strict=True):
            members = _cell(instances, spec, module)
            rate = (sum(bool(r["success"]) for r in members) / len(members) if members
                    else None)
            cells.append(Cell(module, verdict, rate, len(members)))
        out.append((row, cells))
    return out


def format_comparison(checked: Sequence[tuple[PaperRow, Sequence[Cell]]]) -> str:
    """Text table: per paper row and module the paper's rate, the simulation's measurement
    (instances) and the verdict, then the row's verdict (agree when every measured cell
    agrees)."""
    width = 27
    lines = [f"The paper beside the simulation ({SOURCE}; each cell: paper % / simulation % "
             "(instances) verdict)",
             f"{'paper row':<18}" + "".join(f"{m:>{width}}" for m in MODULE_ORDER) + "   row"]
    for row, cells in checked:
        texts = []
        for cell in cells:
            rate = row.success[cell.module]
            paper = "–" if rate is None else f"{100 * rate:.1f}"
            if cell.measured is None:
                texts.append(f"{paper} / no data")
            else:
                label = "agree" if cell.verdict.agrees else "DISAGREE"
                texts.append(f"{paper} / {100 * cell.measured:.1f} ({cell.n}) {label}")
        judged = [c.verdict.agrees for c in cells if c.verdict.agrees is not None]
        overall = "no data" if not judged else "agree" if all(judged) else "DISAGREE"
        lines.append(f"{row.model:<18}" + "".join(f"{t:>{width}}" for t in texts)
                     + f"   {overall}")
    return "\n".join(lines)


def _cell(instances: Sequence[Mapping[str, Any]], spec: str, module: str
          ) -> list[Mapping[str, Any]]:
    return [r for r in instances if r["model"] == spec and r["module"] == module]


def format_module_table(instances: Sequence[dict[str, Any]]) -> str:
    """Table II as text, one row per model: per module the success rate in % with the
    number of instances, and the mean latency in seconds (the detector also its box IoU)."""
    scores = {(s.model, s.module): s for s in module_table(instances)}
    models = sorted({m for m, _ in scores})
    columns = [("model", 28)]
    for module in MODULE_ORDER:
        columns += [(f"{module} SR % (n)", 18)]
        if module == "detector":
            columns += [("IoU %", 7)]
        columns += [("s", 7)]
    lines = ["".join(f"{name:>{width}}" if i else f"{name:<{width}}"
                     for i, (name, width) in enumerate(columns))]
    for model in models:
        cells = [f"{model:<28}"]
        for module in MODULE_ORDER:
            s = scores.get((model, module))
            cells.append(f"{f'{100 * s.success_rate:.1f} ({s.n})' if s else '–':>18}")
            if module == "detector":
                iou = None if s is None else s.mean_metric
                cells.append(f"{'–' if iou is None else f'{100 * iou:.1f}':>7}")
            cells.append(f"{f'{s.mean_latency_s:.2f}' if s else '–':>7}")
        lines.append("".join(cells))
    return "\n".join(lines)
