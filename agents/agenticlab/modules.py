"""The five VLM modules of the AgenticLab pipeline, each one function around one model call.

Every module renders its prompt template (``prompts/<module>.md``, after the paper's
Appendix B I/O specifications), attaches its images, states the JSON schema of the answer and
asks through :func:`agentic_env.agents.models.ask.ask` (bounded re-asks on malformed output).
The ``fields`` of each query repeat the structured values the prompt was rendered from, which
only the privileged sim-oracle reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any

import numpy as np

from agentic_env.agents.models.base import ModelImage, ModelQuery
from agentic_env.agents.models.context import ModuleContext
from agentic_env.pddl.planning import PlanStep

_BOOL = {"type": "boolean"}
_TEXT = {"type": "string"}
_NULLABLE_TEXT = {"type": ["string", "null"]}
_PIXELS = {"type": ["array", "null"], "items": {"type": "number"}, "minItems": 2, "maxItems": 4}

PARSER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["objects_identified", "reasoning", "problem_pddl"],
    "properties": {
        "objects_identified": {"type": "array", "items": {
            "type": "object", "required": ["name", "type"],
            "properties": {"name": _TEXT, "type": _TEXT, "description": _TEXT}}},
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
DETECTOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["found", "point"],
    "properties": {"found": _BOOL, "point": _PIXELS, "box": _PIXELS, "reasoning": _TEXT},
}
GRASP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["evaluation"],
    "properties": {"evaluation": {
        "type": "object", "required": ["action"],
        "properties": {"action": {"type": "string", "enum": ["EXECUTE_GRASP", "REJECT_GRASP"]},
                       "overall_reasoning": _NULLABLE_TEXT,
                       "rejection_reason": _NULLABLE_TEXT}}},
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


def render_template(name: str, **values: Any) -> str:
    """The prompt template ``prompts/<name>.md`` with ``$placeholders`` filled in."""
    text = resources.files("agentic_env.agents.agenticlab").joinpath(
        f"prompts/{name}.md").read_text()
    return Template(text).substitute({k: str(v) for k, v in values.items()})


def _image(obs: Mapping[str, np.ndarray], camera: str) -> ModelImage:
    return ModelImage(f"{camera}_rgb", np.asarray(obs[f"{camera}_rgb"]))


def _object_lines(objects: Mapping[str, str]) -> str:
    return "\n".join(f"- {name}: {text}" for name, text in objects.items()) or "- (none)"


@dataclass(frozen=True)
class ParsedTask:
    """The task parser's answer: objects (name -> (type, description)), domain, problem."""

    objects: dict[str, tuple[str, str]]
    reasoning: str
    domain: str
    problem: str


def parse_task(ctx: ModuleContext, obs: Mapping[str, np.ndarray], instruction: str,
               domain: str, example: str, feedback: str = "") -> ParsedTask:
    """Task parser (Table III): instruction + shoulder image + domain -> PDDL problem.

    Args:
        feedback: why the previous answer was rejected (PDDL errors, no plan), or "".
    """
    note = f"\n## Your previous answer was rejected\n{feedback}\n" if feedback else ""
    prompt = render_template("parser", instruction=instruction, domain=domain,
                             example=example, feedback=note)
    reply = ctx.ask(ModelQuery("parser", "parser", prompt, (_image(obs, "shoulder"),),
                               PARSER_SCHEMA, {"instruction": instruction, "domain": domain,
                                               "feedback": feedback}))
    answer = reply.parsed
    objects = {str(o["name"]): (str(o["type"]), str(o.get("description", o["name"])))
               for o in answer["objects_identified"]}
    updated = str(answer.get("updated_domain") or "").strip() or domain
    return ParsedTask(objects, str(answer.get("reasoning", "")), updated,
                      str(answer["problem_pddl"]))


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
    prompt = render_template(
        "checker", camera=camera, kind=kind, kind_title=kind.capitalize(),
        action=str(step), conditions="\n".join(conditions), objects=_object_lines(objects),
        predicate_guide=PREDICATE_GUIDE)
    reply = ctx.ask(ModelQuery("checker", "checker", prompt, (_image(obs, camera),),
                               CHECKER_SCHEMA, {"action": str(step), "kind": kind,
                                                "conditions": list(conditions)}))
    answer = reply.parsed
    return CheckResult(bool(answer["success"]), tuple(answer.get("failed_conditions", ())),
                       str(answer.get("reasoning", "")))


