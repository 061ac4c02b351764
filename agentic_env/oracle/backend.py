"""The sim-oracle backend: a privileged, offline model that answers from simulator ground truth.

It is the offline default of every command. It reads the simulator (true facts, the task's
goal, segmentation masks) — which no agent may do — and answers each module's query with the
same JSON (or tool calls) a real model must produce, so all the agent's parsing, validation
and control code runs for real. Which function answers a module is looked up in
:mod:`agentic_env.oracle.answers` (the built-in agents' tables are in
:mod:`agentic_env.oracle.agents`). Errors can be injected per module at a seeded rate, to
study how module errors compound; each agent's answer module lists its error kinds.

By default every answer draws its errors afresh (independent coin flips per call). With a
re-ask redraw probability below 1 (``reask_redraw``, an emulated model's profile), errors
persist: every call's draws come from a stream keyed by its *situation* — the module, the
query's fields and conversation in ids and the world it is about (the true facts and every
free body's pose, rounded) — so asking again in an unchanged situation gives the same
answer (the same error, of the same kind) unless a coin of probability ``reask_redraw``
redraws it, while a changed situation (something moved, another question, new feedback in
the conversation) draws afresh. Each call's marginal error rate is unchanged.

The harness builds it (:func:`agentic_env.oracle.oracle_factories`) and hands the agent only
a :class:`~agentic_env.agents.models.registry.ModelHandle` to it, so nothing an agent holds
leads to the simulator.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from agentic_env.agents.models.base import PLANNER_ERRORS, Completion, ModelError, ModelQuery, Usage
from agentic_env.agents.models.modules import module_names
from agentic_env.errors import InvalidConfigError
from agentic_env.oracle.answers import answer_for
from agentic_env.oracle.described import DescribedNames
from agentic_env.oracle.difficulty import DifficultyModel, Sighting
from agentic_env.oracle.name_book import NameBook, name_book
from agentic_env.sim.state import capture_object_poses
from agentic_env.tasks.base import SymbolicTask

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv

PartT = TypeVar("PartT")

#: Grid (m) the free bodies' positions are rounded to in a situation's key.
POSITION_GRID = 0.01
#: Grid the free bodies' orientation quaternions are rounded to in a situation's key.
QUATERNION_GRID = 0.1


class OracleContext:
    """What the sim-oracle's answers read: the simulator, the injected-error draw and one
    random stream (privileged; only the sim-oracle backend holds it).

    Args:
        env: the simulator (a symbolic task).
        error_rates: module or error kind -> probability in [0, 1] of a wrong answer.
        seed: seed of the error injection.
        kinds: module -> its error kinds' relative weights (> 0); a module without them errs
            its answer's own way.
        min_visible_px: an object with fewer pixels than this in the image a role was sent
            is not seen (1: any pixel will do).
        reask_redraw: probability in [0, 1] that a call in a situation asked before draws
            its errors afresh (1: independent draws on every call; see the module
            docstring).
        difficulty: module -> the model that makes its error rate depend on how hard the
            target is to see (:mod:`agentic_env.oracle.difficulty`); other modules err at
            their plain rate.
        sees_image_only: answers that list the scene list only what the image sent shows
            (else every object of the task).

    Attributes:
        env: the simulator the answers read.
        names: the episode's bindings of model names to the simulator's ids.
        rng: the random stream of the error injection (with persistent errors: of the
            current call's situation, set by :meth:`begin`).
        min_visible_px: the visibility threshold, pixels of the image sent.
        reask_redraw: the re-ask redraw probability.
        sees_image_only: whether scene listings hold only what the image sent shows.
    """

    def __init__(self, env: SimEnv, error_rates: Mapping[str, float], seed: int,
                 kinds: Mapping[str, Mapping[str, float]] | None = None,
                 min_visible_px: int = 1, reask_redraw: float = 1.0,
                 difficulty: Mapping[str, DifficultyModel] | None = None,
                 sees_image_only: bool = False) -> None:
        self.env = env
        self.sees_image_only = sees_image_only
        self.names: NameBook = name_book(env)
        self.rng = np.random.default_rng(seed)
        self.min_visible_px = min_visible_px
        self.reask_redraw = reask_redraw
        self._rates = dict(error_rates)
        self._kinds = {module: dict(weights) for module, weights in (kinds or {}).items()}
        self._difficulty = dict(difficulty or {})
        self._parts: dict[type, Any] = {}
        self._seed = seed
        self._situations: dict[str, int] = {}
        self._redraws = np.random.default_rng([seed, 1])  # the re-ask coins and salts

    def begin(self, query: ModelQuery) -> None:
        """Start answering ``query`` (in ids): with persistent errors (``reask_redraw`` < 1),
        point :attr:`rng` at the stream of its situation — the one this situation drew
        before, unless a coin of probability ``reask_redraw`` redraws it (a new situation
        always draws afresh). With independent errors, nothing changes."""
        if self.reask_redraw >= 1.0:
            return
        key = self.situation(query)
        salt = self._situations.get(key)
        if salt is None or self._redraws.random() < self.reask_redraw:
            salt = int(self._redraws.integers(2**62))
            self._situations[key] = salt
        self.rng = np.random.default_rng([self._seed, salt])

    def situation(self, query: ModelQuery) -> str:
        """The key of ``query``'s situation: its module, its fields and conversation (a
        tool-calling model's turns and the feedback it was given; not its images) and the
        world they are about — the true facts and every free body's position (to
        :data:`POSITION_GRID`) and orientation (to :data:`QUATERNION_GRID`)."""
        poses = [(p.name, [round(v / POSITION_GRID) for v in p.position],
                  [round(v / QUATERNION_GRID) for v in p.quaternion])
                 for p in capture_object_poses(self.env.scene_state)]
        text = json.dumps([query.module, query.fields, query.messages, sorted(self.facts()),
                           poses], sort_keys=True, default=_plain)
        return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()

    @property
    def task(self) -> SymbolicTask:
        """The env's task (a symbolic one: the backend checks)."""
        return self.env.task  # type: ignore[return-value]

    def facts(self) -> set[str]:
        """The true PDDL facts now, lower case, written ``p a b``."""
        return {f.lower() for f in self.task.facts(self.env.scene_state)}

    def wrong(self, module: str, kind: str | None = None,
              seen: Callable[[], Sighting] | None = None) -> bool:
        """Draw whether this answer of ``module`` is wrong, at its injected error rate.

        ``kind`` is the only error this answer can make (a verdict whose truth holds can only
        be a ``false_fail``): where the module's kinds are weighed, the rate is scaled by the
        kind's share times their number (so equally weighted kinds keep the module's rate,
        and the aggregate rate holds when each kind's situation is equally frequent).
        ``seen`` gives the target's sighting in the image sent; where the module's
        difficulty is weighed, the rate is that sighting's
        (:meth:`~agentic_env.oracle.difficulty.DifficultyModel.rate`).
        """
        rate = self._rates.get(module, 0.0)
        weights = self._kinds.get(module)
        if kind is not None and weights:
            rate = min(1.0, rate * weights.get(kind, 0.0) * len(weights)
                       / sum(weights.values()))
        model = self._difficulty.get(module)
        if model is not None and seen is not None and rate > 0.0:
            rate = model.rate(rate, seen())
        return rate > 0.0 and bool(self.rng.random() < rate)

    def error_kind(self, module: str) -> str | None:
        """Which of ``module``'s weighed error kinds a wrong answer makes, drawn by weight;
        ``None`` (no draw) when its kinds are not weighed."""
        weights = self._kinds.get(module)
        if not weights:
            return None
        names = sorted(weights)
        shares = np.array([weights[k] for k in names], float)
        return str(names[int(self.rng.choice(len(names), p=shares / shares.sum()))])

    def shown(self, names: Iterable[str], camera: str, size: tuple[int, int]) -> set[str]:
        """Those of ``names`` the image of ``camera`` at ``size`` (height, width; 0, 0: the
        camera's own) shows (:meth:`~agentic_env.oracle.agenticlab.AgenticLabOracle.shown`)."""
        from agentic_env.oracle.agenticlab import AgenticLabOracle

        return self.part(AgenticLabOracle).shown(names, camera, size)

    def part(self, kind: Callable[[OracleContext], PartT]) -> PartT:
        """The answering helper ``kind(self)``, built on first use and kept for the episode
        (e.g. :class:`~agentic_env.oracle.agenticlab.AgenticLabOracle` and its
        segmentation cache)."""
        if kind not in self._parts:
            self._parts[kind] = kind(self)  # type: ignore[index]
        return self._parts[kind]  # type: ignore[index]

    def forget(self) -> None:
        """Drop every helper (their caches; the env owns the renderer that made them)."""
        self._parts.clear()


