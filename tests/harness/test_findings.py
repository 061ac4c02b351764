"""Paper findings in sweep files: parsing, checks on episode rows, the report's section, and
the shipped paper sweeps."""

from __future__ import annotations

import pathlib

import pytest

from agentic_env.errors import InvalidConfigError
from agentic_env.harness import findings
from agentic_env.harness.db import ResultStore
from agentic_env.harness.findings import Finding, parse_findings
from agentic_env.harness.sweep import Sweep, disturbance_label, load_sweep, model_label
from agentic_env.reports.report import Para, Table, _paper_section, options_label

PAPER_SWEEPS = pathlib.Path(__file__).resolve().parents[2] / "sweeps" / "paper"

ORDER = {"id": "order", "source": "Fig. 7", "claim": "checks help", "metric": "score",
         "axis": "verification", "order": ["none", "goal", "full"], "per": ["task"]}
RANGE = {"id": "range", "source": "Sec. VI-D", "claim": "no checks fail",
         "metric": "success", "where": {"verification": "none"}, "at_most": 0.2}


def _rows(scores: dict[tuple[str, str], list[float]]) -> list[dict[str, object]]:
    return [{"task": task, "verification": mode, "score": s, "success": int(s == 1.0)}
            for (task, mode), values in scores.items() for s in values]


def test_order_check_agrees_and_disagrees_per_group() -> None:
    finding = Finding.from_dict(ORDER)
    rows = _rows({("sorting", "none"): [0.2, 0.4], ("sorting", "goal"): [0.5],
                  ("sorting", "full"): [1.0]})
    verdict, = findings.check([finding], rows)
    assert verdict.agrees is True
    assert "none 0.30 < goal 0.50 < full 1.00" in verdict.measured

    rows += _rows({("stacking", "none"): [0.9], ("stacking", "goal"): [0.1],
                   ("stacking", "full"): [1.0]})
    verdict, = findings.check([finding], rows)
    assert verdict.agrees is False and verdict.label == "disagree"
    assert "task=stacking" in verdict.measured


def test_order_check_tolerates_ties_within_tolerance() -> None:
    finding = Finding.from_dict({**ORDER, "tolerance": 0.05})
    rows = _rows({("sorting", "none"): [0.52], ("sorting", "goal"): [0.5],
                  ("sorting", "full"): [0.5]})
    assert findings.check([finding], rows)[0].agrees is True


def test_order_check_with_a_margin_needs_a_real_gain() -> None:
    """"Drops sharply" is not a tie: with a margin, equal means disagree."""
    finding = Finding.from_dict({**ORDER, "margin": 0.1, "per": []})
    rows = _rows({("sorting", "none"): [0.5], ("sorting", "goal"): [0.5],
                  ("sorting", "full"): [0.9]})
    assert findings.check([finding], rows)[0].agrees is False
    rows = _rows({("sorting", "none"): [0.54], ("sorting", "goal"): [0.55],
                  ("sorting", "full"): [0.9]})
    verdict = findings.check([finding], rows)[0]
    # the true relation, not the verdict's symbol ("0.54 > 0.55" was printed before)
    assert verdict.agrees is False
    assert "none 0.54 < goal 0.55 [fails: needs a rise of at least 0.10] < full 0.90" in \
        verdict.measured
    rows = _rows({("sorting", "none"): [0.2], ("sorting", "goal"): [0.5],
                  ("sorting", "full"): [0.9]})
    assert findings.check([finding], rows)[0].agrees is True


def test_a_pooled_level_takes_every_value_it_lists() -> None:
    """A list in ``order`` is one level: the lab against the shifted settings together."""
    finding = Finding.from_dict({
        "id": "gap", "source": "Fig. 6", "claim": "lab beats shifted", "metric": "score",
        "axis": "setting", "order": ["lab", ["kitchen", "outdoor"]],
        "direction": "decreasing", "margin": 0.1})
    assert finding.order == ("lab", ("kitchen", "outdoor"))
    rows = [{"setting": "lab", "score": 0.9}, {"setting": "kitchen", "score": 0.7},
            {"setting": "outdoor", "score": 0.5}, {"setting": "other", "score": 0.0}]
    verdict, = findings.check([finding], rows)
    assert verdict.agrees is True
    assert "lab 0.90 > (kitchen | outdoor) 0.60 (n=1+ each)" in verdict.measured
    rows[1]["score"] = 0.95  # pooled mean 0.725: a gain of 0.175 against the lab
    assert findings.check([finding], rows)[0].agrees is True
    rows[2]["score"] = 0.9  # pooled 0.925: no gap
    assert findings.check([finding], rows)[0].agrees is False
    assert Finding.from_dict(finding.to_dict()) == finding


