"""The MALLVI agent: a multi-agent closed loop (paper section 3, Fig. 1), registered as
``mallvi``.

Descriptor (once per episode: first shoulder image -> the objects, their attributes, places
and spatial relations: the scene memory) -> Decomposer (once: instruction + first image + that
description -> ordered moves of typed kinds; the first positions of the objects they name are
then added to the memory) -> for each move: Localizer -> Thinker (the pick's grasp candidates
drawn and numbered on one sheet) -> Actor, then the Reflector judges the move from the Actor's
report and before/after images; on a "not complete" verdict the same move is tried again
(Localizer -> Thinker -> Actor, the decomposition is not redone and the memory, being of the
initial scene, is not refreshed; the arm first goes home, out of the shoulder camera's view)
up to ``max_retries`` times, then the agent moves on or stops (``on_exhausted``). A failed
Descriptor leaves the episode without a description (the paper's Descriptor is optional).

Ablations (agent options): ``reflector: false`` runs each move once and trusts the Actor
(the paper's "w/o Reflector"); ``single_agent: true`` makes one model call that plans every
move's pick and place pixels from the first image and runs them open-loop (the paper's
single-agent baseline). The agent reaches the robot only through
:class:`~agentic_env.agents.base.RobotIO`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.agents.base import AgentReport, AgentSetup, RobotIO, TaskContext
from agentic_env.agents.mallvi import roles
from agentic_env.agents.mallvi.actor import MoveRunner
from agentic_env.agents.mallvi.memory import SceneDescription, SceneMemory
from agentic_env.agents.mallvi.roles import Move, RoleAnswerError
from agentic_env.agents.mallvi.single import run_single_agent
from agentic_env.agents.models.context import ModuleContext, ModuleFailedError
from agentic_env.agents.runtime import Episode, Limits, Manipulator, StopEpisodeError
from agentic_env.agents.skills.scene import at_home
from agentic_env.contract.actions import home
from agentic_env.errors import InvalidConfigError

#: What the agent does when a move's retries are used up.
ON_EXHAUSTED: tuple[str, ...] = ("continue", "stop")
#: Agent options with their defaults (``register_agent`` checks given values' types).
OPTIONS: dict[str, Any] = {"reflector": True, "single_agent": False, "max_retries": 2,
                           "on_exhausted": "continue"}
#: Failure sources of the agent besides the common ones.
FAILURE_SOURCES: tuple[str, ...] = ("decomposer", "descriptor", "localizer", "thinker",
                                    "reflector", "single_agent")


@dataclass(frozen=True)
class MallviConfig:
    """Settings of the MALLVI agent.

    Attributes:
        reflector: judge each move and retry it (``False``: the "w/o Reflector" ablation).
        single_agent: the single-agent baseline instead of the multi-agent loop.
        max_retries: re-runs of one move the Reflector judged incomplete.
        on_exhausted: ``continue`` with the next move or ``stop`` the episode when a move's
            retries are used up.
        limits: primitives and wall time of the episode (its retries are bounded by
            ``max_retries``).
        seed: seed of grasp sampling.
    """

    reflector: bool = True
    single_agent: bool = False
    max_retries: int = 2
    on_exhausted: str = "continue"
    limits: Limits = Limits()
    seed: int = 0

    def __post_init__(self) -> None:
        if self.on_exhausted not in ON_EXHAUSTED:
            raise InvalidConfigError(f"mallvi on_exhausted={self.on_exhausted!r}; valid: "
                                     f"{', '.join(ON_EXHAUSTED)}")
        if self.max_retries < 0:
            raise InvalidConfigError(f"mallvi max_retries must be >= 0, got "
                                     f"{self.max_retries}")


def make_mallvi(setup: AgentSetup) -> MallviAgent:
    """The MALLVI agent of ``setup`` (options: :data:`OPTIONS`).

    Raises:
        InvalidConfigError: an invalid ``on_exhausted`` or a negative ``max_retries``.
    """
    options = {**OPTIONS, **setup.options}
    config = MallviConfig(reflector=bool(options["reflector"]),
                          single_agent=bool(options["single_agent"]),
                          max_retries=int(options["max_retries"]),
                          on_exhausted=str(options["on_exhausted"]),
                          limits=Limits.of(setup), seed=setup.seed)
    return MallviAgent(setup.models, config, setup.on_event)


class MallviAgent:
    """The MALLVI closed loop over a :class:`RobotIO` (see the module docstring).

    Args:
        ctx: how the roles reach their models.
        config: options and limits.
        on_event: receives each decision as a dict (``kind`` plus details), as it happens.
    """

    def __init__(self, ctx: ModuleContext, config: MallviConfig | None = None,
                 on_event: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.ctx = ctx
        self.config = config or MallviConfig()
        self._on_event = on_event
        self.rng = np.random.default_rng(self.config.seed)

    def run(self, robot: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        """Carry out ``instruction``; failures end up in the report, never raised."""
        cfg = self.config
        self.episode = Episode(robot, cfg.limits, self._on_event)
        with self.episode.guard():
            if cfg.single_agent:
                self._single_agent(instruction)
            else:
                self._closed_loop(instruction)
        return self.episode.report

    def _single_agent(self, instruction: str) -> None:
        try:
            hands = Manipulator(self.episode, lambda *args: None, self.rng)
            self.episode.report.believes_done = run_single_agent(hands, self.ctx, instruction)
        except (ModuleFailedError, RoleAnswerError) as exc:
            raise StopEpisodeError("single_agent", str(exc)) from exc

    def _closed_loop(self, instruction: str) -> None:
        scene = self._describe()
        try:
            moves, reasoning = roles.decompose(self.ctx, self.episode.obs, instruction, scene)
        except (ModuleFailedError, RoleAnswerError) as exc:
            raise StopEpisodeError("decomposer", str(exc)) from exc
        self.episode.event("decomposition", subtasks=[str(m) for m in moves], reasoning=reasoning)
        runner = MoveRunner(self.episode, self.ctx, self.rng)
        names = [m.source for m in moves] + [m.destination for m in moves if m.kind == "place"]
        names += [m.memory_of for m in moves if m.memory_of is not None]
        try:
            memory = SceneMemory.record(self.episode, runner.detector, names, scene)
        except ModuleFailedError as exc:  # no positions: the moves that need them fail alone
            self.episode.fail_first(exc.module, str(exc))
            memory = SceneMemory(scene=scene)
        self.episode.event("memory", **memory.describe())
        completed = [self._subtask(runner, memory, move, index)
                     for index, move in enumerate(moves)]
        self.episode.report.believes_done = all(completed)
        self.episode.event("done", completed=sum(completed), subtasks=len(moves))

    def _describe(self) -> SceneDescription | None:
        """The Descriptor's description of the first view; ``None`` when it failed (the
        Descriptor is optional in the paper: the episode goes on without it)."""
        try:
            scene = roles.describe_scene(self.ctx, self.episode.obs)
        except (ModuleFailedError, RoleAnswerError) as exc:
            self.episode.fail_first("descriptor", str(exc))
            return None
        self.episode.event("description", objects=scene.names(), summary=scene.summary)
        return scene

    def _subtask(self, runner: MoveRunner, memory: SceneMemory, move: Move,
                 index: int) -> bool:
        """Run ``move`` until the Reflector accepts it or its retries run out."""
        cfg = self.config
        for attempt in range(cfg.max_retries + 1):
            if attempt and not at_home(self.episode.obs):  # look again with the arm out of the view
                self.episode.act(home(), f"clear the view to retry {move}")
            before = self.episode.obs
            self.episode.event("subtask", index=index, subtask=str(move), attempt=attempt + 1)
            report = runner.run(move, memory)
            self.episode.event("actor", subtask=str(move), ok=report.ok, report=report.text[:500],
                               **runner.state())
            if report.blame is not None:
                self.episode.fail_first(report.blame, report.text)
            if not cfg.reflector:
                return report.ok
            verdict = self._reflect(before, move, report.text, report.place_point)
            self.episode.event("reflection", index=index, attempt=attempt + 1, source=move.source,
                               destination=move.destination, place_point=report.place_point,
                               actor_ok=report.ok, task_complete=verdict.complete,
                               confidence=verdict.confidence, explanation=verdict.explanation)
            if verdict.complete:
                return True
            if attempt < cfg.max_retries:
                self.episode.report.replans += 1
        self.episode.event("retries_exhausted", index=index, subtask=str(move),
                           retries=cfg.max_retries, then=cfg.on_exhausted)
        if cfg.on_exhausted == "stop":
            raise StopEpisodeError(self.episode.report.failure or "reflector",
                                   f"{move} was not completed after {cfg.max_retries} "
                                   "retries")
        return False

    def _reflect(self, before: dict[str, np.ndarray], move: Move, report: str,
                 place_point: tuple[float, float] | None) -> roles.Verdict:
        """The Reflector's verdict; a Reflector that fails counts as "not complete"."""
        try:
            return roles.reflect(self.ctx, before, self.episode.obs, move, report, place_point)
        except ModuleFailedError as exc:
            self.episode.fail_first("reflector", str(exc))
            return roles.Verdict(False, f"the reflector failed: {exc}", 0.0)
