"""ALRM's trace judge: a model scores an episode's executed subtasks 0, 1 or 2.

The judge sees the natural-language task, the ground-truth subtask sequence and the executed
one (ALRM, section IV-D and Table II): 0 when no subtask is solved, 1 when at least one is,
2 when all are; any order the task allows is valid, and the ground truth marks the orderings
it imposes (``(after 1)``). A panel of three judges scores each episode; the majority wins, and
the mean is taken when all three differ. ALRM's panel is three distinct models, none of them a
model under test: :func:`parse_judges` reads a panel's model specs and :func:`panel_notes`
says where a panel falls short of that. A benchmark's success rate is the summed score over
twice the episode count; :func:`disagreement_rate` compares the judges with the world state,
which ALRM's accept-everything mock could not. Any backend can judge: a litellm model, a
replay cassette, or offline the sim-oracle's judge (:mod:`agentic_env.oracle.judge`, harness
side), which scores from the truth.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_env.agents.models.ask import ask
from agentic_env.agents.models.base import Backend, CallRecord, ModelQuery
from agentic_env.agents.models.budget import Budget
from agentic_env.agents.models.registry import (
    SIM_ORACLE,
    SPEC_FORMS,
    BackendFactory,
    build_backend,
    parse_model_spec,
)
from agentic_env.agents.runtime.prompts import render_prompt
from agentic_env.errors import InvalidConfigError

#: Module name of trace-judge queries.
JUDGE_MODULE = "judge"
#: Judges in ALRM's panel (GPT-4.1, Claude-Sonnet-4 and Gemini-2.5-Flash in the paper).
PANEL_SIZE = 3
#: An example of a panel of three distinct models, for messages.
PANEL_EXAMPLE = "gemini/gemini-3-pro,openai/gpt-5.2,anthropic/claude-opus-4.5"
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


def _numbered(steps: Sequence[str], after: Sequence[Sequence[int]] | None = None) -> str:
    """Steps as a numbered list; with ``after``, each step's orderings as ``(after 1, 2)``."""
    def mark(index: int) -> str:
        earlier = after[index] if after is not None else ()
        return f" (after {', '.join(str(i + 1) for i in earlier)})" if earlier else ""
    return "\n".join(f"{index + 1}. {step}{mark(index)}"
                     for index, step in enumerate(steps)) or "(none)"


def judge_query(task: str, ground_truth: Sequence[str], executed: Sequence[str],
                after: Sequence[Sequence[int]] | None = None) -> ModelQuery:
    """The judge's query: the rendered ``prompts/judge.md``, its schema and its fields.

    Args:
        task: the natural-language task.
        ground_truth: the ground-truth subtasks, in plan order.
        executed: the executed subtasks, in execution order.
        after: per ground-truth subtask, the 0-based indices of the earlier subtasks it must
            follow (the task's orderings); ``None``: none given. Shown in the prompt as
            ``(after N)``, 1-based, and passed in the ``after`` field.
    """
    prompt = render_prompt("agentic_env.agents.alrm", "judge", task=task,
                           ground_truth=_numbered(ground_truth, after),
                           executed=_numbered(executed))
    fields: dict[str, Any] = {"task": task, "ground_truth": list(ground_truth),
                              "executed": list(executed)}
    if after is not None:
        fields["after"] = [list(entry) for entry in after]
    return ModelQuery(module=JUDGE_MODULE, template="judge.md", prompt=prompt,
                      schema=JUDGE_SCHEMA, fields=fields)


