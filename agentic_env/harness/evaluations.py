"""Named episode evaluations: privileged scoring beside the task's own, declared per agent.

The episode runner (:func:`agentic_env.harness.runner.run_episode`) scores every episode from
the task's ground truth; an evaluation adds a measurement that only some agents' episodes
have, e.g. ALRM's trace judge (``alrm-judge``: :class:`agentic_env.harness.judging.TraceJudge`)
or the simulator's truth of judging verdicts: MALLVI's Reflector, AgenticLab's action and
goal checkers (``call-truth``: :class:`agentic_env.harness.call_truth.CallTruth`). An agent
declares the ones its episodes get when it is registered
(``register_agent(..., evaluations=("alrm-judge",))``, see
:class:`agentic_env.agents.base.AgentEntry`), and the runner runs exactly those.

:data:`EVALUATIONS` maps names to lazy ``"module:attr"`` entry points of
:class:`EpisodeEvaluation` factories (:func:`register_evaluation` adds one); a factory is called
with the :class:`~agentic_env.harness.episode.EpisodeSpec` once per episode. An evaluation
fills three hooks: :meth:`~EpisodeEvaluation.start` after the reset,
:meth:`~EpisodeEvaluation.on_call` as each model call is answered (the env in the state the
call judged) and :meth:`~EpisodeEvaluation.finish` on the scored result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from agentic_env.entry_points import load_entry_point
from agentic_env.errors import InvalidConfigError

if TYPE_CHECKING:
    from agentic_env.agents.base import AgentReport
    from agentic_env.agents.models.base import CallRecord
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.harness.episode import EpisodeResult, EpisodeSpec


class EpisodeEvaluation:
    """One evaluation of one episode (privileged: it may read the simulator's truth); each
    hook does nothing unless a subclass fills it."""

    def start(self, env: SimEnv, instruction: str) -> None:
        """The episode was reset to ``env``'s state and ``instruction``; the agent has not
        acted yet."""

    def on_call(self, env: SimEnv, index: int, record: CallRecord) -> None:
        """The agent's model call ``record`` (the ``index``-th of the episode) was answered;
        ``env`` is in the state the call judged."""

    def finish(self, result: EpisodeResult, report: AgentReport) -> EpisodeResult:
        """``result`` (the episode scored, with one entry per call in order) with this
        evaluation's fields set; ``report`` is the agent's."""
        return result


#: Builds one episode's evaluation from its spec (e.g. an :class:`EpisodeEvaluation` subclass).
EvaluationFactory = Callable[["EpisodeSpec"], EpisodeEvaluation]

#: Evaluation name -> ``"module:attr"`` of its :data:`EvaluationFactory` (or the factory).
EVALUATIONS: dict[str, str | EvaluationFactory] = {
    "alrm-judge": "agentic_env.harness.judging:TraceJudge",
    "call-truth": "agentic_env.harness.call_truth:CallTruth",
}


def register_evaluation(name: str, entry_point: str | EvaluationFactory) -> None:
    """Make ``entry_point`` (``"module:attr"`` of an :data:`EvaluationFactory`, or the
    factory) the evaluation called ``name``; it replaces a registered one."""
    EVALUATIONS[name] = entry_point


def build_evaluations(names: Sequence[str], spec: EpisodeSpec) -> list[EpisodeEvaluation]:
    """The evaluations ``names`` of one episode, in that order.

    Raises:
        InvalidConfigError: an unknown name (the message lists the registered ones), or an
            entry point that cannot be imported.
    """
    unknown = [name for name in names if name not in EVALUATIONS]
    if unknown:
        raise InvalidConfigError(f"unknown episode evaluation(s) {', '.join(unknown)}; "
                                 f"valid: {', '.join(sorted(EVALUATIONS))}")
    evaluations = []
    for name in names:
        factory = EVALUATIONS[name]
        if not callable(factory):
            factory = load_entry_point(factory, f"episode evaluation {name!r}")
        evaluations.append(factory(spec))
    return evaluations
