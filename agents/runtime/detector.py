"""The object detector every agent shares: one model call that points at a named thing (and
boxes it) in one camera image, as the skills' :data:`~agentic_env.agents.skills.locate.
Detector` (prompt ``prompts/detector.md``).

Every role that points into an image asks in the coordinate format of the model answering
it (:func:`pointing_format`) and turns the answer into a pixel :class:`Detection` with
:func:`detection_from`: the one conversion of :mod:`agentic_env.agents.models.coordinates`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.coordinates import (
    COORDINATES_SCHEMA,
    CoordinateFormat,
    answer_format,
    format_for_model,
    to_pixels,
)
from agentic_env.agents.runtime.prompts import ask_json, camera_image
from agentic_env.agents.skills.locate import Detection, Detector

#: A point or box in an answer, in the coordinate format the prompt asked for.
COORDS: dict[str, Any] = {"type": ["array", "null"], "items": {"type": "number"},
                          "minItems": 2, "maxItems": 4}
DETECTOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["found", "point"],
    "properties": {"found": {"type": "boolean"}, "point": COORDS, "box": COORDS,
                   "coordinates": COORDINATES_SCHEMA, "reasoning": {"type": "string"}},
}
#: What a detector query asks for, by ``part``.
PART_TEXT = {"handle": "handle of the {}", "interior": "inside (floor) of the open {}"}


def detect(ctx: ModuleContext, obs: Mapping[str, np.ndarray], camera: str, target: str,
           description: str, part: str = "object") -> Detection | None:
    """Point at and box ``target`` in ``camera``'s image (the ``detector`` module); ``None``
    when the model does not see it.

    Args:
        target: the name the agent uses for it.
        description: words for it (what the model is told to look for).
        part: ``"object"``, or for drawers ``"handle"`` / ``"interior"``.
    """
    height, width = obs[f"{camera}_rgb"].shape[:2]
    part_text = PART_TEXT.get(part, "{}").format(description)
    fmt = pointing_format(ctx, "detector")
    answer = ask_json(ctx, "agentic_env.agents.runtime", "detector",
                      (camera_image(obs, camera),), DETECTOR_SCHEMA,
                      {"target": target, "part": part, "camera": camera,
                       "image_size": [height, width], "coordinates": fmt.name},
                      part_text=part_text, camera=camera, width=width, height=height,
                      target=target, description=description,
                      **fmt.prompt_values(height, width))
    if not answer["found"]:
        return None
    return detection_from(answer, fmt, height, width)


def pointing_format(ctx: ModuleContext, module: str) -> CoordinateFormat:
    """The coordinate format to ask ``module`` for: that of the model answering it."""
    return format_for_model(ctx.router.backend_for(module).model)


def detection_from(answer: Mapping[str, Any], asked: CoordinateFormat, height: int,
                   width: int, point: str = "point", box: str = "box") -> Detection | None:
    """The pixel detection in an answer's ``point`` and ``box`` fields, written in the
    format the answer names (its ``coordinates`` field) or else in ``asked``, for a
    ``height`` x ``width`` image; ``None`` without a point."""
    fmt = answer_format(answer, asked)
    return Detection.from_answer(to_pixels(answer.get(point), fmt, height, width),
                                 to_pixels(answer.get(box), fmt, height, width), height, width)


def words_for(name: str) -> str:
    """Words for an identifier: ``red-cube-1`` -> ``red cube``, ``top_drawer`` ->
    ``top drawer``."""
    return re.sub(r"-\d+$", "", name).replace("-", " ").replace("_", " ")


def detector_for(ctx: ModuleContext,
                 describe: Callable[[str], str] = words_for) -> Detector:
    """The ``detector`` module as the skills' detector; ``describe(name)`` gives the words
    the model is told to look for (default :func:`words_for`)."""
    def detector(obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> Detection | None:
        return detect(ctx, obs, camera, name, describe(name), part)
    return detector
