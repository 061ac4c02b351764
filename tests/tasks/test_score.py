"""AgenticLab task progress score (appendix rubric)."""

from __future__ import annotations

import pytest

from agentic_env.pddl.planning import PlanStep
from agentic_env.tasks.score import ProgressScore, progress_score

# The optimal plan of the paper's Fig. 10 stacking problem (see test_planning.py).
REFERENCE = [
    PlanStep.parse(text)
    for text in (
        "(pick green-cube-1 orange-cube-1)",
        "(place-on-object green-cube-1 pink-plate-1)",
        "(pick yellow-cube-1 blue-cube-1)",
        "(place-on-object yellow-cube-1 green-cube-1)",
        "(pick orange-cube-1 turquoise-plate-1)",
        "(place-on-object orange-cube-1 yellow-cube-1)",
        "(pick blue-cube-1 cream-plate-1)",
        "(place-on-object blue-cube-1 orange-cube-1)",
    )
]
DETOUR = [
    PlanStep("pick", ("green-cube-1", "pink-plate-1")),
    PlanStep("place-on-object", ("green-cube-1", "cream-plate-1")),
]


def test_exact_plan_scores_one() -> None:
    assert progress_score(REFERENCE, REFERENCE) == ProgressScore(
        score=1.0, n_done=8, n_extra=0, n_required=8, goal_checker_error=False
    )


def test_two_redundant_actions_cost_two_over_n() -> None:
    executed = REFERENCE[:2] + DETOUR + REFERENCE[2:]
    result = progress_score(executed, REFERENCE)
    assert (result.n_done, result.n_extra, result.n_required) == (8, 2, 8)
    assert result.score == pytest.approx((8 - 2) / 8)


def test_half_the_plan_scores_half() -> None:
    result = progress_score(REFERENCE[:4], REFERENCE)
    assert (result.n_done, result.n_extra) == (4, 0)
    assert result.score == pytest.approx(0.5)


def test_stopping_after_one_action_does_not_score_one() -> None:
    assert progress_score(REFERENCE[:1], REFERENCE).score == pytest.approx(1 / 8)


def test_goal_checker_error_costs_a_tenth() -> None:
    result = progress_score(REFERENCE, REFERENCE, goal_checker_error=True)
    assert result.goal_checker_error
    assert result.score == pytest.approx(0.9)
    assert progress_score(REFERENCE[:4], REFERENCE, True).score == pytest.approx(0.4)


def test_score_is_clipped_at_zero() -> None:
    executed = REFERENCE[:1] + DETOUR * 3
    result = progress_score(executed, REFERENCE, goal_checker_error=True)
    assert (result.n_done, result.n_extra) == (1, 6)
    assert result.score == 0.0
    assert progress_score([], REFERENCE, goal_checker_error=True).score == 0.0


def test_matching_ignores_order_but_counts_each_required_action_once() -> None:
    """Sorting: the items can go in any order; a repeated action matches only once."""
    apple = [PlanStep("pick", ("apple-1",)), PlanStep("place-in", ("apple-1", "white-bin"))]
    ball = [PlanStep("pick", ("ball-1",)), PlanStep("place-in", ("ball-1", "blue-bin"))]
    assert progress_score(ball + apple, apple + ball).score == 1.0
    retried = apple[:1] + apple + ball  # the first pick dropped the apple
    result = progress_score(retried, apple + ball)
    assert (result.n_done, result.n_extra) == (4, 1)
    assert result.score == pytest.approx(3 / 4)


def test_matching_is_case_insensitive() -> None:
    upper = [PlanStep(s.name.upper(), tuple(a.upper() for a in s.args)) for s in REFERENCE]
    assert progress_score(upper, REFERENCE).score == 1.0


def test_empty_reference() -> None:
    assert progress_score([], []).score == 1.0
    assert progress_score([], [], goal_checker_error=True).score == pytest.approx(0.9)
    assert progress_score(DETOUR, []).score == 0.0
