"""What a tool set acts through: the robot IO of one episode and the episode's tool log.

The robot is an :class:`agentic_env.agents.base.RobotIO` (observations and primitive status
reports, over the sim or the real robot alike, never privileged state).
:class:`ToolContext` adds the instruction and the :class:`EpisodeLog` that the runner or the
MCP server scores from.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentic_env.agents.base import RobotIO
from agentic_env.agents.skills.result import SkillCode, SkillResult, fail

if TYPE_CHECKING:
    from agentic_env.agents.models.context import ModuleContext
    from agentic_env.agents.tools.registry import ToolRegistry


@dataclass(frozen=True)
class LoggedCall:
    """One tool call as the episode log keeps it.

    Attributes:
        tool: tool name.
        arguments: the arguments as received.
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
        actions: primitive actions sent to the robot.
        finished: ``finish`` was called.
        claimed_success: the agent's own verdict given to ``finish`` (``None`` before).
        summary: the agent's closing words given to ``finish``.
    """

    calls: list[LoggedCall] = field(default_factory=list)
    actions: int = 0
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
    """

    io: RobotIO
    instruction: str
    max_actions: int = 40
    log: EpisodeLog = field(default_factory=EpisodeLog)
    models: ModuleContext | None = None

    def action_refusal(self) -> SkillResult | None:
        """Why no further action may run (episode finished, action budget spent), or None."""
        if self.log.finished:
            return fail(SkillCode.BLOCKED, "the episode is finished; no further actions run")
        if self.log.actions >= self.max_actions:
            return fail(SkillCode.BLOCKED, f"the action budget ({self.max_actions} primitive "
                        "actions) is spent; call finish")
        return None

    def call(self, tools: ToolRegistry, name: str, arguments: Any) -> SkillResult:
        """Run tool ``name`` of ``tools`` (never raises) and append the call to the log."""
        start = time.perf_counter()
        result = tools.call(name, arguments)
        given = dict(arguments) if isinstance(arguments, Mapping) else {"_raw": arguments}
        self.log.calls.append(LoggedCall(name, given, result, time.perf_counter() - start))
        return result
