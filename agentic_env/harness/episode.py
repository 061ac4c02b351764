"""What one agent episode is asked to do and what it reports: the harness's unit of work.

:class:`EpisodeSpec` is plain data (JSON-ready, hashable key) so sweeps can store, compare and
resume it; :class:`EpisodeResult` carries the privileged score the harness computed and the
agent's own accounting (actions, replans, model usage, the first source that failed).
Failure sources are declared by each agent (:func:`agentic_env.agents.base.failure_sources`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from agentic_env.errors import InvalidConfigError
from agentic_env.sim.realism import BENCHMARK_REALISM, check_realism

#: Failure label of a real episode the operator's rubric has not scored (yet, or ever).
UNSCORED = "unscored"
#: Verification modes of the AgenticLab ablation (paper section VI-D).
VERIFICATION_MODES: tuple[str, ...] = ("none", "goal", "full")


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode of one agent on one trial.

    Attributes:
        task: task name (``sorting``, ``stacking``, ``crossword``, ``reorientation``,
            ``kitchen``).
        setting: ``lab``, ``kitchen`` or ``outdoor``.
        seed: trial seed (layout, instruction, appearance) and the agent's seed.
        agent: a registered agent name (``agenticlab``...; see
            :func:`agentic_env.agents.base.agent_names`) or ``"module:attr"`` of a factory.
        model: model spec for every module, e.g. ``"sim-oracle"``,
            ``"sim-oracle?checker=0.1"``, ``"gemini/gemini-3-flash"``, ``"replay:DIR"``.
        modules: per-module overrides, module name -> model spec.
        verification: ``none``, ``goal`` or ``full``.
        disturbances: disturbance specs passed to the env's reset (JSON-ready dicts).
        instruction_category: paraphrase category, ``None`` = the task's default.
        max_actions: primitive actions before the episode is cut off.
        max_replans: task-parser replans before the episode is cut off.
        max_wall_s: wall-clock limit of the episode, seconds.
        agent_options: agent-specific switches as sorted ``(key, value)`` pairs with JSON
            scalar values, e.g. ``(("grasp_evaluation", False),)`` for AgenticLab.
        kind: the trial kind: ``task`` (the task's own instruction) or one of
            :data:`agentic_env.tasks.variants.KINDS` (``impossible``, ``estop``...).
        events: scheduled events (:class:`agentic_env.contract.events.EventSpec` dicts as
            sorted item tuples, list values as tuples), after those the kind schedules.
        judges: model specs of ALRM's trace-judge panel (the ``alrm-judge`` evaluation,
            :mod:`agentic_env.harness.judging`), e.g. three distinct litellm models; ``()`` =
            the ``judge`` module's model, else the sim-oracle's judges.
        realism: the world (:mod:`agentic_env.sim.realism`): ``realistic`` (device models,
            measured calibration error, contact drawn per object; the default,
            :data:`agentic_env.sim.realism.BENCHMARK_REALISM`, as everywhere) or ``ideal``
            (exact sensors and calibration, nominal contact; for debugging). A stored spec
            without the field is from before the switch existed and ran ``ideal``.
        world_effects: with ``realistic``, only these of its effects
            (:data:`agentic_env.sim.realism.world.WORLD_EFFECTS`: ``sensors``,
            ``calibration``, ``contact``), to tell which one a failure comes from; ``None``
            (the default) = all of them. Stored only when set, so a spec without it keeps its
            key.
    """

    task: str
    setting: str = "lab"
    seed: int = 0
    agent: str = "agenticlab"
    model: str = "sim-oracle"
    modules: tuple[tuple[str, str], ...] = ()
    verification: str = "full"
    disturbances: tuple[tuple[tuple[str, Any], ...], ...] = ()
    instruction_category: str | None = None
    max_actions: int = 40
    max_replans: int = 5
    max_wall_s: float = 900.0
    agent_options: tuple[tuple[str, Any], ...] = ()
    kind: str = "task"
    events: tuple[tuple[tuple[str, Any], ...], ...] = ()
    judges: tuple[str, ...] = ()
    realism: str = BENCHMARK_REALISM
    world_effects: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.verification not in VERIFICATION_MODES:
            raise InvalidConfigError(
                f"verification {self.verification!r}; valid: {', '.join(VERIFICATION_MODES)}"
            )
        check_realism(self.realism)
        if self.world_effects is not None:
            self._check_world_effects()

    def _check_world_effects(self) -> None:
        """Raise unless :attr:`world_effects` are effects of the realistic world, asked of it.

        Raises:
            InvalidConfigError: an unknown effect (the message lists the valid ones), or
                effects with ``realism="ideal"``.
        """
        from agentic_env.sim.realism.world import WORLD_EFFECTS  # the world needs MuJoCo

        unknown = sorted(set(self.world_effects or ()) - set(WORLD_EFFECTS))
        if unknown:
            raise InvalidConfigError(f"unknown world effects {unknown}; valid: "
                                     f"{', '.join(WORLD_EFFECTS)}")
        if self.realism != "realistic":
            raise InvalidConfigError("world_effects choose among the realistic world's "
                                     "effects: give realism='realistic' too")

    def module_models(self) -> dict[str, str]:
        """Per-module overrides as a dict."""
        return dict(self.modules)

    def options(self) -> dict[str, Any]:
        """Agent options as a dict."""
        return dict(self.agent_options)

    def event_dicts(self) -> list[dict[str, Any]]:
        """Scheduled events as dicts (tuples as lists), as the env's reset takes them."""
        return [{k: list(v) if isinstance(v, tuple) else v for k, v in items}
                for items in self.events]

    def disturbance_dicts(self) -> list[dict[str, Any]]:
        """Disturbance specs as dicts, as the env's reset takes them."""
        return [dict(items) for items in self.disturbances]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (modules and disturbances as plain dicts)."""
        data = asdict(self)
        data["modules"] = self.module_models()
        data["disturbances"] = self.disturbance_dicts()
        data["agent_options"] = self.options()
        data["events"] = self.event_dicts()
        data["judges"] = list(self.judges)
        if self.world_effects is None:
            del data["world_effects"]
        else:
            data["world_effects"] = list(self.world_effects)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeSpec:
        """Inverse of :meth:`to_dict`; also accepts lists where tuples are stored."""
        values = dict(data)
        values["modules"] = tuple(sorted(dict(values.get("modules") or {}).items()))
        values["disturbances"] = tuple(
            tuple(sorted(d.items())) for d in values.get("disturbances") or ()
        )
        values["agent_options"] = tuple(sorted(dict(values.get("agent_options") or {}).items()))
        values["events"] = freeze_events(values.get("events") or ())
        values["judges"] = tuple(values.get("judges") or ())
        values.setdefault("realism", "ideal")  # stored before the switch: every one ran ideal
        if values.get("world_effects") is not None:
            values["world_effects"] = tuple(values["world_effects"])
        return cls(**values)

    def key(self) -> str:
        """Stable 16-hex-digit identity of the spec (same spec -> same key, any process);
        a spec without agent options, trial kind, events or judges, in the ideal world, keeps
        the key it had before those existed (every episode before the switch ran ideal), and
        one without world effects the key it had before they existed."""
        data = self.to_dict()
        for name, default in (("agent_options", {}), ("kind", "task"), ("events", []),
                              ("judges", []), ("realism", "ideal")):
            if data[name] == default:
                del data[name]
        return json_key(data)


def json_key(data: Any) -> str:
    """Stable 16-hex-digit identity of JSON-ready ``data`` (its sorted-key JSON's SHA-256;
    a value JSON cannot hold is written as its ``str``): the key of an episode's spec and of
    a measurement's parameters."""
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def freeze_events(events: Any) -> tuple[tuple[tuple[str, Any], ...], ...]:
    """Event dicts (or item tuples) as :attr:`EpisodeSpec.events` stores them: sorted item
    tuples with list values as tuples (hashable)."""
    return tuple(tuple(sorted((k, tuple(v) if isinstance(v, list | tuple) else v)
                              for k, v in dict(e).items())) for e in events)


