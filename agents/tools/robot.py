"""What a tool set acts through: the robot IO of one episode and the episode's tool log.

The robot is an :class:`agentic_env.agents.base.RobotIO` (observations and primitive status
reports, over the sim or the real robot alike, never privileged state).
:class:`ToolContext` adds the instruction and the :class:`EpisodeLog` that the runner or the
MCP server scores from.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentic_env.agents.base import RobotIO
from agentic_env.agents.runtime.episode import Episode, Limits
from agentic_env.agents.skills.result import SkillCode, SkillResult, code_for_reason, fail, ok
from agentic_env.errors import AgenticEnvError, InvalidActionError
from agentic_env.text import bounded, safe_text

if TYPE_CHECKING:
    from agentic_env.agents.models.context import ModuleContext
    from agentic_env.agents.tools.registry import ToolRegistry


@dataclass(frozen=True)
class LoggedCall:
    """One tool call as the episode log keeps it.

    Attributes:
        tool: tool name (capped).
        arguments: the arguments as received, as a :func:`~agentic_env.text.bounded` copy
            (long texts and lists cut), so a session's log does not grow with what a client
            sends.
        result: what the tool returned.
        latency_s: wall time of the call, seconds.
    """

    tool: str
    arguments: dict[str, Any]
    result: SkillResult
    latency_s: float


@dataclass
class EpisodeLog:
    """What happened through the tools in one episode.

    Attributes:
        calls: every tool call, in order (bad ones included).
        finished: ``finish`` was called.
        claimed_success: the agent's own verdict given to ``finish`` (``None`` before).
        summary: the agent's closing words given to ``finish``.
    """

    calls: list[LoggedCall] = field(default_factory=list)
    finished: bool = False
    claimed_success: bool | None = None
    summary: str = ""


@dataclass
class ToolContext:
    """Everything a tool set's functions act on in one episode.

    Attributes:
        io: the robot.
        instruction: the episode's language instruction.
        max_actions: primitive actions allowed before action tools answer ``BLOCKED``.
        log: filled in by the tools.
        models: the agent's model access, for tool sets whose tools ask a model (ALRM's
            perception asks the detector); ``None`` = none.
        max_wall_s: wall time after which action tools answer ``BLOCKED``, seconds.
        on_event: receives each event of the episode as it happens.
        episode: the episode's robot access, limits and report; every tool set acts on the
            robot through it (past a limit it refuses instead of raising).
    """

    io: RobotIO
    instruction: str
    max_actions: int = 40
    log: EpisodeLog = field(default_factory=EpisodeLog)
    models: ModuleContext | None = None
    max_wall_s: float = 900.0
    on_event: Callable[[dict[str, Any]], None] | None = None
    episode: Episode = field(init=False)

    def __post_init__(self) -> None:
        self.episode = Episode(self.io, Limits(self.max_actions, max_wall_s=self.max_wall_s),
                               self.on_event, refuse=True, refusal=self._finished)

    def _finished(self) -> str | None:
        return "the episode is finished; no further actions run" if self.log.finished else None

    @property
    def actions(self) -> int:
        """Primitive actions sent to the robot so far."""
        return self.episode.report.actions

    def action_refusal(self) -> SkillResult | None:
        """Why no further action may run (episode finished, action budget or wall time
        spent), or None."""
        reason = self.episode.limit_reached()
        return None if reason is None else fail(SkillCode.BLOCKED, reason)

    def send(self, action: dict[str, Any], what: str, done: str = "") -> SkillResult:
        """Run one primitive through :attr:`episode`: ``OK`` with ``done`` (default
        ``"<what> done."``); ``BLOCKED`` past a limit; ``BAD_ARGS`` for a malformed action
        (nothing sent); ``ESTOP`` when the robot stopped; else the code of the primitive's
        failure reason."""
        refusal = self.action_refusal()
        if refusal is not None:
            return refusal
        try:
            status = self.episode.act(action, what)
        except InvalidActionError as error:
            return fail(SkillCode.BAD_ARGS, f"{what} was not run: {error}")
        except AgenticEnvError as error:  # a safety stop or a declined step on the real robot
            return fail(SkillCode.ESTOP, f"{what} stopped: {error}")
        if status.get("ok", False):
            return ok(done or f"{what} done.")
        return fail(code_for_reason(str(status.get("reason", ""))),
                    f"{what} failed: {status.get('message') or status.get('reason')}")

    def call(self, tools: ToolRegistry, name: str, arguments: Any) -> SkillResult:
        """Run tool ``name`` of ``tools`` (never raises) and append the call to the log,
        whatever its fate; the robot may move again after a stop in an earlier call."""
        self.episode.new_call()
        start = time.perf_counter()
        result = fail(SkillCode.BLOCKED, "the call did not finish")
        try:
            result = tools.call(name, arguments)
        finally:
            given = arguments if isinstance(arguments, Mapping) else {"_raw": arguments}
            self.log.calls.append(LoggedCall(safe_text(name, 200), bounded(given), result,
                                             time.perf_counter() - start))
        return result
