"""The AgenticLab pipeline's own VLM modules (task parser, action checker, goal checker), each
one function around one model call; the detector and the grasp judgement it shares with other
agents live in :mod:`agentic_env.agents.runtime`.

Every module renders its prompt template (``prompts/<module>.md``, after the paper's
Appendix B I/O specifications), attaches its images, states the JSON schema of the answer and
asks through :func:`agentic_env.agents.models.ask.ask` (bounded re-asks on malformed output).
The ``fields`` of each query repeat the structured values the prompt was rendered from, which
only the privileged sim-oracle reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.runtime.listing import Kind
from agentic_env.agents.runtime.prompts import ask_json, camera_image
from agentic_env.pddl.planning import PlanStep

#: Where the modules' prompt templates live.
PACKAGE = "agentic_env.agents.agenticlab"
_BOOL = {"type": "boolean"}
_TEXT = {"type": "string"}

PARSER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["objects_identified", "reasoning", "problem_pddl"],
    "properties": {
        "objects_identified": {"type": "array", "items": {
            "type": "object", "required": ["name", "type"],
            "properties": {"name": _TEXT, "type": _TEXT, "description": _TEXT,
                           "kind": {"type": "string", "enum": [k.value for k in Kind]}}}},
        "reasoning": _TEXT,
        "updated_domain": _TEXT,
        "problem_pddl": _TEXT,
    },
}
CHECKER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["success", "failed_conditions"],
    "properties": {
        "conditions_analysis": {"type": "array", "items": {"type": "object"}},
        "success": _BOOL,
        "reasoning": _TEXT,
        "failed_conditions": {"type": "array", "items": _TEXT},
    },
}
GOAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["success"],
    "properties": {"success": _BOOL, "reasoning": _TEXT,
                   "unsatisfied_conditions": {"type": "array", "items": _TEXT}},
}

#: What each predicate of the five domains means, for the checkers' prompts.
PREDICATE_GUIDE = """\
(hand-empty): the gripper holds nothing.  (holding x): x is in the gripper, lifted.
(on-table x): x rests on the table top, outside containers.  (on-top-of x y): x rests on y.
(clear x): nothing rests on x.  (in x c): x lies inside container c.
(in-drawer x d): x lies inside drawer d.  (drawer-open d) / (drawer-closed d): drawer state.
(in-slot b s): letter block b sits in numbered slot s.  (slot-empty s): slot s is free.
(in-pose x p): x rests in pose p (upright, on-side, upside-down, handle-left...)."""


def _object_lines(objects: Mapping[str, str]) -> str:
    return "\n".join(f"- {name}: {text}" for name, text in objects.items()) or "- (none)"


@dataclass(frozen=True)
class ParsedTask:
    """The task parser's answer: objects (name -> (type, description)), domain, problem,
    and what each object is where the parser said (name -> :class:`~agentic_env.agents.
    runtime.listing.Kind`; the table a cube may be set down on is ``Kind.TABLE``)."""

    objects: dict[str, tuple[str, str]]
    reasoning: str
    domain: str
    problem: str
    kinds: dict[str, Kind] = field(default_factory=dict)


def parse_task(ctx: ModuleContext, obs: Mapping[str, np.ndarray], instruction: str,
               domain: str, example: str, feedback: str = "") -> ParsedTask:
    """Task parser (Table III): instruction + shoulder image + domain -> PDDL problem.

    Args:
        feedback: why the previous answer was rejected (PDDL errors, no plan), or "".
    """
    note = f"\n## Your previous answer was rejected\n{feedback}\n" if feedback else ""
    answer = ask_json(ctx, PACKAGE, "parser", (camera_image(obs, "shoulder"),), PARSER_SCHEMA,
                      {"instruction": instruction, "domain": domain, "feedback": feedback},
                      instruction=instruction, domain=domain, example=example, feedback=note)
    objects = {str(o["name"]): (str(o["type"]), str(o.get("description", o["name"])))
               for o in answer["objects_identified"]}
    kinds = {str(o["name"]): Kind(o["kind"]) for o in answer["objects_identified"]
             if o.get("kind")}
    updated = str(answer.get("updated_domain") or "").strip() or domain
    return ParsedTask(objects, str(answer.get("reasoning", "")), updated,
                      str(answer["problem_pddl"]), kinds)


@dataclass(frozen=True)
class CheckResult:
    """Action checker verdict: all conditions hold, and the ones that do not."""

    success: bool
    failed: tuple[str, ...]
    reasoning: str


def check_conditions(ctx: ModuleContext, obs: Mapping[str, np.ndarray], step: PlanStep,
                     conditions: Sequence[str], kind: str, objects: Mapping[str, str],
                     camera: str = "shoulder") -> CheckResult:
    """Action checker (Table IV): do ``conditions`` hold in the image?

    Args:
        kind: ``"preconditions"`` (before the action) or ``"effects"`` (after it).
        objects: PDDL name -> description, for the prompt.
    """
    answer = ask_json(
        ctx, PACKAGE, "checker", (camera_image(obs, camera),), CHECKER_SCHEMA,
        {"action": str(step), "kind": kind, "conditions": list(conditions)}, camera=camera,
        kind=kind, kind_title=kind.capitalize(), action=str(step),
        conditions="\n".join(conditions), objects=_object_lines(objects),
        predicate_guide=PREDICATE_GUIDE)
    return CheckResult(bool(answer["success"]), tuple(answer.get("failed_conditions", ())),
                       str(answer.get("reasoning", "")))


def check_goal(ctx: ModuleContext, obs: Mapping[str, np.ndarray], instruction: str,
               goal: Sequence[str], objects: Mapping[str, str],
               camera: str = "shoulder") -> CheckResult:
    """Goal checker: is the task complete in the image?"""
    answer = ask_json(ctx, PACKAGE, "goal", (camera_image(obs, camera),), GOAL_SCHEMA,
                      {"instruction": instruction, "goal": list(goal)}, camera=camera,
                      instruction=instruction, goal="\n".join(goal),
                      objects=_object_lines(objects))
    return CheckResult(bool(answer["success"]),
                       tuple(answer.get("unsatisfied_conditions", ())),
                       str(answer.get("reasoning", "")))
