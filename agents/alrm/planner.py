"""ALRM's task planner (ReAct): thought, one natural-language subtask, then the executor's
observation, until the planner says the task is done (ALRM, section III-A)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.runtime.prompts import ask_json

#: Where ALRM's prompt templates live.
PACKAGE = "agentic_env.agents.alrm"
PLANNER_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["thought", "subtask", "done"],
    "properties": {"thought": {"type": "string"}, "subtask": {"type": "string"},
                   "done": {"type": "boolean"}},
}


@dataclass(frozen=True)
class Step:
    """One ReAct cycle: the planner's thought and subtask, the executor's observation."""

    thought: str
    subtask: str
    observation: str
    ok: bool


@dataclass(frozen=True)
class PlannerAnswer:
    """The planner's next move: a subtask, or ``done``."""

    thought: str
    subtask: str
    done: bool


def history_text(steps: Sequence[Step]) -> str:
    """The steps so far as the planner reads them."""
    if not steps:
        return "(none yet)"
    return "\n".join(f"{i}. Thought: {s.thought}\n   Subtask: {s.subtask}\n"
                     f"   Observation: {s.observation}" for i, s in enumerate(steps, 1))


def next_subtask(models: ModuleContext, instruction: str, objects: str, places: str,
                 steps: Sequence[Step]) -> PlannerAnswer:
    """Ask the planner for the next subtask.

    Raises:
        ModuleFailedError: the planner's answers stayed malformed past the bounded re-asks.
    """
    answer = ask_json(models, PACKAGE, "task_planner", (), PLANNER_SCHEMA,
                      {"instruction": instruction, "steps": len(steps)}, template="planner",
                      instruction=instruction, objects=objects, places=places,
                      history=history_text(steps))
    subtask = str(answer["subtask"]).strip()
    return PlannerAnswer(str(answer["thought"]), subtask, bool(answer["done"]) or not subtask)
