"""ALRM's trace judge: a model scores an episode's executed subtasks 0, 1 or 2.

The judge sees the natural-language task, the ground-truth subtask sequence and the executed
one (ALRM, section IV-D and Table II): 0 when no subtask is solved, 1 when at least one is,
2 when all are. Three judges score each episode; the majority wins, and the mean is taken when
all three differ. A benchmark's success rate is the summed score over twice the episode
count; :func:`disagreement_rate` compares the judges with the world state, which ALRM's
accept-everything mock could not. Any backend can judge: a litellm model, a replay cassette,
or offline the sim-oracle's judge (:mod:`agentic_env.oracle.judge`, harness side), which
scores from the truth.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_env.agents.models.ask import ask
from agentic_env.agents.models.base import Backend, CallRecord, ModelQuery
from agentic_env.agents.models.budget import Budget
from agentic_env.agents.models.registry import BackendFactory, build_backend, parse_model_spec
from agentic_env.agents.runtime.prompts import render_prompt
from agentic_env.errors import InvalidConfigError

#: Module name of trace-judge queries.
JUDGE_MODULE = "judge"
#: The scores a judge may give (ALRM Table II).
SCORES: tuple[int, ...] = (0, 1, 2)
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["score", "reasoning"],
    "properties": {"score": {"type": "integer", "enum": list(SCORES)},
                   "reasoning": {"type": "string"}},
}


@dataclass(frozen=True)
class JudgeVerdict:
    """One judge's score of one episode.

    Attributes:
        judge: the backend's name.
        score: 0, 1 or 2.
        reasoning: the judge's explanation.
        attempts: answers requested (more than 1 when malformed answers were re-asked).
    """

    judge: str
    score: int
    reasoning: str
    attempts: int = 1


@dataclass(frozen=True)
class PanelScore:
    """A panel's score of one episode: the verdicts and their combination."""

    verdicts: tuple[JudgeVerdict, ...]
    score: float


def _numbered(steps: Sequence[str]) -> str:
    return "\n".join(f"{index}. {step}" for index, step in enumerate(steps, 1)) or "(none)"


def judge_query(task: str, ground_truth: Sequence[str], executed: Sequence[str]) -> ModelQuery:
    """The judge's query: the rendered ``prompts/judge.md``, its schema and its fields."""
    prompt = render_prompt("agentic_env.agents.alrm", "judge", task=task,
                           ground_truth=_numbered(ground_truth), executed=_numbered(executed))
    return ModelQuery(
        module=JUDGE_MODULE, template="judge.md", prompt=prompt, schema=JUDGE_SCHEMA,
        fields={"task": task, "ground_truth": list(ground_truth), "executed": list(executed)},
    )


def judge_trace(
    backend: Backend,
    task: str,
    ground_truth: Sequence[str],
    executed: Sequence[str],
    *,
    retries: int = 2,
    budget: Budget | None = None,
    on_call: Callable[[CallRecord], None] | None = None,
) -> JudgeVerdict:
    """One judge's verdict; malformed answers are re-asked at most ``retries`` times.

    Raises:
        ModelError: the judge gave no well-formed answer, or its backend failed.
        BudgetExceededError: the budget is spent.
    """
    reply = ask(backend, judge_query(task, ground_truth, executed), retries=retries,
                budget=budget, on_call=on_call)
    return JudgeVerdict(backend.name, int(reply.parsed["score"]),
                        str(reply.parsed["reasoning"]), reply.attempts)


def combine_scores(scores: Sequence[int]) -> float:
    """The panel's score: a score given by more than half the judges, else their mean.

    With ALRM's three judges: the majority vote, and the mean when all three differ.

    Raises:
        InvalidConfigError: no scores, or a score outside 0, 1, 2.
    """
    if not scores or any(score not in SCORES for score in scores):
        raise InvalidConfigError(f"judge scores must be 0, 1 or 2, at least one; got {scores}")
    score, count = Counter(scores).most_common(1)[0]
    if count * 2 > len(scores):
        return float(score)
    return sum(scores) / len(scores)


def judge_with_panel(
    judges: Sequence[Backend],
    task: str,
    ground_truth: Sequence[str],
    executed: Sequence[str],
    **ask_options: Any,
) -> PanelScore:
    """Every judge's verdict and the combined score (:func:`combine_scores`).

    ``ask_options`` go to :func:`judge_trace` (``retries``, ``budget``, ``on_call``).
    """
    verdicts = tuple(judge_trace(judge, task, ground_truth, executed, **ask_options)
                     for judge in judges)
    return PanelScore(verdicts, combine_scores([verdict.score for verdict in verdicts]))


def success_rate(scores: Iterable[float]) -> float:
    """ALRM's success rate: the summed episode scores over twice the number of episodes.

    Raises:
        InvalidConfigError: no scores.
    """
    scores = list(scores)
    if not scores:
        raise InvalidConfigError("success rate of no episodes")
    return sum(scores) / (2 * len(scores))


def disagrees(panel_score: float, world_success: bool) -> bool:
    """Whether the trace judge and the world state disagree on an episode: full marks for an
    episode the world says failed, or less than full marks for one it says succeeded."""
    return (panel_score == 2) != world_success


def disagreement_rate(episodes: Iterable[tuple[float, bool]]) -> float:
    """The share of ``(panel score, world success)`` episodes where :func:`disagrees`.

    Raises:
        InvalidConfigError: no episodes.
    """
    flags = [disagrees(score, success) for score, success in episodes]
    if not flags:
        raise InvalidConfigError("disagreement rate of no episodes")
    return sum(flags) / len(flags)


def build_judge(spec: str, *, oracle_factory: BackendFactory | None = None) -> Backend:
    """A judge backend from a model spec (``--model`` forms).

    A ``sim-oracle`` spec is built by ``oracle_factory``, which the harness passes (e.g.
    :func:`agentic_env.oracle.judge_factory`: the simulator-free oracle judge with the spec's
    ``judge`` error rate and seed, ``sim-oracle?judge=0.2&seed=3``).
    """
    factories = {"sim-oracle": oracle_factory} if oracle_factory is not None else None
    return build_backend(parse_model_spec(spec), factories=factories)