class SimOracle:
    """Privileged offline model over one :class:`~agentic_env.envs.sim_env.SimEnv`.

    Args:
        env: the env whose ground truth answers the queries (a symbolic task); kept private.
        error_rates: module name (or planner error kind) -> probability in [0, 1] of a wrong
            answer.
        seed: seed of the error injection.
        names: ``ids`` (answer with the simulator's ids) or ``described`` (invent names by
            looks, :mod:`agentic_env.oracle.described`).
        kinds: module -> its error kinds' relative weights (see :class:`OracleContext`).
        min_visible_px: an object with fewer pixels than this in the image sent is not seen.
        reask_redraw: probability in [0, 1] that a re-ask in an unchanged situation draws
            its errors afresh (1, the default: independent draws on every call).
        difficulty: module -> its difficulty model (see :class:`OracleContext`).
        sees_image_only: scene listings hold only what the image sent shows.

    Queries are read in ids (every name a model introduced in the episode is bound to its id
    through the episode's :class:`~agentic_env.oracle.name_book.NameBook`) and answers written
    in the names the agent knows, so the oracle answers correctly whatever model named things.

    Raises:
        InvalidConfigError: the task has no PDDL model, or an unknown module or a rate
            outside [0, 1].
    """

    name = "sim-oracle"

    def __init__(self, env: SimEnv, error_rates: Mapping[str, float] | None = None,
                 seed: int = 0, names: str = "ids", *,
                 kinds: Mapping[str, Mapping[str, float]] | None = None,
                 min_visible_px: int = 1, reask_redraw: float = 1.0,
                 difficulty: Mapping[str, DifficultyModel] | None = None,
                 sees_image_only: bool = False) -> None:
        if not isinstance(env.task, SymbolicTask):
            raise InvalidConfigError(f"the sim-oracle needs a task with a PDDL model; "
                                     f"{env.task.name!r} has none")
        rates = dict(error_rates or {})
        for module, rate in rates.items():
            if module not in (*module_names(), *PLANNER_ERRORS) or not 0.0 <= rate <= 1.0:
                raise InvalidConfigError(
                    f"sim-oracle error rate {module}={rate}: modules are "
                    f"{', '.join(module_names())}, "
                    f"planner error kinds {', '.join(PLANNER_ERRORS)}, rates in [0, 1]")
        if not 0.0 <= reask_redraw <= 1.0:
            raise InvalidConfigError(f"sim-oracle reask_redraw={reask_redraw}: a probability "
                                     "in [0, 1]")
        self._context = OracleContext(env, rates, seed, kinds, min_visible_px, reask_redraw,
                                      difficulty, sees_image_only)
        self._described = DescribedNames(env, seed) if names == "described" else None

    def complete(self, query: ModelQuery) -> Completion:
        """Answer ``query`` from ground truth with the module's registered answer.

        Raises:
            ModelError: no answer is registered for the query's module.
        """
        start = time.perf_counter()
        answer = answer_for(query.module, query.template)
        if answer is None:
            raise ModelError(
                f"the sim-oracle has no answer for module {query.module!r}; register one "
                "with agentic_env.oracle.register_answer")
        asked = self._in_ids(query)
        self._context.begin(asked)
        result: dict[str, Any] | Completion = answer(self._context, asked)
        result = self._speak(result)
        usage = Usage(latency_s=time.perf_counter() - start, cost_usd=0.0)
        if isinstance(result, Completion):
            return replace(result, usage=usage)
        return Completion(json.dumps(result, indent=1), usage)

    def _in_ids(self, query: ModelQuery) -> ModelQuery:
        """``query`` (its fields and conversation) with the agent's names written as ids."""
        fields, messages = dict(query.fields), list(query.messages)
        if self._described is not None:
            fields, messages = self._described.to_ids(fields), self._described.to_ids(messages)
        book = self._context.names
        return replace(query, fields=book.to_ids(fields),
                       messages=tuple(book.to_ids(messages, learn=False)))

    def _speak(self, result: dict[str, Any] | Completion) -> dict[str, Any] | Completion:
        """``result`` in the agent's names: this oracle's own (``names=described``), then
        those the episode's models introduced."""
        book = self._context.names
        keep = book.named()
        speakers: list[Callable[[Any], Any]] = [book.from_ids]
        if self._described is not None:
            speakers.insert(0, partial(self._described.from_ids, keep=keep))
        for speak in speakers:
            if isinstance(result, Completion):
                calls = tuple(replace(c, arguments=speak(dict(c.arguments)))
                              for c in result.tool_calls)
                result = replace(result, text=speak(result.text), tool_calls=calls)
            else:
                result = speak(result)
        return result

    def close(self) -> None:
        """Drop the answers' caches (the env owns the renderer that made the segmentation)."""
        self._context.forget()


def _plain(value: Any) -> Any:
    """A query field's value as JSON for a situation's key: arrays rounded to 1e-3 (a pose's
    metres to the millimetre), anything else by its text."""
    if isinstance(value, np.ndarray | np.generic):
        return np.round(np.asarray(value, float), 3).tolist()
    return str(value)
