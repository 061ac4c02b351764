"""The VLM's check of a detection another detector made (AgenticLab Sec. IV, grounding: "the
system can rely on a VLM to directly predict object locations, or employ LangSAM for
segmentation with subsequent VLM verification for object correctness").

When the ``detector`` module is served by another model than the pipeline's VLM (a
segmentation tool such as LangSAM), each detection is drawn on the camera image (its box and
point) and the VLM is asked whether the mark lies on the named target (prompt
``prompts/detection_check.md``, asked of the ``grasp`` module: the VLM's judgement of object
correctness, AgenticLab's grasp planner's first check). A rejected detection is asked for
again on the same image, at most ``retries`` times; when every answer is rejected the target
counts as not seen, so the skills look again from another view (the paper's red arrows:
"retry or replan based on updated observations").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agentic_env.agents.agenticlab.modules import PACKAGE
from agentic_env.agents.models.base import ModelImage
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.perception.drawing import draw_detections
from agentic_env.agents.runtime.detector import PART_TEXT
from agentic_env.agents.runtime.prompts import ask_json
from agentic_env.agents.skills.locate import Detection, Detector

#: The module asked to verify a detection (the VLM's object-correctness judgement).
VERIFIER = "grasp"
VERIFY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["evaluation"],
    "properties": {"evaluation": {
        "type": "object", "required": ["action"],
        "properties": {"action": {"type": "string",
                                  "enum": ["ACCEPT_DETECTION", "REJECT_DETECTION"]},
                       "object_correctness": {"type": "object"}}}},
}


def detections_verified(ctx: ModuleContext) -> bool:
    """Whether the pipeline verifies detections: the ``detector`` module is answered by
    another model than the VLM that verifies (:data:`VERIFIER`)."""
    return ctx.router.backend_for("detector").name != ctx.router.backend_for(VERIFIER).name


def verify_detection(ctx: ModuleContext, obs: Mapping[str, np.ndarray], camera: str,
                     target: str, description: str, part: str, detection: Detection) -> bool:
    """Ask the VLM whether ``detection`` (pixels of ``camera``'s image in ``obs``) marks
    ``target``'s ``part``; ``True`` when it accepts."""
    rgb = np.asarray(obs[f"{camera}_rgb"])
    height, width = rgb.shape[:2]
    boxes = (detection.box,) if detection.box is not None else ()
    image = draw_detections(rgb, points=(detection.point,), boxes=boxes)
    answer = ask_json(
        ctx, PACKAGE, VERIFIER, (ModelImage(f"{camera}_detection", image),), VERIFY_SCHEMA,
        {"target": target, "part": part, "camera": camera, "image_size": [height, width],
         "point": list(detection.point),
         "box": None if detection.box is None else list(detection.box)},
        template="detection_check", camera=camera, width=width, height=height,
        target=target, description=description,
        part_text=PART_TEXT.get(part, "{}").format(description))
    return answer["evaluation"]["action"] == "ACCEPT_DETECTION"


def verified_detector(ctx: ModuleContext, detector: Detector, describe: Callable[[str], str],
                      on_check: Callable[..., None], retries: int = 1) -> Detector:
    """``detector`` with each detection verified by the VLM (module docstring).

    Args:
        describe: words for a target's name (what the VLM is told to look for).
        on_check: receives each verdict as keyword arguments (``target``, ``camera``,
            ``attempt``, ``accepted``), e.g. the episode's event log.
        retries: detections asked for again on the same image after a rejection (>= 0).
    """
    def verified(obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> Detection | None:
        for attempt in range(1, retries + 2):
            detection = detector(obs, camera, name, part)
            if detection is None:
                return None
            accepted = verify_detection(ctx, obs, camera, name, describe(name), part,
                                        detection)
            on_check(target=name, camera=camera, attempt=attempt, accepted=accepted)
            if accepted:
                return detection
        return None
    return verified