def judge_trace(
    backend: Backend,
    task: str,
    ground_truth: Sequence[str],
    executed: Sequence[str],
    *,
    after: Sequence[Sequence[int]] | None = None,
    retries: int = 2,
    budget: Budget | None = None,
    on_call: Callable[[CallRecord], None] | None = None,
) -> JudgeVerdict:
    """One judge's verdict; malformed answers are re-asked at most ``retries`` times.

    ``after``: the task's orderings (see :func:`judge_query`).

    Raises:
        ModelError: the judge gave no well-formed answer, or its backend failed.
        BudgetExceededError: the budget is spent.
    """
    reply = ask(backend, judge_query(task, ground_truth, executed, after), retries=retries,
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

    ``ask_options`` go to :func:`judge_trace` (``after``, ``retries``, ``budget``,
    ``on_call``). Each backend in ``judges`` is asked once, in order; the verdicts name them.
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


def parse_judges(text: str) -> tuple[str, ...]:
    """A panel's judge model specs from a comma-separated list (``--judges``), checked.

    Raises:
        InvalidConfigError: an empty list or item, a malformed spec (the message lists the
            valid forms), or a model named twice.
    """
    specs = tuple(part.strip() for part in text.split(","))
    if not all(specs):
        raise InvalidConfigError(
            f"judges {text!r}: give model specs separated by commas, e.g. {PANEL_EXAMPLE!r}; "
            f"each one of {SPEC_FORMS}")
    check_judges(specs)
    return specs


def check_judges(specs: Sequence[str]) -> None:
    """Check a panel's judge model specs: each parses, none is named twice.

    Raises:
        InvalidConfigError: a malformed spec (the message lists the valid forms), a model
            named twice (a panel asks distinct models), or no spec.
    """
    if not specs:
        raise InvalidConfigError(f"a judge panel needs at least one model spec, e.g. "
                                 f"{PANEL_EXAMPLE!r}")
    for spec in specs:
        parse_model_spec(spec)
    repeated = sorted({spec for spec in specs if list(specs).count(spec) > 1})
    if repeated:
        raise InvalidConfigError(
            f"judge {', '.join(repeated)} is named more than once; a panel asks distinct "
            f"models, e.g. {PANEL_EXAMPLE!r}")


def panel_seats(specs: Sequence[str]) -> list[str]:
    """The spec each panel seat is built from: one spec fills all :data:`PANEL_SIZE` seats,
    several take one seat each."""
    return list(specs) * PANEL_SIZE if len(specs) == 1 else list(specs)


def panel_notes(specs: Sequence[str], under_test: Sequence[str] = ()) -> list[str]:
    """Sentences on where a panel of ``specs`` falls short of ALRM's: three distinct models,
    none of them under test (``under_test``: the episode's model specs). A single
    ``sim-oracle`` spec is a panel: its three oracle judges draw their errors independently.
    """
    notes = []
    oracle_only = len(specs) == 1 and parse_model_spec(specs[0]).kind == SIM_ORACLE
    if len(specs) == 1 and not oracle_only:
        notes.append(f"one judge model ({specs[0]}) asked {PANEL_SIZE} times is not a panel: "
                     f"its answers share its errors; give {PANEL_SIZE} distinct models, e.g. "
                     f"{PANEL_EXAMPLE}")
    elif 1 < len(specs) < PANEL_SIZE:
        notes.append(f"{len(specs)} judges ({', '.join(specs)}): a split vote is averaged; "
                     f"ALRM's panel is {PANEL_SIZE} distinct models")
    for spec in specs:
        if spec in under_test and parse_model_spec(spec).kind != SIM_ORACLE:
            notes.append(f"judge {spec} is also a model under test; ALRM's judges are distinct "
                         "from the models they assess")
    return notes


def build_judge(spec: str, *, oracle_factory: BackendFactory | None = None) -> Backend:
    """A judge backend from a model spec (``--model`` forms).

    A ``sim-oracle`` spec is built by ``oracle_factory``, which the harness passes (e.g.
    :func:`agentic_env.oracle.judge_factory`: the simulator-free oracle judge with the spec's
    ``judge`` error rate and seed, ``sim-oracle?judge=0.2&seed=3``).
    """
    factories = {"sim-oracle": oracle_factory} if oracle_factory is not None else None
    return build_backend(parse_model_spec(spec), factories=factories)