@dataclass(frozen=True)
class ModuleCall:
    """Summary of one model call for the results database.

    Attributes:
        module: pipeline module (see :data:`agentic_env.agents.models.base.MODULES`).
        model: backend name.
        latency_s: wall time, seconds, summed over attempts.
        input_tokens / output_tokens: summed over attempts.
        cost_usd: price, ``None`` when unknown.
        attempts: answers requested (retries on malformed output included).
        verdict: the module's decision in one word where it has one (``"true"``/``"false"``
            for checkers and MALLVI's Reflector, ``"EXECUTE_GRASP"``/``"REJECT_GRASP"``...),
            else ``None``.
        error: why the call failed, ``None`` on success.
        truth: the simulator's answer to what the call judged, in the verdict's words, where
            the harness scores it (the Reflector's ``"true"``/``"false"``: the move holds;
            AgenticLab's checker and goal checker: the conditions / the goal hold; see
            :mod:`agentic_env.harness.call_truth`), else ``None``.
    """

    module: str
    model: str
    latency_s: float
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    attempts: int
    verdict: str | None = None
    error: str | None = None
    truth: str | None = None


@dataclass(frozen=True)
class ObjectOutcome:
    """Where one object the goal is about ended (privileged: the simulator's final facts).

    Made by :func:`agentic_env.harness.objects.object_outcomes`; one per movable object that
    a goal fact places (the fact's first argument: ``in X C``, ``on-top-of X Y``,
    ``in-slot X S``, ``in-pose X P``, ``on-table X`` ...).

    Attributes:
        name: body (and PDDL) name, e.g. ``apple-1``.
        object_set: one of :data:`agentic_env.harness.objects.OBJECT_SETS` (``fruit``,
            ``food``, ``blocks``, ``toys``, ``tools``, ``other``).
        kind: the catalogue kind it is (``apple``, ``red-cube``), ``None`` when none.
        placed: every goal fact about it holds at the end.
        met_at_start: every goal fact about it already held at the episode's start (a
            sorting distractor the goal asks to stay on the table, a cube that starts on the
            cube or plate it must end on, even if it has to be moved out of the way first).
        facts: the goal facts about it.
        met: how many of :attr:`facts` hold at the end.
    """

    name: str
    object_set: str
    kind: str | None
    placed: bool
    met_at_start: bool
    facts: tuple[str, ...] = ()
    met: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ObjectOutcome:
        """Inverse of :func:`dataclasses.asdict` (lists where tuples are stored)."""
        return cls(**{**data, "facts": tuple(data.get("facts") or ())})


