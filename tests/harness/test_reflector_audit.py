"""The Reflector audit: verdicts against the simulator's truth, as precision and recall."""

from __future__ import annotations

import pytest

from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.reflector_audit import (
    Judged,
    audit_episode,
    audit_specs,
    confusion,
    format_rows,
    rows,
)


def judged(verdict: bool, truth: bool) -> Judged:
    return Judged(0, 1, verdict, truth, True)


def test_confusion_counts_false_complete_as_the_dangerous_error() -> None:
    counts = confusion([judged(True, True)] * 3 + [judged(True, False)]
                       + [judged(False, True)] + [judged(False, False)] * 3)
    assert (counts["tp"], counts["fp"], counts["fn"], counts["tn"]) == (3, 1, 1, 3)
    assert counts["precision"] == 0.75 and counts["recall"] == 0.75
    assert counts["false_complete"] == 0.25
    assert confusion([])["precision"] is None


def test_rows_group_by_task_and_reflector_error_rate() -> None:
    specs = audit_specs(["sorting"], [1, 2], [0.0, 0.2])
    assert [s.model for s in specs] == ["sim-oracle", "sim-oracle",
                                        "sim-oracle?reflector=0.2", "sim-oracle?reflector=0.2"]
    outcomes = [(True, [judged(True, True)]), (False, [judged(True, False)]),
                (True, []), (True, [judged(False, False)])]
    table = rows(specs, outcomes)
    assert [(r["model"], r["success"], r["verdicts"]) for r in table] == [
        ("sim-oracle", 0.5, 2), ("sim-oracle?reflector=0.2", 1.0, 1)]
    assert "sim-oracle?reflector=0.2" in format_rows(table)


@pytest.mark.slow
def test_a_perfect_reflector_agrees_with_the_truth_on_every_move() -> None:
    success, verdicts = audit_episode(EpisodeSpec("stacking", seed=5002, agent="mallvi"))
    assert success and len(verdicts) >= 3
    assert all(j.verdict == j.truth for j in verdicts)
