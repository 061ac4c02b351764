"""ALRM's task executor in its two modes (ALRM, section III-B).

* :class:`ToolExecutor` (TaP): native tool calls, one per turn, each result sent back, so the
  model can correct a rejected call; the subtask ends when the model answers with text.
* :class:`CodeExecutor` (CaP): one Python program per subtask, run once in the sandbox
  (:mod:`agentic_env.agents.runtime.sandbox`) against the same functions; a function that fails
  raises inside the program, and any error fails the subtask.

Both return a :class:`SubtaskOutcome` whose observation goes back to the planner.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentic_env.agents.alrm.planner import PACKAGE
from agentic_env.agents.models.base import ModelQuery, ToolCall
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.runtime.prompts import ask_json, render_prompt
from agentic_env.agents.runtime.sandbox import SandboxLimits, run_program
from agentic_env.agents.tools.registry import ToolRegistry
from agentic_env.agents.tools.robot import ToolContext

CAP_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["code"],
    "properties": {"thought": {"type": "string"}, "code": {"type": "string"}},
}
#: Longest observation handed back to the planner, characters.
MAX_OBSERVATION = 1500


@dataclass(frozen=True)
class SubtaskOutcome:
    """What executing one subtask did.

    Attributes:
        ok: the subtask was carried out (every function it called succeeded).
        observation: the text the planner reads.
        calls: ``(function, arguments, result text)`` of every call, in order.
        detail: mode-specific trace data (conversation stop, sandbox outcome, program).
    """

    ok: bool
    observation: str
    calls: tuple[tuple[str, dict[str, Any], str], ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_OBSERVATION else text[:MAX_OBSERVATION - 3] + "..."


class ToolExecutor:
    """TaP: the executor model calls the functions natively, one per turn.

    Args:
        models: reaches the ``task_executor`` module.
        tools: the ALRM functions.
        context: the episode's tool context (its log records every call).
        max_turns: model turns per subtask.
    """

    def __init__(self, models: ModuleContext, tools: ToolRegistry, context: ToolContext,
                 max_turns: int = 8) -> None:
        self.models, self.tools, self.context, self.max_turns = models, tools, context, max_turns

    def run(self, subtask: str, scene: str) -> SubtaskOutcome:
        """Carry out ``subtask`` (``scene``: the object list, for the prompt)."""
        calls: list[tuple[str, dict[str, Any], str]] = []
        oks: list[bool] = []

        def execute(call: ToolCall) -> tuple[str, dict[str, Any]]:
            result = self.context.call(self.tools, call.name, call.arguments)
            text = result.render()
            calls.append((call.name, dict(call.arguments), text))
            oks.append(result.ok)
            return text, result.to_dict()

        prompt = render_prompt(PACKAGE, "tap", subtask=subtask, objects=scene)
        query = ModelQuery("task_executor", "tap", prompt, fields={"subtask": subtask},
                           tools=tuple(self.tools.definitions()))
        conversation = self.models.converse(query, execute, max_turns=self.max_turns)
        done = conversation.stop == "answered" and bool(oks) and oks[-1]
        lines = [f"{name}: {text}" for name, _, text in calls]
        if conversation.error:
            lines.append(f"executor error: {conversation.error}")
        elif conversation.stop == "max_turns":
            lines.append(f"the executor used its {self.max_turns} turns")
        if conversation.final_text:
            lines.append(conversation.final_text)
        return SubtaskOutcome(done, _clip("\n".join(lines) or "nothing was done"),
                              tuple(calls), {"stop": conversation.stop,
                                             "turns": len(conversation.turns)})


class CodeExecutor:
    """CaP: the executor model writes one program per subtask; it runs once, sandboxed.

    Args:
        models: reaches the ``task_executor`` module.
        tools: the ALRM functions (the program's only reach).
        context: the episode's tool context (its log records every call).
        limits: the sandbox's limits.
        seed: seed of the program's ``random``.
    """

    def __init__(self, models: ModuleContext, tools: ToolRegistry, context: ToolContext,
                 limits: SandboxLimits | None = None, seed: int = 0) -> None:
        self.models, self.tools, self.context = models, tools, context
        self.limits = limits or SandboxLimits(wall_s=30.0)
        self.seed = seed

    def functions_text(self) -> str:
        """The functions as the prompt documents them: signature and description."""
        lines = []
        for name in self.tools.names:
            function = self.tools.get(name).function
            lines.append(f"- {name}{inspect.signature(function)}: "
                         f"{self.tools.get(name).spec.description}")
        return "\n".join(lines)

    def program_functions(self, calls: list[tuple[str, dict[str, Any], str]]
                          ) -> dict[str, Callable[..., str]]:
        """The functions the program reaches: each returns its result's text, or raises
        ``RuntimeError`` with it when the function failed."""

        def wrap(name: str) -> Callable[..., str]:
            function = self.tools.get(name).function

            @functools.wraps(function)
            def call(*args: Any, **kwargs: Any) -> str:
                arguments = dict(inspect.signature(function).bind(*args, **kwargs).arguments)
                result = self.context.call(self.tools, name, arguments)
                calls.append((name, arguments, result.render()))
                if not result.ok:
                    raise RuntimeError(result.render())
                return result.render()

            return call

        return {name: wrap(name) for name in self.tools.names}

    def run(self, subtask: str, scene: str) -> SubtaskOutcome:
        """Write and run the program of ``subtask`` (``scene``: the object list).

        Raises:
            ModuleFailedError: the executor's answers stayed malformed.
        """
        code = str(ask_json(self.models, PACKAGE, "task_executor", (), CAP_SCHEMA,
                            {"subtask": subtask}, template="cap", subtask=subtask,
                            objects=scene, functions=self.functions_text())["code"])
        calls: list[tuple[str, dict[str, Any], str]] = []
        run = run_program(code, self.program_functions(calls), limits=self.limits,
                          seed=self.seed)
        lines = [run.log.strip()] if run.log.strip() else []
        if not run.ok:
            lines.append(f"the program failed ({run.outcome}): {run.error}")
        return SubtaskOutcome(run.ok, _clip("\n".join(lines) or "the program printed nothing"),
                              tuple(calls), {"outcome": run.outcome, "program": code,
                                             "error": run.error})