@dataclass(frozen=True)
class EpisodeResult:
    """Outcome of one episode.

    Attributes:
        spec: what was run.
        success: the task's goal holds at the end (privileged, from the simulator).
        progress: fraction of goal predicates satisfied at the end, 0..1.
        score: AgenticLab task progress score in [0, 1] (paper Appendix B-A).
        n_done / n_extra / n_required: the score's counts.
        goal_checker_error: the agent's goal checker misjudged the final state.
        actions: primitive actions executed.
        replans: times the task parser was asked again after the first plan.
        wall_s: wall-clock time of the episode, seconds.
        sim_s: simulated time, seconds: the robot's motion.
        model_s: model time, seconds: the calls' latencies summed (an emulated model's are
            virtual: its profile's seconds per call, not waited for); a property.
        episode_s: the episode's time as on the real robot, ``sim_s + model_s``; a property.
        input_tokens / output_tokens / cost_usd: model usage (cost ``None`` if unknown).
        failure: first failing source (see :func:`agentic_env.agents.base.failure_sources`),
            ``None`` on success.
        failure_detail: a sentence on what failed.
        calls: one summary per model call.
        trace_dir: folder of the episode's trace, ``None`` when no trace was written.
        error: traceback text when the episode crashed (then ``failure == "error"``).
        judge_score: ALRM's trace-judge panel score (0..2) for agents that report subtasks
            (:mod:`agentic_env.harness.judging`), ``None`` otherwise.
        judges: the names of the judges that scored, one per panel seat (``()`` when none).
        judge_notes: sentences on where the panel falls short of ALRM's (one model asked
            three times, a judge that is also a model under test...), ``()`` when none.
        intervention: the episode's intervention measures
            (:func:`agentic_env.harness.interventions.measure`), ``None`` for a plain trial.
        objects: where each object the goal is about ended (:class:`ObjectOutcome`), in the
            order of the goal facts; ``()`` when the harness had no simulator truth (a real
            trial, a crash) or the trial asked for no motion (a refusal or an answer).
    """

    spec: EpisodeSpec
    success: bool
    progress: float
    score: float
    n_done: int = 0
    n_extra: int = 0
    n_required: int = 0
    goal_checker_error: bool = False
    actions: int = 0
    replans: int = 0
    wall_s: float = 0.0
    sim_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    failure: str | None = None
    failure_detail: str = ""
    calls: tuple[ModuleCall, ...] = field(default_factory=tuple)
    trace_dir: str | None = None
    error: str | None = None
    judge_score: float | None = None
    intervention: dict[str, Any] | None = None
    judges: tuple[str, ...] = ()
    judge_notes: tuple[str, ...] = ()
    objects: tuple[ObjectOutcome, ...] = ()

    @property
    def model_s(self) -> float:
        """Model time, seconds: every call's latency summed (attempts included)."""
        return float(sum(c.latency_s for c in self.calls))

    @property
    def episode_s(self) -> float:
        """Robot motion plus model time, seconds (:attr:`sim_s` + :attr:`model_s`)."""
        return self.sim_s + self.model_s

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (with :attr:`model_s` and :attr:`episode_s`)."""
        data = asdict(self)
        data["spec"] = self.spec.to_dict()
        data["model_s"], data["episode_s"] = self.model_s, self.episode_s
        return data


def models_label(model: str, modules: Sequence[tuple[str, str]] = (),
                 judges: Sequence[str] = ()) -> str:
    """The model column of reports (:func:`agentic_env.harness.sweep.model_label`) from its
    parts: the model spec, the (module, spec) overrides sorted by module, and the trace
    judges."""
    overrides = ",".join([*(f"{module}={spec}" for module, spec in modules),
                          *([f"judges={'+'.join(judges)}"] if judges else [])])
    return f"{model} [{overrides}]" if overrides else model
