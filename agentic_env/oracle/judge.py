"""The sim-oracle's trace judge: ALRM's 0/1/2 score computed from the truth, offline.

A ``judge`` query's ``fields`` carry the ground-truth subtask sequence and the executed one
(``ground_truth`` and ``executed``, lists of subtask texts in the canonical wording the
privileged harness writes). The truth is a comparison of the two, not a reading of the
wording: 2 when every ground-truth subtask was executed in order, 1 when at least one was,
0 otherwise. With the module's error rate the score is replaced by one of the other two,
uniformly, so judge panels can be studied with unreliable judges.

:class:`OracleJudge` answers judge queries without a simulator (the dry-run protocol and
tests); the sim-oracle backend answers them the same way (:func:`answer`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.agents.alrm.judge import JUDGE_MODULE
from agentic_env.agents.models.base import Completion, ModelError, ModelQuery, Usage
from agentic_env.errors import InvalidConfigError

if TYPE_CHECKING:
    from agentic_env.oracle.backend import OracleContext


def _normal(text: object) -> str:
    return " ".join(str(text).lower().replace(".", " ").split())


def truth_score(ground_truth: Sequence[str], executed: Sequence[str]) -> int:
    """ALRM's score of ``executed`` against ``ground_truth``, from exact step matching.

    Steps match when their texts agree up to case, full stops and spacing. The ground-truth
    steps matched, in order, as a subsequence of ``executed``: all of them give 2, some 1,
    none 0 (an empty ground truth is solved by anything).
    """
    wanted = [_normal(step) for step in ground_truth]
    done = iter(_normal(step) for step in executed)
    matched = sum(1 for step in wanted if any(step == other for other in done))
    if matched == len(wanted):
        return 2
    solved_any = bool(set(wanted) & {_normal(step) for step in executed})
    return 1 if solved_any else 0


def judge_answer(fields: Mapping[str, Any], rng: np.random.Generator,
                 wrong: bool) -> dict[str, Any]:
    """The judge's JSON answer from ``fields``; a wrong score when ``wrong``."""
    ground_truth = [str(step) for step in fields.get("ground_truth", [])]
    executed = [str(step) for step in fields.get("executed", [])]
    score = truth_score(ground_truth, executed)
    reasoning = {2: "every subtask of the ground truth was executed in order",
                 1: "some subtasks of the ground truth were executed, not all",
                 0: "no subtask of the ground truth was executed"}[score]
    if wrong:
        score = int(rng.choice([other for other in (0, 1, 2) if other != score]))
        reasoning = "judged carelessly"
    return {"score": score, "reasoning": reasoning}


def answer(oracle: OracleContext, query: ModelQuery) -> dict[str, Any]:
    """The sim-oracle's answer to a ``judge`` query, from its fields and error draw."""
    return judge_answer(query.fields, oracle.rng, oracle.wrong(JUDGE_MODULE))


class OracleJudge:
    """A simulator-free backend that answers only ``judge`` queries, from the truth.

    Args:
        error_rate: probability in [0, 1] that a score is wrong.
        seed: seed of the error injection.
    """

    name = "sim-oracle"

    def __init__(self, error_rate: float = 0.0, seed: int = 0) -> None:
        if not 0.0 <= error_rate <= 1.0:
            raise InvalidConfigError(f"judge error rate must be in [0, 1], got {error_rate}")
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