def test_time_and_token_metrics_are_per_episode_sums() -> None:
    """``episode_s`` is robot motion plus model time; ``tokens`` input plus output."""
    rows = [{"verification": "full", "sim_s": 40.0, "model_s": 100.0, "wall_s": 3.0,
             "input_tokens": 3000, "output_tokens": 400},
            {"verification": "none", "sim_s": 50.0, "model_s": 20.0, "wall_s": 4.0,
             "input_tokens": 1000, "output_tokens": 100}]
    time = {"id": "t", "source": "Fig. 7", "claim": "full costs time",
            "axis": "verification", "order": ["none", "full"]}
    by_episode = Finding.from_dict({**time, "metric": "episode_s"})
    by_host = Finding.from_dict({**time, "metric": "wall_s"})
    verdict, = findings.check([by_episode], rows)
    assert verdict.agrees is True and "none 70.00 < full 140.00" in verdict.measured
    assert findings.check([by_host], rows)[0].agrees is False  # the host's clock says less
    tokens = Finding.from_dict({**RANGE, "metric": "tokens", "where": {},
                                         "at_least": 2000, "at_most": 3000})
    assert "tokens 2250.00 (n=2)" in findings.check([tokens], rows)[0].measured


def test_range_check_and_missing_data() -> None:
    finding = Finding.from_dict(RANGE)
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
        Finding.from_dict(data)


def test_findings_round_trip_through_the_database(tmp_path: pathlib.Path) -> None:
    parsed = parse_findings([ORDER, RANGE])
    with ResultStore(tmp_path / "r.db") as store:
        store.set_meta("paper_findings", [f.to_dict() for f in parsed])
    with ResultStore(tmp_path / "r.db") as store:
        assert parse_findings(store.meta("paper_findings")) == parsed
        assert store.meta("absent", "default") == "default"


def test_report_puts_the_paper_beside_the_simulation(tmp_path: pathlib.Path) -> None:
    rows = _rows({("sorting", "none"): [0.1], ("sorting", "goal"): [0.5],
                  ("sorting", "full"): [1.0]})
    episodes = [{"key": str(i), "spec_json": "{}", **row} for i, row in enumerate(rows)]
    blocks = _paper_section(parse_findings([ORDER, RANGE]), episodes)
    table = next(b for b in blocks if isinstance(b, Table) and b.headers[0] == "finding")
    assert [row[-1] for row in table.rows] == ["agree", "agree"]
    assert any(isinstance(b, Para) and "2 agree" in b.text for b in blocks)


def _planned_rows(sweep: Sweep) -> list[dict[str, object]]:
    """The report's columns of every episode a sweep declares (no outcome yet)."""
    return [{"task": s.task, "setting": s.setting, "agent": s.agent, "model": model_label(s),
             "verification": s.verification, "disturbance": disturbance_label(s),
             "instruction_category": s.instruction_category,
             "agent_options": options_label(s.options())} for s in sweep.specs]


def _level_sizes(finding: Finding, rows: list[dict[str, object]]) -> list[int]:
    """Episodes in each level (order check) or group (range check) the finding compares."""
    selected = [r for r in rows if all(str(r.get(k)) in {str(v) for v in values}
                                       for k, values in finding.where)]
    groups: dict[tuple[object, ...], list[dict[str, object]]] = {}
    for row in selected:
        groups.setdefault(tuple(row.get(k) for k in finding.per), []).append(row)
    if not finding.axis:
        return [len(members) for members in groups.values()]
    sizes = []
    for members in groups.values():
        for level in finding.order:
            pooled = {level} if isinstance(level, str) else set(level)
            sizes.append(sum(str(r.get(finding.axis)) in pooled for r in members))
    return sizes


@pytest.mark.parametrize("path", sorted(PAPER_SWEEPS.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_paper_sweeps_parse_with_findings(path: pathlib.Path) -> None:
    """Every paper sweep states findings, and every level a finding compares holds ten
    episodes or more (enough for a confidence interval; a finding may pool cells)."""
    sweep = load_sweep(path)
    assert sweep.findings, f"{path.name} states no paper findings"
    rows = _planned_rows(sweep)
    for finding in sweep.findings:
        sizes = _level_sizes(finding, rows)
        assert sizes and min(sizes) >= 10, (finding.id, sizes)


def test_the_relation_printed_is_the_numbers_own() -> None:
    assert findings.relation(0.54, 0.55) == "<"
    assert findings.relation(0.6, 0.5) == ">"
    assert findings.relation(0.5, 0.5) == "="
    assert findings.relation(0.501, 0.502) == "≈"
