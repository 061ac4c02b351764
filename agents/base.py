"""The seam every agent design plugs into: the :class:`Agent` protocol, what it is given
(:class:`RobotIO`, :class:`TaskContext`, :class:`AgentSetup`), what it returns
(:class:`AgentReport`) and the registry that finds an agent by name.

An agent never sees the simulator: it reads observations and the primitives' own status
reports through a :class:`RobotIO`, which the harness builds over a ``SimEnv`` or a
``RealEnv`` alike, and it reaches its models through :attr:`AgentSetup.models`.

Agents are registered by name with a lazy ``"module:attr"`` entry point (imported on first
use), so ``--agent NAME`` and sweep files accept any registered agent; a name that itself
has the form ``"module:attr"`` is imported directly, which lets spawned sweep workers run an
agent that was registered nowhere but in the parent process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from agentic_env.contract.spaces import Workspace
from agentic_env.entry_points import load_entry_point
from agentic_env.errors import AgenticEnvError, InvalidConfigError

if TYPE_CHECKING:
    from agentic_env.agents.models.context import ModuleContext

#: Sources of failure the harness itself attributes (every agent may use them too):
#: the goal checker accepted an unmet goal, a primitive failed or the robot stopped, a
#: limit (actions, replans, wall time, budget) was reached, the episode crashed.
COMMON_FAILURE_SOURCES: tuple[str, ...] = ("goal", "execution", "limits", "error")
#: Model modules the harness itself queries for any agent: ALRM's trace judge.
HARNESS_MODULES: tuple[str, ...] = ("judge",)
#: Action spaces an agent may act in (see :attr:`AgentEntry.control_mode`).
AGENT_CONTROL_MODES: tuple[str, ...] = ("primitive", "joint_position")


class RobotStoppedError(AgenticEnvError, RuntimeError):
    """The robot stopped the episode: a latched safety fault (e-stop) or a primitive the
    operator declined. Raised by :meth:`RobotIO.act`; ends the episode."""


class RobotIO(Protocol):
    """What an agent may use of a robot, sim or real: observations and primitive status."""

    workspace: Workspace

    def observe(self) -> dict[str, np.ndarray]:
        """A fresh observation (see :mod:`agentic_env.contract.spaces`; base frame, metres)."""
        ...

    def act(self, action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Run one primitive; the observation after it and the primitive's status report
        (``name``, ``ok``, ``reason``, ``message``).

        Raises:
            RobotStoppedError: on a safety fault or a declined primitive.
        """
        ...


class ControlIO(RobotIO, Protocol):
    """A :class:`RobotIO` of an env in ``joint_position`` mode: one control period at a time
    (the rate of the env's control loop, 20 Hz by default), the action space that
    ``agentic-env collect`` records as ``action``."""

    def control(self, action: np.ndarray) -> tuple[dict[str, np.ndarray], bool]:
        """Hold ``action`` (six joint targets, rad; gripper width target, m) for one control
        period; the observation after it and whether the episode ended (Gymnasium's
        ``terminated``: the trial is over; on the real robot, the operator ends it).

        Raises:
            RobotStoppedError: on a safety fault.
        """
        ...


@dataclass(frozen=True)
class TaskContext:
    """What the task tells an agent besides the instruction.

    Attributes:
        domain: the task's PDDL domain text (its actions map onto the robot's skills).
        task: the benchmark task's name (``sorting``, ``stacking``...), ``""`` when unknown;
            public, like the instruction (a policy agent picks its checkpoint by it).
    """

    domain: str
    task: str = ""


@dataclass
class AgentReport:
    """What an agent did and what it believes at the end.

    Attributes:
        believes_done: the agent's goal check passed (or, without one, its plan ran out).
        goal_checked: a goal check was made at the end (its verdict is ``believes_done``).
        actions: primitives sent.
        replans: times the agent planned again after its first plan.
        failure: the first source of failure (one of the agent's declared sources or
            :data:`COMMON_FAILURE_SOURCES`), ``None`` when the agent finished.
        failure_detail: a sentence on it.
        events: decisions in order (``kind`` plus details), for the trace.
    """

    believes_done: bool = False
    goal_checked: bool = False
    actions: int = 0
    replans: int = 0
    failure: str | None = None
    failure_detail: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class AgentSetup:
    """Everything an agent is built from (the same in sim and on the real robot).

    Attributes:
        models: how the agent reaches its models (router, budget, call log).
        options: agent-specific switches (:attr:`AgentEntry.options` names the valid ones).
        verification: ``none``, ``goal`` or ``full``.
        max_actions: primitives before the episode is cut off.
        max_replans: replans before the episode is cut off.
        max_wall_s: wall-clock limit of the episode, seconds.
        seed: the agent's own random seed.
        on_event: receives each decision as a dict, as it happens.
    """

    models: ModuleContext
    options: Mapping[str, Any] = field(default_factory=dict)
    verification: str = "full"
    max_actions: int = 40
    max_replans: int = 5
    max_wall_s: float = 900.0
    seed: int = 0
    on_event: Callable[[dict[str, Any]], None] | None = None


