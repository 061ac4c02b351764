"""The MALLVI agent: a multi-agent closed loop (paper section 3, Fig. 1), registered as
``mallvi``.

Decomposer (once per episode: instruction + first shoulder image -> ordered moves) ->
Descriptor (memory of the initial scene) -> for each move: Localizer -> Thinker -> Actor, then
the Reflector judges the move from the Actor's report and before/after images; on a
"not complete" verdict the same move is tried again (Localizer -> Thinker -> Actor, the
decomposition is not redone; the arm first goes home, out of the shoulder camera's view) up
to ``max_retries`` times, then the agent moves on or stops (``on_exhausted``).

Ablations (agent options): ``reflector: false`` runs each move once and trusts the Actor
(the paper's "w/o Reflector"); ``single_agent: true`` makes one model call that plans every
move's pick and place pixels from the first image and runs them open-loop (the paper's
single-agent baseline). The agent reaches the robot only through
:class:`~agentic_env.agents.base.RobotIO`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.agents.base import (
    AgentReport,
    AgentSetup,
    RobotIO,
    RobotStoppedError,
    TaskContext,
)
from agentic_env.agents.mallvi import roles
from agentic_env.agents.mallvi.actor import MoveRunner
from agentic_env.agents.mallvi.memory import SceneMemory
from agentic_env.agents.mallvi.roles import Move, RoleAnswerError
from agentic_env.agents.mallvi.single import run_single_agent
from agentic_env.agents.models.base import BudgetExceededError
from agentic_env.agents.models.context import ModuleContext, ModuleFailedError
from agentic_env.agents.skills.scene import at_home
from agentic_env.contract.actions import home
from agentic_env.contract.spaces import PRIMITIVES
from agentic_env.errors import InvalidConfigError

#: What the agent does when a move's retries are used up.
ON_EXHAUSTED: tuple[str, ...] = ("continue", "stop")
#: Agent options with their defaults (``register_agent`` checks given values' types).
OPTIONS: dict[str, Any] = {"reflector": True, "single_agent": False, "max_retries": 2,
                           "on_exhausted": "continue"}
#: Failure sources of the agent besides the common ones.
FAILURE_SOURCES: tuple[str, ...] = ("decomposer", "localizer", "thinker", "reflector",
                                    "single_agent")
#: Actions a search for a target leaves of the action budget (a pick and a place).
SEARCH_RESERVE = 2


@dataclass(frozen=True)
class MallviConfig:
    """Settings of the MALLVI agent.

    Attributes:
        reflector: judge each move and retry it (``False``: the "w/o Reflector" ablation).
        single_agent: the single-agent baseline instead of the multi-agent loop.
        max_retries: re-runs of one move the Reflector judged incomplete.
        on_exhausted: ``continue`` with the next move or ``stop`` the episode when a move's
            retries are used up.
        max_actions: primitives before the episode is cut off.
        max_wall_s: wall-clock limit, seconds.
        seed: seed of grasp sampling.
    """

    reflector: bool = True
    single_agent: bool = False
    max_retries: int = 2
    on_exhausted: str = "continue"
    max_actions: int = 40
    max_wall_s: float = 900.0
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
                          max_actions=setup.max_actions, max_wall_s=setup.max_wall_s,
                          seed=setup.seed)
    return MallviAgent(setup.models, config, setup.on_event)


class StopEpisodeError(Exception):
    """Ends the episode: a limit, or a role that cannot go on; ``source`` is to blame."""

    def __init__(self, source: str, detail: str) -> None:
        super().__init__(detail)
        self.source = source


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

    # -- the SkillIO the skills use -------------------------------------------------------

    def act(self, action: dict[str, Any], why: str) -> dict[str, Any]:
        """Run one primitive within the action and time limits."""
        self._check_time()
        if self.report.actions >= self.config.max_actions:
            raise StopEpisodeError("limits",
                                   f"action limit ({self.config.max_actions}) reached")
        self.obs, status = self.robot.act(action)
        self.report.actions += 1
        self.event("primitive", primitive=PRIMITIVES[int(action["primitive"])], why=why,
                   ok=status.get("ok"), reason=status.get("reason", ""))
        return status

    def event(self, kind: str, **details: Any) -> None:
        """Record one decision in the report (and pass it on)."""
        event = {"kind": kind, "t": round(time.perf_counter() - self._start, 3), **details}
        self.report.events.append(event)
        if self._on_event is not None:
            self._on_event(event)

    def search_moves(self) -> int:
        """Arm moves a search may take: the action budget less :data:`SEARCH_RESERVE`."""
        return max(self.config.max_actions - self.report.actions - SEARCH_RESERVE, 0)

    def _check_time(self) -> None:
        if time.perf_counter() - self._start > self.config.max_wall_s:
            raise StopEpisodeError("limits",
                                   f"wall-time limit ({self.config.max_wall_s:g} s) reached")

    def _fail_first(self, source: str, detail: str) -> None:
        if self.report.failure is None:
            self.report.failure, self.report.failure_detail = source, detail

    # -- episode ----------------------------------------------------------------------------

    def run(self, robot: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        """Carry out ``instruction``; failures end up in the report, never raised."""
        self.robot, self.report, self._start = robot, AgentReport(), time.perf_counter()
        self.workspace = robot.workspace
        self.obs = robot.observe()
        try:
            if self.config.single_agent:
                self._single_agent(instruction)
            else:
                self._closed_loop(instruction)
        except StopEpisodeError as stop:
            self._stop(stop.source, str(stop))
        except BudgetExceededError as exc:
            self._stop("limits", str(exc))
        except RobotStoppedError as exc:
            self._stop("execution", str(exc))
        return self.report

    def _stop(self, source: str, detail: str) -> None:
        self._fail_first(source, detail)
        self.report.believes_done = False
        self.event("stop", source=source, detail=detail)

    def _single_agent(self, instruction: str) -> None:
        try:
            self.report.believes_done = run_single_agent(self, instruction)
        except (ModuleFailedError, RoleAnswerError) as exc:
            raise StopEpisodeError("single_agent", str(exc)) from exc

    def _closed_loop(self, instruction: str) -> None:
        try:
            moves, reasoning = roles.decompose(self.ctx, self.obs, instruction)
        except (ModuleFailedError, RoleAnswerError) as exc:
            raise StopEpisodeError("decomposer", str(exc)) from exc
        self.event("decomposition", subtasks=[str(m) for m in moves], reasoning=reasoning)
        runner = MoveRunner(self, self.ctx, self.rng, self.search_moves)
        names = [n for m in moves for n in (m.source, m.destination)
                 if n not in roles.DRAWER_STATES]
        try:
            memory = SceneMemory.record(self, runner.detector, names)
        except ModuleFailedError as exc:  # no memory: the moves that need it fail alone
            self._fail_first(exc.module, str(exc))
            memory = SceneMemory()
        self.event("memory", objects=memory.describe())
        completed = [self._subtask(runner, memory, move, index)
                     for index, move in enumerate(moves)]
        self.report.believes_done = all(completed)
        self.event("done", completed=sum(completed), subtasks=len(moves))

    def _subtask(self, runner: MoveRunner, memory: SceneMemory, move: Move,
                 index: int) -> bool:
        """Run ``move`` until the Reflector accepts it or its retries run out."""
        cfg = self.config
        for attempt in range(cfg.max_retries + 1):
            if attempt and not at_home(self.obs):  # look again with the arm out of the view
                self.act(home(), f"clear the view to retry {move}")
            before = self.obs
            self.event("subtask", index=index, subtask=str(move), attempt=attempt + 1)
            report = runner.run(move, memory)
            self.event("actor", subtask=str(move), ok=report.ok, report=report.text[:500],
                       **runner.state())
            if report.blame is not None:
                self._fail_first(report.blame, report.text)
            if not cfg.reflector:
                return report.ok
            verdict = self._reflect(before, move, report.text, report.place_point)
            self.event("reflection", index=index, attempt=attempt + 1, source=move.source,
                       destination=move.destination, place_point=report.place_point,
                       actor_ok=report.ok, task_complete=verdict.complete,
                       confidence=verdict.confidence, explanation=verdict.explanation)
            if verdict.complete:
                return True
            if attempt < cfg.max_retries:
                self.report.replans += 1
        self.event("retries_exhausted", index=index, subtask=str(move),
                   retries=cfg.max_retries, then=cfg.on_exhausted)
        if cfg.on_exhausted == "stop":
            raise StopEpisodeError(self.report.failure or "reflector",
                                   f"{move} was not completed after {cfg.max_retries} "
                                   "retries")
        return False

    def _reflect(self, before: dict[str, np.ndarray], move: Move, report: str,
                 place_point: tuple[float, float] | None) -> roles.Verdict:
        """The Reflector's verdict; a Reflector that fails counts as "not complete"."""
        try:
            return roles.reflect(self.ctx, before, self.obs, move, report, place_point)
        except ModuleFailedError as exc:
            self._fail_first("reflector", str(exc))
            return roles.Verdict(False, f"the reflector failed: {exc}", 0.0)
