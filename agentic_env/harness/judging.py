"""ALRM's trace judge beside the world state, for agents that report subtasks.

The episode evaluation ``alrm-judge`` (:class:`TraceJudge`, declared by ALRM's registration;
see :mod:`agentic_env.harness.evaluations`): at the start of an episode :func:`ground_truth`
writes the task's ground-truth subtask sequence (its reference plan from the true initial
state) and the orderings its PDDL conditions impose (the drawer opened before something goes
in, the lower block placed before the upper one; every other order is valid). At the end,
when the agent's report holds ``subtask`` events (ALRM's planner), :func:`judge_episode` has a
panel of judges score the executed sequence 0/1/2 against it (majority, mean when all differ);
the harness stores that score with the episode (``judge_score``), with the judges that scored
(``judges``) and what the panel lacks (``judge_notes``), next to the simulator's success, so
the judge-world disagreement can be counted per category and mode.

The panel (:func:`panel_specs`) is the episode's ``judges`` (``--judges A,B,C``: ALRM's three
distinct models), else the ``judge`` module's model (``--modules judge=...``), else the
sim-oracle's judges, never silently the model under test. A ``sim-oracle`` spec fills its
seats with simulator-free oracle judges with its judge error rate and distinct seeds, whose
errors are independent; one other model fills all three seats, and the notes say that it is
not a panel. Judge calls are the harness's evaluation, not the agent's: they are not counted
in the episode's tokens.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace

from agentic_env.agents.alrm.judge import (
    JUDGE_MODULE,
    PANEL_SIZE,
    check_judges,
    judge_with_panel,
    panel_notes,
    panel_seats,
)
from agentic_env.agents.base import AgentReport
from agentic_env.agents.models.base import Backend, ModelError
from agentic_env.agents.models.registry import (
    EMULATED,
    SIM_ORACLE,
    BackendFactory,
    build_backend,
    parse_model_spec,
)
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.evaluations import EpisodeEvaluation
from agentic_env.oracle import OracleJudge, load_profile
from agentic_env.oracle.name_book import NameBook, name_book, replace_names
from agentic_env.pddl.planning import PlanNotFoundError
from agentic_env.tasks.base import SymbolicTask
from agentic_env.tasks.subtasks import (
    ground_truth_dependencies,
    ground_truth_subtasks,
    object_words,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GroundTruth:
    """A task's ground-truth subtasks and their orderings.

    Attributes:
        subtasks: the subtasks' texts, in the reference plan's order.
        after: per subtask, the 0-based indices of the earlier subtasks it must follow
            (:func:`agentic_env.tasks.subtasks.subtask_dependencies`).
    """

    subtasks: tuple[str, ...]
    after: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class PanelVerdict:
    """A panel's score of one episode and who gave it.

    Attributes:
        score: the combined score, 0..2.
        judges: the name of each seat's judge, in order.
        notes: where the panel falls short of ALRM's (:func:`panel_notes`).
    """

    score: float
    judges: tuple[str, ...]
    notes: tuple[str, ...]


def ground_truth(env: SimEnv) -> GroundTruth | None:
    """The ground-truth subtasks of ``env``'s task from its state now and their orderings
    (``None``: the task has no PDDL model or no plan)."""
    if not isinstance(env.task, SymbolicTask):
        return None
    try:
        subtasks = ground_truth_subtasks(env.task, env.scene_state)
    except PlanNotFoundError:
        return None
    after = ground_truth_dependencies(env.task, env.scene_state, subtasks)
    return GroundTruth(tuple(s.text for s in subtasks), tuple(after))


def executed_subtasks(report: AgentReport) -> list[str] | None:
    """The subtasks the agent reports as carried out, in order (``None``: it reports none)."""
    steps = [e for e in report.events if e.get("kind") == "subtask"]
    if not steps:
        return None
    return [str(e["subtask"]) for e in steps if e.get("ok")]


def panel_specs(spec: EpisodeSpec) -> tuple[str, ...]:
    """The judge model specs of ``spec``'s panel: its ``judges``, else its ``judge`` module's
    model, else the sim-oracle (``spec.model`` when that is a sim-oracle, for its judge error
    rate and seed; never another model under test).

    Raises:
        InvalidConfigError: a malformed or repeated judge spec.
    """
    if spec.judges:
        check_judges(spec.judges)
        return tuple(spec.judges)
    module = spec.module_models().get(JUDGE_MODULE)
    if module is not None:
        return (module,)
    return (spec.model if parse_model_spec(spec.model).kind == SIM_ORACLE else SIM_ORACLE,)


def build_panel(spec: EpisodeSpec, *,
                factories: Mapping[str, BackendFactory] | None = None) -> list[Backend]:
    """One judge backend per seat of ``spec``'s panel (:func:`panel_specs`,
    :func:`agentic_env.agents.alrm.judge.panel_seats`).

    A ``sim-oracle`` seat is an :class:`OracleJudge` with the spec's judge error rate and a
    seed of its own (from the spec's seed, the seat and the episode's seed), so the oracle
    judges err independently; another spec is built once (``factories``: backend factories
    by spec kind beyond the built-in ones) and sits in each of its seats.

    Raises:
        InvalidConfigError: a malformed or repeated judge spec.
        MissingAPIKeyError: a litellm judge's provider key is not set.
        ModelError: a replay judge's folder is missing or unreadable.
    """
    built: dict[str, Backend] = {}
    judges: list[Backend] = []
    for seat, text in enumerate(panel_seats(panel_specs(spec))):
        parsed = parse_model_spec(text)
        seed = (parsed.seed * PANEL_SIZE + seat) * 100_003 + spec.seed
        if parsed.kind == SIM_ORACLE:
            judges.append(OracleJudge(parsed.error_rates.get(JUDGE_MODULE, 0.0), seed=seed))
            continue
        if parsed.kind == EMULATED:  # the profile's judge (its goal checker's error rate)
            judge = load_profile(str(parsed.model)).module_for(JUDGE_MODULE)
            judges.append(OracleJudge(1.0 - judge.success.value, seed=seed, name=text))
            continue
        if text not in built:
            built[text] = build_backend(parsed, factories=factories)
        judges.append(built[text])
    return judges


def judge_episode(spec: EpisodeSpec, instruction: str, truth: GroundTruth | None,
                  report: AgentReport, *,
                  factories: Mapping[str, BackendFactory] | None = None,
                  names: Mapping[str, str] | None = None) -> PanelVerdict | None:
    """The panel's verdict on the episode, ``None`` when it cannot be judged (no ground
    truth, no reported subtasks, or the judges failed).

    Args:
        spec: the episode (its judges, models and seed).
        instruction: the task as the agent was given it.
        truth: the ground truth (:func:`ground_truth`).
        report: the agent's report (its ``subtask`` events).
        factories: backend factories by spec kind for the judges (:func:`build_panel`).
        names: a model's name -> the ground truth's words for the thing it names
            (:func:`truth_words`): the executed steps are shown to the judges in the ground
            truth's words, so a score does not depend on how a model spelt the things.
    """
    executed = executed_subtasks(report)
    if truth is None or executed is None:
        return None
    executed = [str(replace_names(step, names or {})) for step in executed]
    specs = panel_specs(spec)
    under_test = (spec.model, *spec.module_models().values())
    notes = tuple(panel_notes(specs, under_test=under_test))
    for note in notes:
        logger.warning("trace judges: %s", note)
    try:
        panel = judge_with_panel(build_panel(spec, factories=factories), instruction,
                                 list(truth.subtasks), executed, after=truth.after)
    except ModelError as error:
        logger.warning("the trace judges failed: %s", error)
        return None
    return PanelVerdict(panel.score, tuple(v.judge for v in panel.verdicts), notes)


def truth_words(book: NameBook) -> dict[str, str]:
    """Each name a model introduced in the episode -> the ground truth's words for the thing
    it is bound to (``crimson-package`` -> ``cracker box``)."""
    words = object_words(sorted(book.ids))
    return {name: words[thing] for name, thing in book.alignment.bound.items()
            if name != thing and thing in words}


class TraceJudge(EpisodeEvaluation):
    """``alrm-judge``: the trace judges' score of the episode in ``judge_score``, their
    names in ``judges`` and the panel's shortcomings in ``judge_notes``.

    Args:
        spec: the episode (its judges, judge model and seed).

    Raises:
        InvalidConfigError: a malformed or repeated judge spec (before the episode runs).
    """

    def __init__(self, spec: EpisodeSpec) -> None:
        panel_specs(spec)
        self._spec = spec
        self._truth: GroundTruth | None = None
        self._instruction = ""
        self._book: NameBook | None = None

    def start(self, env: SimEnv, instruction: str) -> None:
        """Keep the ground truth of the initial state and the instruction."""
        self._truth, self._instruction = ground_truth(env), instruction
        self._book = name_book(env)

    def finish(self, result: EpisodeResult, report: AgentReport) -> EpisodeResult:
        """``result`` with the panel's :func:`judge_episode` verdict (the executed steps in
        the ground truth's words, :func:`truth_words`)."""
        names = truth_words(self._book) if self._book is not None else None
        verdict = judge_episode(self._spec, self._instruction, self._truth, report, names=names)
        if verdict is None:
            return result
        return replace(result, judge_score=verdict.score, judges=verdict.judges,
                       judge_notes=verdict.notes)
