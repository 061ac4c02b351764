"""The operator's rubric of a hardware tool episode (``serve --backend real``): answered, it
scores; unanswered (end of input, an interrupt, no number), it leaves the episode unscored."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from agentic_env.harness.tools.backends import OperatorJudge
from agentic_env.pddl.planning import PlanStep

REFERENCE = [PlanStep("pick", ("lemon-1",)), PlanStep("place-in", ("lemon-1", "bowl"))]


def _answers(*texts: str) -> Callable[[str], str]:
    given: Iterator[str] = iter(texts)

    def ask(_question: str) -> str:
        try:
            return next(given)
        except StopIteration:
            raise EOFError from None
    return ask


def test_answered_rubric_scores_the_episode() -> None:
    verdict = OperatorJudge(REFERENCE, _answers("y", "y", "y", "0")).verdict(True)
    assert verdict.success and verdict.unscored is None
    assert (verdict.n_done, verdict.n_required, verdict.score) == (2, 2, 1.0)


@pytest.mark.parametrize("answers", [(), ("y",), ("y", "y", "n", "lots", "many", "??")])
def test_an_unanswered_rubric_leaves_the_episode_unscored(answers: tuple[str, ...]) -> None:
    verdict = OperatorJudge(REFERENCE, _answers(*answers)).verdict(None)
    assert verdict.unscored and not verdict.success


def test_an_interrupted_rubric_leaves_the_episode_unscored() -> None:
    def interrupted(_question: str) -> str:
        raise KeyboardInterrupt

    assert "interrupted" in (OperatorJudge(REFERENCE, interrupted).verdict(None).unscored or "")
