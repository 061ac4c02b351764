"""Episode bookkeeping every agent shares: the event log, the limits, the robot-stop rule and
the first-failure rule, enforced in one place.

An agent holds one :class:`Episode` per run (composition, not a base class) and acts on the
robot through it: :meth:`Episode.act` is the :class:`~agentic_env.agents.skills.SkillIO` the
skills use, so every primitive a skill sends counts against the same limits and lands in the
same trace. Two ways of meeting a limit exist because two kinds of agent do:

* a pipeline agent (AgenticLab, MALLVI) is stopped: :meth:`Episode.act` raises
  :class:`StopEpisodeError`, which :meth:`Episode.guard` turns into the report's failure;
* a tool-calling agent (ALRM, the planner-executor) is told: with ``refuse=True`` a primitive
  past a limit is not sent and comes back as a failed status the model reads, and a robot stop
  latches for the rest of the current tool call (:meth:`Episode.new_call`).

The rule for a robot stop (a safety fault or a declined primitive,
:class:`~agentic_env.agents.base.RobotStoppedError`) is the same for every agent: it is the
``execution`` failure of the episode; a pipeline agent ends, a tool-calling agent is told
``safety_fault`` and may listen for the operator and go on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.agents.base import AgentReport, AgentSetup, RobotIO, RobotStoppedError
from agentic_env.agents.models.base import BudgetExceededError
from agentic_env.contract.spaces import PRIMITIVES, Workspace

#: Primitive failure reasons that mean the robot stopped (the rest of a tool call sends
#: nothing more).
STOP_REASONS: tuple[str, ...] = ("estop", "safety_fault", "operator_declined")
#: Actions a search for a target leaves of the action budget (a pick and a place).
SEARCH_RESERVE = 2


class StopEpisodeError(Exception):
    """Ends the episode; ``source`` is the failure source to blame (``limits``,
    ``execution`` or one of the agent's modules)."""

    def __init__(self, source: str, detail: str) -> None:
        super().__init__(detail)
        self.source = source


@dataclass(frozen=True)
class Limits:
    """What one episode may spend.

    Attributes:
        max_actions: primitives sent to the robot (``home`` and wrist views included).
        max_replans: times the agent plans again after its first plan.
        max_wall_s: wall-clock time of the episode, seconds.
    """

    max_actions: int = 40
    max_replans: int = 5
    max_wall_s: float = 900.0

    @classmethod
    def of(cls, setup: AgentSetup) -> Limits:
        """The limits an :class:`AgentSetup` gives."""
        return cls(setup.max_actions, setup.max_replans, setup.max_wall_s)


class Episode:
    """One episode's robot access and bookkeeping (see the module docstring).

    Args:
        robot: the robot (sim or real); observed once at the start.
        limits: what the episode may spend.
        on_event: receives each event as it happens (the live trace).
        refuse: past a limit, refuse primitives with a failed status instead of raising
            :class:`StopEpisodeError` (tool-calling agents).
        refusal: a further reason to refuse primitives (a sentence), or ``None`` (e.g. the
            agent declared the episode finished).

    Attributes:
        workspace: the robot's primitive workspace.
        report: what the agent did so far (actions, replans, failure, events).
    """

    def __init__(self, robot: RobotIO, limits: Limits,
                 on_event: Callable[[dict[str, Any]], None] | None = None, *,
                 refuse: bool = False, refusal: Callable[[], str | None] | None = None
                 ) -> None:
        self._robot = robot
        self.limits = limits
        self._on_event = on_event
        self._refuse = refuse
        self._refusal = refusal
        self._start = time.perf_counter()
        self._stopped: dict[str, Any] | None = None
        self._obs: dict[str, np.ndarray] | None = None
        self.report = AgentReport()

    @property
    def workspace(self) -> Workspace:
        """The robot's primitive workspace."""
        return self._robot.workspace

    @property
    def obs(self) -> dict[str, np.ndarray]:
        """The latest observation (taken on first use)."""
        if self._obs is None:
            self._obs = self._robot.observe()
        return self._obs

    # -- the trace and the failure -----------------------------------------------------------

    @property
    def elapsed_s(self) -> float:
        """Wall time since the episode started, seconds."""
        return time.perf_counter() - self._start

    def event(self, kind: str, **details: Any) -> None:
        """Record one decision (``kind`` plus details, with the time ``t`` in seconds)."""
        event = {"kind": kind, "t": round(self.elapsed_s, 3), **details}
        self.report.events.append(event)
        if self._on_event is not None:
            self._on_event(event)

    def fail_first(self, source: str, detail: str) -> None:
        """Blame ``source`` unless an earlier failure is recorded: the first failure is the
        one the later ones follow from or were recovered from."""
        if self.report.failure is None:
            self.report.failure, self.report.failure_detail = source, detail

    def stop(self, source: str, detail: str) -> None:
        """End the episode here: the failure (unless an earlier one is recorded) and a
        ``stop`` event; the agent no longer believes it is done."""
        self.fail_first(source, detail)
        self.report.believes_done = False
        self.event("stop", source=source, detail=detail)

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Run the agent's loop: a :class:`StopEpisodeError`, an exhausted model budget
        (``limits``) or a robot stop (``execution``) ends the episode in the report instead
        of propagating."""
        try:
            yield
        except StopEpisodeError as stop:
            self.stop(stop.source, str(stop))
        except BudgetExceededError as exc:
            self.stop("limits", str(exc))
        except RobotStoppedError as exc:
            self.stop("execution", str(exc))

    # -- limits -----------------------------------------------------------------------------

    def limit_reached(self) -> str | None:
        """Which limit the next primitive would break (a sentence), or ``None``."""
        if self._refusal is not None and (reason := self._refusal()) is not None:
            return reason
        if (late := self._late()) is not None:
            return late
        if self.report.actions >= self.limits.max_actions:
            return f"the action budget ({self.limits.max_actions} primitive actions) is spent"
        return None

    def check_time(self) -> None:
        """Raise :class:`StopEpisodeError` (``limits``) once the wall-time limit is passed."""
        if (late := self._late()) is not None:
            raise StopEpisodeError("limits", late)

    def _late(self) -> str | None:
        if self.elapsed_s > self.limits.max_wall_s:
            return f"wall-time limit ({self.limits.max_wall_s:g} s) reached"
        return None

    def replan(self, why: str) -> None:
        """Count one replan.

        Raises:
            StopEpisodeError: the replan limit is reached (``limits``).
        """
        if self.report.replans >= self.limits.max_replans:
            raise StopEpisodeError(
                "limits", f"replan limit ({self.limits.max_replans}) reached; last: {why}")
        self.report.replans += 1
        self.event("replan", why=why, replans=self.report.replans)

    def search_moves(self, cap: int | None = None) -> int:
        """Arm moves a search for a target may take: the action budget less
        :data:`SEARCH_RESERVE` (at most ``cap``)."""
        left = max(self.limits.max_actions - self.report.actions - SEARCH_RESERVE, 0)
        return left if cap is None else min(left, cap)

    # -- the robot ----------------------------------------------------------------------------

    def observe(self) -> dict[str, np.ndarray]:
        """A fresh observation (it becomes :attr:`obs`)."""
        self._obs = self._robot.observe()
        return self._obs

    def act(self, action: dict[str, Any], why: str) -> dict[str, Any]:
        """Run one primitive within the limits; its status report (``ok``, ``reason``,
        ``message``), the observation after it in :attr:`obs`.

        Raises:
            StopEpisodeError: a limit is reached (unless refusing).
            RobotStoppedError: the robot stopped (unless refusing).
            InvalidActionError: ``action`` is malformed (nothing was sent, nothing counted).
        """
        refusal = self.limit_reached()
        if refusal is not None:
            if not self._refuse:
                raise StopEpisodeError("limits", refusal)
            return {"ok": False, "reason": "timeout", "message": refusal}
        if self._stopped is not None:
            return self._stopped
        try:
            self._obs, status = self._robot.act(action)
        except RobotStoppedError as exc:
            if not self._refuse:
                raise
            self.report.actions += 1  # the tool call asked the robot to move
            status = {"ok": False, "reason": "safety_fault", "message": str(exc)}
        else:
            self.report.actions += 1
        self.event("primitive", primitive=PRIMITIVES[int(action["primitive"])], why=why,
                   position=np.round(np.asarray(action["pose"], float)[:3], 3).tolist(),
                   distance=round(float(np.asarray(action["distance"]).ravel()[0]), 3),
                   ok=status.get("ok"), reason=status.get("reason", ""),
                   message=status.get("message", ""))
        if self._refuse and not status.get("ok") and status.get("reason") in STOP_REASONS:
            self._stopped = status
        return status

    @property
    def stopped(self) -> dict[str, Any] | None:
        """The status that stopped the robot during the current tool call, or ``None``."""
        return self._stopped

    def new_call(self) -> None:
        """A new tool call: the robot may be asked to move again after a stop."""
        self._stopped = None
