"""The sim-oracle's trace judge: ALRM's 0/1/2 score computed from the truth, offline.

A ``judge`` query's ``fields`` carry the ground-truth subtask sequence and the executed one
(``ground_truth`` and ``executed``, lists of subtask texts in the canonical wording the
privileged harness writes) and, where the task gives them, the orderings it imposes
(``after``: per ground-truth subtask, the indices of the earlier ones it must follow; see
:func:`agentic_env.tasks.subtasks.subtask_dependencies`). The truth is a comparison of the
two, not a reading of the wording: a ground-truth subtask is solved when it was executed after
every subtask it depends on was solved, in any order the task allows (ALRM's judges accept
every valid order); 2 when all are solved, 1 when at least one is, 0 otherwise. With the
module's error rate the score is replaced by one of the other two, uniformly, so judge panels
can be studied with unreliable judges.

:class:`OracleJudge` answers judge queries without a simulator (the dry-run protocol and
tests); the sim-oracle backend answers them the same way (:func:`answer`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.agents.alrm.judge import JUDGE_MODULE
from agentic_env.agents.models.base import Completion, ModelError, ModelQuery, Usage
from agentic_env.errors import InvalidConfigError

if TYPE_CHECKING:
    from agentic_env.oracle.context import OracleContext


#: Words that change nothing in a subtask's meaning when compared.
_FILLER = frozenset({"a", "an", "the"})


def _normal(text: object) -> str:
    """``text`` for comparison: lower case, words only (punctuation, hyphens and underscores
    are spaces), articles dropped."""
    words = re.sub(r"[^0-9a-z]+", " ", str(text).lower()).split()
    return " ".join(word for word in words if word not in _FILLER)


def truth_score(ground_truth: Sequence[str], executed: Sequence[str],
                after: Sequence[Sequence[int]] | None = None) -> int:
    """ALRM's score of ``executed`` against ``ground_truth``, from step matching.

    Steps match when their texts agree up to case, punctuation, spacing and articles. A
    ground-truth subtask is solved when a matching executed step (each used once) comes after
    the matched steps of every subtask it depends on, and those are solved; without ``after``
    any order is allowed. All solved give 2, some 1, none 0 (an empty ground truth is solved
    by anything).

    Args:
        ground_truth: the ground-truth subtasks, in plan order.
        executed: the executed subtasks, in execution order.
        after: per ground-truth subtask, the 0-based indices of the earlier subtasks it must
            follow; ``None``: no ordering.

    Raises:
        InvalidConfigError: ``after`` does not give one entry per subtask, or names a subtask
            that is not an earlier one.
    """
    wanted = [_normal(step) for step in ground_truth]
    done = [_normal(step) for step in executed]
    needs = [tuple(entry) for entry in after] if after is not None else [()] * len(wanted)
    if len(needs) != len(wanted) or any(not 0 <= i < j for j, entry in enumerate(needs)
                                        for i in entry):
        raise InvalidConfigError(f"judge ordering {needs} must give, for each of the "
                                 f"{len(wanted)} subtasks, indices of earlier subtasks")
    position: dict[int, int] = {}
    for index, step in enumerate(wanted):
        if not all(i in position for i in needs[index]):
            continue
        earliest = max((position[i] for i in needs[index]), default=-1)
        used = set(position.values())
        found = next((at for at in range(earliest + 1, len(done))
                      if at not in used and done[at] == step), None)
        if found is not None:
            position[index] = found
    if len(position) == len(wanted):
        return 2
    return 1 if position else 0


def judge_answer(fields: Mapping[str, Any], rng: np.random.Generator,
                 wrong: bool) -> dict[str, Any]:
    """The judge's JSON answer from ``fields``; a wrong score when ``wrong``."""
    ground_truth = [str(step) for step in fields.get("ground_truth", [])]
    executed = [str(step) for step in fields.get("executed", [])]
    after = fields.get("after")
    score = truth_score(ground_truth, executed,
                        None if after is None else [[int(i) for i in entry] for entry in after])
    reasoning = {2: "every subtask of the ground truth was executed, in an order the task "
                    "allows",
                 1: "some subtasks of the ground truth were executed in an order the task "
                    "allows, not all",
                 0: "no subtask of the ground truth was executed in an order the task allows"
                 }[score]
    if wrong:
        score = int(rng.choice([other for other in (0, 1, 2) if other != score]))
        reasoning = "judged carelessly"
    return {"score": score, "reasoning": reasoning}


def answer(oracle: OracleContext, query: ModelQuery) -> dict[str, Any]:
    """The sim-oracle's answer to a ``judge`` query, from its fields and error draw."""
    return judge_answer(query.fields, oracle.rng, oracle.wrong(JUDGE_MODULE))


class OracleJudge:
    """A simulator-free backend that answers only ``judge`` queries, from the truth.

    Its name is the model spec that builds the same judge (``sim-oracle?judge=0.2&seed=7``),
    so panels of oracle judges with distinct seeds report distinct judges.

    Args:
        error_rate: probability in [0, 1] that a score is wrong.
        seed: seed of the error injection.
        name: the name to report instead (an emulated model's spec, whose profile gave
            ``error_rate``).
    """

    def __init__(self, error_rate: float = 0.0, seed: int = 0, name: str | None = None) -> None:
        if not 0.0 <= error_rate <= 1.0:
            raise InvalidConfigError(f"judge error rate must be in [0, 1], got {error_rate}")
        self.name = name or f"sim-oracle?{JUDGE_MODULE}={error_rate:g}&seed={seed}"
        self._rate = error_rate
        self._rng = np.random.default_rng(seed)

    def complete(self, query: ModelQuery) -> Completion:
        """Answer a judge query (see the module docstring)."""
        start = time.perf_counter()
        if query.module != JUDGE_MODULE:
            raise ModelError(f"the oracle judge answers only {JUDGE_MODULE} queries; "
                             f"got {query.module!r}")
        wrong = self._rate > 0.0 and bool(self._rng.random() < self._rate)
        answer = judge_answer(query.fields, self._rng, wrong)
        return Completion(json.dumps(answer),
                          Usage(latency_s=time.perf_counter() - start, cost_usd=0.0))
