"""The simulator's truth for a model call that judges an outcome (privileged harness code).

A call is scored at the moment it is answered, on the state it judged: MALLVI's Reflector
says whether one move is complete (``task_complete``), and the truth is whether that move
holds in the simulator (:func:`~agentic_env.oracle.mallvi.subtask_truth`). The
results database stores the truth beside the verdict (``calls.truth``), so a sweep's report
gives the Reflector's precision and recall per task.
"""

from __future__ import annotations

from agentic_env.agents.models.base import CallRecord
from agentic_env.envs.sim_env import SimEnv
from agentic_env.oracle.mallvi import subtask_truth

#: Modules whose answered calls are scored against the simulator.
SCORED_MODULES: tuple[str, ...] = ("reflector",)


def call_truth(env: SimEnv, record: CallRecord) -> str | None:
    """``"true"``/``"false"``: what ``record`` judged holds in ``env`` now; ``None`` for a
    module that is not scored or a call that failed."""
    if record.query.module not in SCORED_MODULES or record.reply is None:
        return None
    fields = record.query.fields
    holds = subtask_truth(env, str(fields.get("source", "")),
                          str(fields.get("destination", "")), fields.get("place_point"),
                          fields.get("pose"))
    return str(holds).lower()
