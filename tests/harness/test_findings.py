"""Paper findings in sweep files: parsing, checks on episode rows, the report's section, and
the shipped paper sweeps."""

from __future__ import annotations

import json
import pathlib

import pytest

from agentic_env.errors import InvalidConfigError
from agentic_env.harness import findings
from agentic_env.harness.db import ResultStore
from agentic_env.harness.report import Para, Table, _paper_section
from agentic_env.harness.sweep import load_sweep

PAPER_SWEEPS = pathlib.Path(__file__).resolve().parents[2] / "sweeps" / "paper"

ORDER = {"id": "order", "source": "Fig. 7", "claim": "checks help", "metric": "score",
         "axis": "verification", "order": ["none", "goal", "full"], "per": ["task"]}
RANGE = {"id": "range", "source": "Sec. VI-D", "claim": "no checks fail",
         "metric": "success", "where": {"verification": "none"}, "at_most": 0.2}


def _rows(scores: dict[tuple[str, str], list[float]]) -> list[dict[str, object]]:
    return [{"task": task, "verification": mode, "score": s, "success": int(s == 1.0)}
            for (task, mode), values in scores.items() for s in values]


def test_order_check_agrees_and_disagrees_per_group() -> None:
    finding = findings.Finding.from_dict(ORDER)
    rows = _rows({("sorting", "none"): [0.2, 0.4], ("sorting", "goal"): [0.5],
                  ("sorting", "full"): [1.0]})
    verdict, = findings.check([finding], rows)
    assert verdict.agrees is True
    assert "none 0.30 ≤ goal 0.50 ≤ full 1.00" in verdict.measured

    rows += _rows({("stacking", "none"): [0.9], ("stacking", "goal"): [0.1],
                   ("stacking", "full"): [1.0]})
    verdict, = findings.check([finding], rows)
    assert verdict.agrees is False and verdict.label == "disagree"
    assert "task=stacking" in verdict.measured


def test_order_check_tolerates_ties_within_tolerance() -> None:
    finding = findings.Finding.from_dict({**ORDER, "tolerance": 0.05})
    rows = _rows({("sorting", "none"): [0.52], ("sorting", "goal"): [0.5],
                  ("sorting", "full"): [0.5]})
    assert findings.check([finding], rows)[0].agrees is True


def test_order_check_with_a_margin_needs_a_real_gain() -> None:
    """"Drops sharply" is not a tie: with a margin, equal means disagree."""
    finding = findings.Finding.from_dict({**ORDER, "margin": 0.1, "per": []})
    rows = _rows({("sorting", "none"): [0.5], ("sorting", "goal"): [0.5],
                  ("sorting", "full"): [0.9]})
    assert findings.check([finding], rows)[0].agrees is False
    rows = _rows({("sorting", "none"): [0.2], ("sorting", "goal"): [0.5],
                  ("sorting", "full"): [0.9]})
    assert findings.check([finding], rows)[0].agrees is True


def test_range_check_and_missing_data() -> None:
    finding = findings.Finding.from_dict(RANGE)
    rows = _rows({("stacking", "none"): [0.3, 1.0, 0.2, 0.1, 0.5, 0.5]})
    verdict, = findings.check([finding], rows)
    assert verdict.agrees is True and "success 0.17 (n=6)" in verdict.measured
    rows = _rows({("stacking", "none"): [1.0, 1.0]})
    assert findings.check([finding], rows)[0].agrees is False
    assert findings.check([finding], [])[0].label == "no data"


@pytest.mark.parametrize(("change", "message"), [
    ({"metric": "speed"}, "unknown metric 'speed'; valid: success"),
    ({"colour": "red"}, "unknown keys"),
    ({"axis": "verification"}, "either axis"),
    ({"direction": "up", "at_most": None}, "direction is increasing or decreasing"),
])
def test_bad_findings_name_what_is_valid(change: dict[str, object], message: str) -> None:
    data = {**RANGE, **change}
    if change.get("at_most", 1) is None:
        data = {**ORDER, "direction": "up"}
    with pytest.raises(InvalidConfigError, match=message):
        findings.Finding.from_dict(data)


def test_findings_round_trip_through_the_database(tmp_path: pathlib.Path) -> None:
    parsed = findings.parse_findings([ORDER, RANGE])
    with ResultStore(tmp_path / "r.db") as store:
        store.set_meta("paper_findings", [f.to_dict() for f in parsed])
    with ResultStore(tmp_path / "r.db") as store:
        assert findings.parse_findings(store.meta("paper_findings")) == parsed
        assert store.meta("absent", "default") == "default"


def test_report_puts_the_paper_beside_the_simulation(tmp_path: pathlib.Path) -> None:
    rows = _rows({("sorting", "none"): [0.1], ("sorting", "goal"): [0.5],
                  ("sorting", "full"): [1.0]})
    episodes = [{"key": str(i), "spec_json": "{}", **row} for i, row in enumerate(rows)]
    blocks = _paper_section(findings.parse_findings([ORDER, RANGE]), episodes)
    table = next(b for b in blocks if isinstance(b, Table) and b.headers[0] == "finding")
    assert [row[-1] for row in table.rows] == ["agree", "agree"]
    assert any(isinstance(b, Para) and "2 agree" in b.text for b in blocks)


@pytest.mark.parametrize("path", sorted(PAPER_SWEEPS.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_paper_sweeps_parse_with_findings(path: pathlib.Path) -> None:
    sweep = load_sweep(path)
    assert sweep.findings, f"{path.name} states no paper findings"
    cells: dict[str, int] = {}
    for spec in sweep.specs:
        cell = json.dumps({k: v for k, v in spec.to_dict().items() if k != "seed"},
                          sort_keys=True)
        cells[cell] = cells.get(cell, 0) + 1
    assert min(cells.values()) >= 10, "every cell needs seeds enough for confidence intervals"
