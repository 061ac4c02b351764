"""The grasp judgement every agent may share (AgenticLab's grasp planner, paper Fig. 17-22):
one model call that judges a grasp candidate drawn over the local point cloud (the ``grasp``
module, prompt ``prompts/grasp.md``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.agents.models.base import ModelImage
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.perception import GraspCandidate
from agentic_env.agents.runtime.prompts import ask_json
from agentic_env.agents.skills import GraspJudge, Target

_NULLABLE_TEXT = {"type": ["string", "null"]}
GRASP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["evaluation"],
    "properties": {"evaluation": {
        "type": "object", "required": ["action"],
        "properties": {"action": {"type": "string", "enum": ["EXECUTE_GRASP", "REJECT_GRASP"]},
                       "overall_reasoning": _NULLABLE_TEXT,
                       "rejection_reason": _NULLABLE_TEXT}}},
}


@dataclass(frozen=True)
class GraspVerdict:
    """Grasp evaluation: execute or not, and why not."""

    execute: bool
    reason: str


def evaluate_grasp(ctx: ModuleContext, image: np.ndarray, action: str, target: str,
                   description: str, pose: np.ndarray, width: float) -> GraspVerdict:
    """Judge one candidate drawn over the point cloud.

    Args:
        image: the candidate rendered over the local point cloud (H, W, 3) uint8.
        action: the step it serves, as text (e.g. ``(pick red-cube-1)``).
        pose: candidate TCP pose (4, 4), robot base frame.
        width: jaw opening, metres.
    """
    evaluation = ask_json(
        ctx, "agentic_env.agents.runtime", "grasp", (ModelImage("grasp_candidate", image),),
        GRASP_SCHEMA, {"target": target, "pose": pose.tolist(), "width": width},
        action=action, target=target, description=description,
        position=np.round(pose[:3, 3], 3).tolist(), approach=np.round(pose[:3, 2], 2).tolist(),
        width_mm=round(width * 1000))["evaluation"]
    execute = evaluation["action"] == "EXECUTE_GRASP"
    reason = evaluation.get("rejection_reason") or evaluation.get("overall_reasoning") or ""
    return GraspVerdict(execute, str(reason))


def grasp_judge(ctx: ModuleContext, action: str, description: str) -> GraspJudge:
    """The ``grasp`` module as the pick skills' judgement of candidates for ``action``."""
    def judge(image: np.ndarray, candidate: GraspCandidate, target: Target) -> tuple[bool, str]:
        verdict = evaluate_grasp(ctx, image, action, target.name, description, candidate.pose,
                                 candidate.width)
        return verdict.execute, verdict.reason
    return judge