@runtime_checkable
class Agent(Protocol):
    """An agent design: carries out one instruction on one robot."""

    def run(self, robot_io: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        """Carry out ``instruction``; agent failures end up in the report, never raised."""
        ...


#: Builds an agent from its setup.
AgentFactory = Callable[[AgentSetup], Agent]


@dataclass(frozen=True)
class AgentEntry:
    """A registered agent.

    Attributes:
        name: the name ``--agent`` and sweep files use.
        entry_point: ``"module:attr"`` of its :data:`AgentFactory` (or the factory itself).
        failure_sources: the sources of failure the agent reports besides
            :data:`COMMON_FAILURE_SOURCES` (its modules, e.g. ``parser``, ``detector``).
        options: valid keys of :attr:`AgentSetup.options` with their defaults (a given
            value must have the default's type); ``None`` = not declared, any accepted.
        modules: the model modules the agent queries (see
            :mod:`agentic_env.agents.models.modules`); ``()`` = not declared, any accepted.
        evaluations: names of the episode evaluations the harness runs on its episodes
            besides the task's score (:mod:`agentic_env.harness.evaluations`, e.g.
            ``"alrm-judge"``); ``()`` = none.
        control_mode: the env's action space the agent acts in: ``primitive`` (through
            :meth:`RobotIO.act`) or ``joint_position`` (one control period at a time through
            :meth:`ControlIO.control`).
    """

    name: str
    entry_point: str | AgentFactory
    failure_sources: tuple[str, ...] = ()
    options: Mapping[str, Any] | None = None
    modules: tuple[str, ...] = ()
    evaluations: tuple[str, ...] = ()
    control_mode: str = "primitive"

    def factory(self) -> AgentFactory:
        """The factory, imported on first use.

        Raises:
            InvalidConfigError: the entry point cannot be imported.
        """
        if callable(self.entry_point):
            return self.entry_point
        return load_entry_point(self.entry_point, f"agent {self.name!r}")

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` over the defaults.

        Raises:
            InvalidConfigError: an unknown key or a value of the wrong type.
        """
        if self.options is None:
            return dict(options)
        merged = dict(self.options)
        for key, value in options.items():
            if key not in self.options:
                valid = ", ".join(sorted(self.options)) or "none"
                raise InvalidConfigError(f"agent {self.name!r} has no option {key!r}; "
                                         f"valid: {valid}")
            default = self.options[key]
            if default is not None and not isinstance(value, type(default)):
                raise InvalidConfigError(f"agent option {key}={value!r}: expected "
                                         f"{type(default).__name__}")
            merged[key] = value
        return merged

    def check_modules(self, names: Iterable[str]) -> None:
        """Refuse model assignments to modules the agent never queries (they would have no
        effect); the harness's own :data:`HARNESS_MODULES` are always accepted.

        Raises:
            InvalidConfigError: naming the agent's modules.
        """
        if not self.modules:
            return
        unused = sorted(set(names) - set(self.modules) - set(HARNESS_MODULES))
        if unused:
            raise InvalidConfigError(
                f"agent {self.name!r} never queries {', '.join(unused)}; its modules are "
                f"{', '.join(self.modules)} (and the harness's {', '.join(HARNESS_MODULES)})")


_REGISTRY: dict[str, AgentEntry] = {}


def register_agent(name: str, entry_point: str | AgentFactory, *,
                   failure_sources: tuple[str, ...] = (),
                   options: Mapping[str, Any] | None = None,
                   modules: tuple[str, ...] = (),
                   evaluations: tuple[str, ...] = (),
                   control_mode: str = "primitive") -> AgentEntry:
    """Register an agent under ``name`` (replacing one of the same name).

    Args:
        name: the name ``--agent`` and sweep files use (no ``:``).
        entry_point: ``"module:attr"`` of an :data:`AgentFactory`, or the factory.
        failure_sources: the agent's own failure sources (see :class:`AgentEntry`).
        options: valid agent options with their defaults.
        modules: the model modules it queries; a new one must be registered first
            (:func:`agentic_env.agents.models.modules.register_module`).
        evaluations: the episode evaluations its episodes get (see :class:`AgentEntry`).
        control_mode: ``primitive`` or ``joint_position`` (see :class:`AgentEntry`).

    Raises:
        InvalidConfigError: ``name`` is empty or contains ``:``, a module is unknown, or
            the control mode is neither.
    """
    if not name or ":" in name:
        raise InvalidConfigError(f"agent name {name!r}: give a non-empty name without ':'")
    if control_mode not in AGENT_CONTROL_MODES:
        raise InvalidConfigError(f"agent {name!r}: control_mode {control_mode!r}; valid: "
                                 f"{', '.join(AGENT_CONTROL_MODES)}")
    from agentic_env.agents.models.modules import check_modules

    check_modules(modules, f"among the modules of agent {name!r}")
    entry = AgentEntry(name, entry_point, tuple(failure_sources), dict(options or {}),
                       tuple(modules), tuple(evaluations), control_mode)
    _REGISTRY[name] = entry
    return entry


def unregister_agent(name: str) -> None:
    """Remove ``name`` from the registry (no error when it is not there)."""
    _REGISTRY.pop(name, None)


def agent_names() -> tuple[str, ...]:
    """The registered agent names, sorted."""
    return tuple(sorted(_REGISTRY))


def agent_entry(name: str) -> AgentEntry:
    """The registered agent ``name``, or an entry for a ``"module:attr"`` name.

    Raises:
        InvalidConfigError: an unknown name (the message lists the registered ones).
    """
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name.count(":") == 1 and all(name.split(":")):
        return AgentEntry(name, name)
    raise InvalidConfigError(f"unknown agent {name!r}; valid: {', '.join(agent_names())} "
                             "(or 'module:attr' of an agent factory)")


def make_agent(name: str, setup: AgentSetup) -> Agent:
    """Build the agent ``name`` from ``setup`` (its options checked first).

    Raises:
        InvalidConfigError: unknown agent or option, or a factory that returns no agent.
    """
    entry = agent_entry(name)
    agent = entry.factory()(replace(setup, options=entry.check_options(setup.options)))
    if not isinstance(agent, Agent):
        raise InvalidConfigError(f"agent {name!r}: its factory returned "
                                 f"{type(agent).__name__}, which has no run()")
    return agent


def failure_sources() -> tuple[str, ...]:
    """Every failure source: each registered agent's own, then :data:`COMMON_FAILURE_SOURCES`."""
    sources: list[str] = []
    for entry in _REGISTRY.values():
        sources += [s for s in entry.failure_sources if s not in sources]
    return (*sources, *(s for s in COMMON_FAILURE_SOURCES if s not in sources))


register_agent(
    "agenticlab", "agentic_env.agents.agenticlab.pipeline:make_agenticlab",
    failure_sources=("parser", "detector", "grasp", "checker"),
    options={"grasp_evaluation": True},
    modules=("parser", "checker", "detector", "grasp", "goal"), evaluations=("call-truth",))

register_agent(
    "mallvi", "agentic_env.agents.mallvi.agent:make_mallvi",
    failure_sources=("decomposer", "descriptor", "localizer", "thinker", "reflector",
                     "single_agent"),
    options={"reflector": True, "single_agent": False, "max_retries": 2,
             "on_exhausted": "continue"},
    modules=("decomposer", "descriptor", "localizer", "thinker", "reflector", "single_agent"),
    evaluations=("call-truth",))

register_agent(
    "alrm", "agentic_env.agents.alrm.agent:make_alrm",
    failure_sources=("task_planner", "task_executor", "detector"),
    options={"mode": "tap", "max_steps": 0},
    modules=("task_planner", "task_executor", "detector", "grasp"),
    evaluations=("alrm-judge",))

register_agent(
    "planner-executor", "agentic_env.agents.planner_executor.agent:make_planner_executor",
    failure_sources=("router", "planner", "critic", "detector", "chatbot"),
    options={"max_turns": 120},
    modules=("router", "chatbot", "planner", "critic", "detector", "grasp"), evaluations=())

register_agent(
    "policy", "agentic_env.agents.policy.agent:make_policy_agent",
    failure_sources=("policy",),
    options={"checkpoint": "runs/policies/{task}", "device": "cpu", "max_steps": 2400,
             "resize": False},
    modules=(), evaluations=(), control_mode="joint_position")
