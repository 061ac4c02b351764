"""Plan error kinds of the sim-oracle's planners: the mistakes models make when they plan.

A planner role (MALLVI's Decomposer and single agent, ALRM's task planner and task
executor, the planner-executor's planner; :data:`~agentic_env.oracle.profile.PLAN_ROLES`)
that errs makes one of these kinds (:data:`~agentic_env.oracle.profile.KINDS` ``["plan"]``):

* ``skipped_step``: one step of the plan is left out (believed done);
* ``reordered_steps``: two steps swap places (harmless where the order does not matter, a
  plan the world refutes where it does: a tower built out of order);
* ``wrong_object``: a step names a look-alike (an object of the same category, else of the
  same type) instead of its object;
* ``premature_done``: the planner declares the task (or the subtask) complete early;
* ``nested_call`` (ALRM's task executor only): a malformed or mis-nested tool call or
  program, the failure ALRM names for small models (Sec. V-A).

Which kind a wrong answer makes is drawn by the weights of the oracle's profile
(:meth:`~agentic_env.oracle.context.OracleContext.error_kind`), or uniformly among the
role's kinds when no profile weighs them (a plain ``sim-oracle?decomposer=0.2`` spec). An
answer that cannot make the kind drawn (no second step to swap, no look-alike in the scene)
stays right. Each error drawn (and the planner-executor's router and critic verdict errors)
is noted for the episode's trace (:func:`errors_drawn`, the ``plan_errors`` of its
``episode.json``). Privileged: only the sim-oracle's answers and the harness use it.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentic_env.oracle.difficulty import same_category
from agentic_env.oracle.profile import PLAN_ROLES

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.oracle.context import OracleContext

#: Each simulator's errors drawn so far (weak: an env's list goes with it).
_DRAWN: weakref.WeakKeyDictionary[SimEnv, list[dict[str, Any]]] = weakref.WeakKeyDictionary()


def note_error(oracle: OracleContext, role: str, kind: str) -> None:
    """Note that an answer of ``role`` errs by ``kind`` now (simulated time, s)."""
    _DRAWN.setdefault(oracle.env, []).append(
        {"role": role, "kind": kind, "sim_time_s": round(float(oracle.env.data.time), 3)})


def errors_drawn(env: SimEnv) -> list[dict[str, Any]]:
    """The errors drawn so far over ``env`` (``role``, ``kind``, ``sim_time_s``), in order."""
    return [dict(entry) for entry in _DRAWN.get(env, ())]


def plan_error(oracle: OracleContext, role: str) -> str | None:
    """Whether this answer of ``role`` errs (at its rate) and by which of its plan error
    kinds; ``None`` for a right answer."""
    if not oracle.wrong(role):
        return None
    kinds = PLAN_ROLES[role]
    kind = oracle.error_kind(role)
    if kind not in kinds:
        kind = kinds[int(oracle.rng.integers(len(kinds)))]
    note_error(oracle, role, str(kind))
    return kind


def look_alike(oracle: OracleContext, obj: str) -> str | None:
    """An object a model may take for ``obj``: one of its category (same type sharing a
    noun or a label), else another of its PDDL type; ``None`` when the scene has none."""
    kin = sorted(same_category(oracle.env, obj))
    if not kin:
        types = oracle.task.pddl_objects()
        kin = sorted(o for o, t in types.items() if t == types.get(obj) and o != obj)
    return str(kin[int(oracle.rng.integers(len(kin)))]) if kin else None


def reshaped[Step](steps: Sequence[Step], kind: str,
                   oracle: OracleContext) -> list[Step] | None:
    """``steps`` with the plan error ``kind`` made, for the kinds that change only which
    steps come in which order: ``skipped_step`` (one left out), ``reordered_steps`` (two
    neighbours swapped), ``premature_done`` (the tail cut: only the first k < n kept).
    ``None`` when the kind is another one or ``steps`` are too few to make it."""
    rng, steps = oracle.rng, list(steps)
    if kind == "skipped_step" and steps:
        drop = int(rng.integers(len(steps)))
        return steps[:drop] + steps[drop + 1:]
    if kind == "reordered_steps" and len(steps) > 1:
        first = int(rng.integers(len(steps) - 1))
        steps[first], steps[first + 1] = steps[first + 1], steps[first]
        return steps
    if kind == "premature_done" and steps:
        return steps[:int(rng.integers(len(steps)))]
    return None