@dataclass(frozen=True)
class Detection:
    """Where the detector saw the target: a pixel point (u, v) and a box (x0, y0, x1, y1)."""

    point: tuple[int, int]
    box: tuple[int, int, int, int] | None


def detect(ctx: ModuleContext, obs: Mapping[str, np.ndarray], camera: str, target: str,
           description: str, part: str = "object") -> Detection | None:
    """Object detector: point at and box ``target`` in the camera image, ``None`` if unseen.

    Args:
        part: ``"object"``, or for drawers ``"handle"`` / ``"interior"``.
    """
    height, width = obs[f"{camera}_rgb"].shape[:2]
    part_text = {"handle": f"handle of the {description}",
                 "interior": f"inside (floor) of the open {description}"}.get(part, description)
    prompt = render_template("detector", part_text=part_text, camera=camera, width=width,
                             height=height, target=target, description=description)
    reply = ctx.ask(ModelQuery("detector", "detector", prompt, (_image(obs, camera),),
                               DETECTOR_SCHEMA, {"target": target, "part": part,
                                                 "camera": camera,
                                                 "image_size": [height, width]}))
    answer = reply.parsed
    point = answer.get("point")
    if not answer["found"] or point is None or len(point) != 2:
        return None
    u = int(np.clip(round(point[0]), 0, width - 1))
    v = int(np.clip(round(point[1]), 0, height - 1))
    box = answer.get("box")
    if box is not None and len(box) == 4:
        x0, y0, x1, y1 = (int(round(b)) for b in box)
        box_tuple = (max(min(x0, x1), 0), max(min(y0, y1), 0),
                     min(max(x0, x1), width), min(max(y0, y1), height))
        if box_tuple[2] - box_tuple[0] >= 2 and box_tuple[3] - box_tuple[1] >= 2:
            return Detection((u, v), box_tuple)
    return Detection((u, v), None)


@dataclass(frozen=True)
class GraspVerdict:
    """Grasp evaluation: execute or not, and why not."""

    execute: bool
    reason: str


def evaluate_grasp(ctx: ModuleContext, image: np.ndarray, step: PlanStep, target: str,
                   description: str, pose: np.ndarray, width: float) -> GraspVerdict:
    """Grasp planner's evaluation (Fig. 17-22): judge a candidate drawn over the point cloud.

    Args:
        image: the candidate rendered over the local point cloud (H, W, 3) uint8.
        pose: candidate TCP pose (4, 4), robot base frame.
        width: jaw opening, metres.
    """
    prompt = render_template(
        "grasp", action=str(step), target=target, description=description,
        position=np.round(pose[:3, 3], 3).tolist(), approach=np.round(pose[:3, 2], 2).tolist(),
        width_mm=round(width * 1000))
    reply = ctx.ask(ModelQuery("grasp", "grasp", prompt, (ModelImage("grasp_candidate", image),),
                               GRASP_SCHEMA, {"target": target, "pose": pose.tolist(),
                                              "width": width}))
    evaluation = reply.parsed["evaluation"]
    execute = evaluation["action"] == "EXECUTE_GRASP"
    reason = evaluation.get("rejection_reason") or evaluation.get("overall_reasoning") or ""
    return GraspVerdict(execute, str(reason))


def check_goal(ctx: ModuleContext, obs: Mapping[str, np.ndarray], instruction: str,
               goal: Sequence[str], objects: Mapping[str, str],
               camera: str = "shoulder") -> CheckResult:
    """Goal checker: is the task complete in the image?"""
    prompt = render_template("goal", camera=camera, instruction=instruction,
                             goal="\n".join(goal), objects=_object_lines(objects))
    reply = ctx.ask(ModelQuery("goal", "goal", prompt, (_image(obs, camera),), GOAL_SCHEMA,
                               {"instruction": instruction, "goal": list(goal)}))
    answer = reply.parsed
    return CheckResult(bool(answer["success"]),
                       tuple(answer.get("unsatisfied_conditions", ())),
                       str(answer.get("reasoning", "")))
