"""The simulator's truth for a model call that judges an outcome (privileged harness code).

A call is scored at the moment it is answered, on the state it judged: MALLVI's Reflector
says whether one move is complete (``task_complete``), and the truth is whether that move
holds in the simulator (:func:`~agentic_env.oracle.mallvi.subtask_truth`). The
results database stores the truth beside the verdict (``calls.truth``), so a sweep's report
gives the Reflector's precision and recall per task. The episode evaluation ``call-truth``
(:class:`CallTruth`, declared by MALLVI's registration; see
:mod:`agentic_env.harness.evaluations`) does it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agentic_env.agents.models.base import CallRecord
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.evaluations import EpisodeEvaluation
from agentic_env.oracle.mallvi import subtask_truth
from agentic_env.oracle.name_book import name_book

if TYPE_CHECKING:
    from agentic_env.agents.base import AgentReport
    from agentic_env.harness.episode import EpisodeResult, EpisodeSpec

#: Modules whose answered calls are scored against the simulator.
SCORED_MODULES: tuple[str, ...] = ("reflector",)


def call_truth(env: SimEnv, record: CallRecord) -> str | None:
    """``"true"``/``"false"``: what ``record`` judged holds in ``env`` now; ``None`` for a
    module that is not scored or a call that failed."""
    if record.query.module not in SCORED_MODULES or record.reply is None:
        return None
    fields = name_book(env).to_ids(dict(record.query.fields))  # the model's names as ids
    holds = subtask_truth(env, str(fields.get("source", "")),
                          str(fields.get("destination", "")), fields.get("place_point"),
                          fields.get("pose"))
    return str(holds).lower()


class CallTruth(EpisodeEvaluation):
    """``call-truth``: each scored call's :func:`call_truth` in its ``truth`` field.

    Args:
        spec: the episode (not needed: every scored call is judged the same way).
    """

    def __init__(self, spec: EpisodeSpec) -> None:
        self._truths: dict[int, str] = {}

    def on_call(self, env: SimEnv, index: int, record: CallRecord) -> None:
        """Judge ``record`` on the state it judged."""
        truth = call_truth(env, record)
        if truth is not None:
            self._truths[index] = truth

    def finish(self, result: EpisodeResult, report: AgentReport) -> EpisodeResult:
        """``result`` with the truth of every scored call."""
        calls = tuple(replace(call, truth=self._truths[index]) if index in self._truths
                      else call for index, call in enumerate(result.calls))
        return replace(result, calls=calls)
