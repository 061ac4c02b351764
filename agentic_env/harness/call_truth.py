"""The simulator's truth for a model call that judges an outcome (privileged harness code).

A call is scored at the moment it is answered, on the state it judged, and the truth is the
verdict a perfect judge would give there:

* MALLVI's Reflector says whether one move is complete (``task_complete``); the truth is
  whether that move holds in the simulator (:func:`~agentic_env.oracle.mallvi.subtask_truth`).
* AgenticLab's action checker (``checker``) says whether an action's preconditions or effects
  hold ("is X in the gripper", "is X on Y"); the truth is whether every one of its PDDL
  conditions is a true fact of the symbolic state.
* AgenticLab's goal checker (``goal``) says whether the task is complete; the truth is the
  task's own success test on the scene.

The checkers' truth is the error-free sim-oracle's answer to the same query
(:func:`agentic_env.oracle.agenticlab.answer` with no injected errors), so the oracle and the
scoring cannot disagree on what holds. The results database stores the truth beside the
verdict (``calls.truth``): a sweep's report gives each judge's precision and recall, and the
failure breakdown (:mod:`agentic_env.reports.failures`) books the first call whose verdict
contradicts its truth as the episode's first failure. The episode evaluation ``call-truth``
(:class:`CallTruth`, declared by MALLVI's and AgenticLab's registrations; see
:mod:`agentic_env.harness.evaluations`) does it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from agentic_env.agents.models.base import CallRecord, ModelQuery
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.evaluations import EpisodeEvaluation
from agentic_env.oracle import agenticlab
from agentic_env.oracle.backend import OracleContext
from agentic_env.oracle.mallvi import subtask_truth
from agentic_env.oracle.name_book import name_book

if TYPE_CHECKING:
    from agentic_env.agents.base import AgentReport
    from agentic_env.harness.episode import EpisodeResult, EpisodeSpec


def _move_holds(env: SimEnv, query: ModelQuery) -> bool:
    """Whether the Reflector's move (its query's source, destination, place point and pose,
    in ids) holds in ``env``."""
    fields = query.fields
    return subtask_truth(env, str(fields.get("source", "")),
                         str(fields.get("destination", "")), fields.get("place_point"),
                         fields.get("pose"))


def _perfect_verdict(env: SimEnv, query: ModelQuery) -> bool:
    """The ``success`` of the error-free sim-oracle's answer to one of AgenticLab's checks
    (``query`` in ids) in ``env`` now."""
    return bool(agenticlab.answer(OracleContext(env, {}, seed=0), query)["success"])


#: Module -> the truth of what its verdict claims, from the simulator's state (the query's
#: fields in the simulator's ids).
_TRUTHS: dict[str, Callable[[SimEnv, ModelQuery], bool]] = {
    "reflector": _move_holds, "checker": _perfect_verdict, "goal": _perfect_verdict}

#: Modules whose answered calls are scored against the simulator.
SCORED_MODULES: tuple[str, ...] = tuple(_TRUTHS)


def call_truth(env: SimEnv, record: CallRecord) -> str | None:
    """``"true"``/``"false"``: what ``record`` judged holds in ``env`` now, in its verdict's
    words (:func:`~agentic_env.harness.trace.call_verdict`); ``None`` for a module that is
    not scored or a call that failed."""
    truth = _TRUTHS.get(record.query.module)
    if truth is None or record.reply is None:
        return None
    fields = name_book(env).to_ids(dict(record.query.fields))  # the model's names as ids
    return str(truth(env, replace(record.query, fields=fields))).lower()


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
