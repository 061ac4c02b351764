"""AgenticLab's task progress score (paper, Appendix B-A, "Task Progress Score").

The paper scores an episode from a structured action-sequence rubric::

    Score = (N_done - N_extra) / N - 0.1 * p

with ``N_done`` the executed actions that match the required action sequence, ``N_extra``
the redundant actions, and ``p`` in {0, 1} the penalty for a goal-checker error (the agent's
goal checker misjudged the final state). :func:`progress_score` implements it; its docstring
states how the rubric's terms are made precise here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from agentic_env.pddl.planning import PlanStep

__all__ = ["GOAL_CHECKER_PENALTY", "ProgressScore", "progress_score"]

#: Score subtracted when the goal checker misjudged the final state (the paper's 0.1 p).
GOAL_CHECKER_PENALTY = 0.1


@dataclass(frozen=True)
class ProgressScore:
    """A task progress score and the counts it was computed from.

    Attributes:
        score: the score in [0, 1] (1 = every required action done, nothing redundant,
            goal checker right).
        n_done: executed actions matched to a required action.
        n_extra: executed actions matched to none (redundant or wrong).
        n_required: actions of the reference (required) sequence, the normaliser ``N``.
        goal_checker_error: the goal checker misjudged the final state (penalty applied).
    """

    score: float
    n_done: int
    n_extra: int
    n_required: int
    goal_checker_error: bool


def _key(step: PlanStep) -> tuple[str, tuple[str, ...]]:
    """PDDL is case-insensitive: compare lower-cased names."""
    return step.name.lower(), tuple(arg.lower() for arg in step.args)


def progress_score(
    executed: Sequence[PlanStep],
    reference: Sequence[PlanStep],
    goal_checker_error: bool = False,
) -> ProgressScore:
    """AgenticLab appendix rubric: ``(N_done - N_extra) / N - 0.1 p``, clipped to [0, 1].

    How the rubric's terms are computed here:

    * ``N`` is the number of actions in the *reference* (required) sequence, e.g. the
      optimal plan of the true problem from the episode's initial state
      (:func:`agentic_env.pddl.planning.solve`). The paper's text calls ``N`` "the total number
      of executed actions"; normalising by the executed count would let an agent that
      executes the first required action and stops score (1 - 0) / 1 = 1, so we normalise
      by the required count: stopping early scores ``N_done / N`` and only completing the
      whole required sequence without redundant actions scores 1.
    * ``N_done`` is the number of executed actions that match a required action: a multiset
      matching on the action name and arguments (case-insensitive), where each required
      action can be matched at most once. Matching ignores order, because a task often has
      several equally valid orders (sorting: which item goes first), and an out-of-order
      but correct action still advances the task. Repeating a required action (a retried
      pick after a drop) matches only once; the repeat counts as extra.
    * ``N_extra = len(executed) - N_done``: executed actions that match no (remaining)
      required action, i.e. redundant or wrong actions.
    * ``p = 1`` when ``goal_checker_error`` (the agent's goal checker misjudged whether the
      final state satisfies the goal), costing ``GOAL_CHECKER_PENALTY`` = 0.1.
    * The result is clipped to [0, 1]. An empty reference (goal true from the start) scores
      1 - 0.1 p when nothing was executed and 0 otherwise.

    Args:
        executed: the PDDL actions the agent actually performed, in order.
        reference: the required action sequence.
        goal_checker_error: whether the goal-checker penalty applies.

    Returns:
        The score and the counts behind it.
    """
    remaining = Counter(_key(step) for step in reference)
    n_done = 0
    for step in executed:
        key = _key(step)
        if remaining[key] > 0:
            remaining[key] -= 1
            n_done += 1
    n_extra = len(executed) - n_done
    n_required = len(reference)
    # an empty reference: the goal held from the start, so any action is redundant
    empty_reference = 0.0 if n_extra else 1.0
    raw = (n_done - n_extra) / n_required if n_required else empty_reference
    raw -= GOAL_CHECKER_PENALTY * goal_checker_error
    return ProgressScore(
        score=min(1.0, max(0.0, raw)),
        n_done=n_done,
        n_extra=n_extra,
        n_required=n_required,
        goal_checker_error=goal_checker_error,
    )
