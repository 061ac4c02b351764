"""Findings about objects: ``metric: object_success`` checks the episode rows expanded one row
per object outcome, with ``axis``, ``where`` and ``per`` over the object columns."""

from __future__ import annotations

from typing import Any

from agentic_env.harness import findings
from agentic_env.harness.findings import Finding, object_rows

FRUIT_LOWEST = {"id": "fruit-lowest", "source": "untargeted", "claim": "fruit hardest",
                "metric": "object_success", "axis": "object_set",
                "order": ["fruit", ["tools", "toys"]], "where": {"met_at_start": False},
                "per": ["model"]}


def _object(name: str, group: str, placed: bool, at_start: bool = False) -> dict[str, Any]:
    return {"name": name, "object_set": group, "kind": name.rsplit("-", 1)[0],
            "placed": placed, "met_at_start": at_start, "facts": [f"in {name} bowl"],
            "met": int(placed)}


def _episode(model: str, objects: list[dict[str, Any]], task: str = "sorting"
             ) -> dict[str, Any]:
    return {"task": task, "model": model, "success": all(o["placed"] for o in objects),
            "score": 0.5, "objects": objects}


ROWS = [
    _episode("a", [_object("apple-1", "fruit", False), _object("marker-1", "tools", True),
                   _object("ball-1", "toys", True), _object("plum-1", "fruit", True, True)]),
    _episode("a", [_object("lemon-1", "fruit", True), _object("toy-car-1", "toys", False)]),
    _episode("b", [_object("apple-1", "fruit", True), _object("marker-1", "tools", True)]),
    _episode("b", []),  # no outcomes stored (an old row, a refusal): no object rows
]


def test_object_rows_expand_each_episode_per_object() -> None:
    rows = object_rows(ROWS)
    assert len(rows) == 8
    first = rows[0]
    assert (first["object"], first["object_set"], first["object_kind"]) == (
        "apple-1", "fruit", "apple")
    assert first["object_success"] is False and first["met_at_start"] is False
    assert first["task"] == "sorting" and first["model"] == "a"  # episode columns kept
    assert [r["object_success"] for r in rows if r["model"] == "b"] == [True, True]


def test_an_order_check_over_object_sets_pools_levels_per_model() -> None:
    finding = Finding.from_dict(FRUIT_LOWEST)
    assert Finding.from_dict(finding.to_dict()) == finding
    verdict, = findings.check([finding], ROWS)
    # model a: fruit 1/2 (plum met its goal from the start: filtered out) < tools+toys 2/3;
    # model b: fruit 1/1 = tools 1/1 (no toys), and a tie passes without a margin
    assert verdict.agrees is True
    assert "model=a: object_success: fruit 0.50 < (tools | toys) 0.67" in verdict.measured
    assert "model=b: object_success: fruit 1.00 = (tools | toys) 1.00" in verdict.measured
    strict = Finding.from_dict({**FRUIT_LOWEST, "margin": 0.1})
    assert findings.check([strict], ROWS)[0].agrees is False


def test_a_range_check_counts_objects_and_says_when_none_match() -> None:
    finding = Finding.from_dict({"id": "tools", "source": "s", "claim": "c",
                                 "metric": "object_success",
                                 "where": {"object_set": "tools"}, "at_least": 0.9})
    verdict, = findings.check([finding], ROWS)
    assert verdict.agrees is True and "object_success 1.00 (n=2)" in verdict.measured
    none = Finding.from_dict({**finding.to_dict(), "where": {"object_set": "food"}})
    verdict, = findings.check([none], ROWS)
    assert verdict.agrees is None and verdict.measured == "no matching objects"
    # the episode metrics still see one row per episode
    episodes = Finding.from_dict({"id": "e", "source": "s", "claim": "c", "metric": "success",
                                  "at_least": 0.0})
    assert "(n=4)" in findings.check([episodes], ROWS)[0].measured
