"""How model families write image coordinates, and the one conversion into pixels.

A role that points into an image (the shared detector, MALLVI's Localizer and single-agent
planner) asks for points and boxes in the format the answering model's family is trained
on, states that format in its prompt, and converts the answer once into pixels of the image
it sent (:func:`to_pixels`). The formats, as the families document them:

* ``pixels``: x to the right, y down, origin at the top-left corner, in pixels of the image
  as sent (GPT, Claude, any model of an unknown family, the sim-oracle).
* ``pixels_28``: Qwen2.5-VL, absolute pixels of the input after its image processor resized
  both sides to multiples of 28 (within its pixel budget); ``[x, y]`` order.
* ``norm1000_yx``: Gemini, ``[y, x]`` points and ``[y_min, x_min, y_max, x_max]`` boxes,
  each value normalised to 0-1000 of the image's height or width.
* ``norm1000_xy``: Qwen2-VL and Qwen3-VL, ``[x, y]`` / ``[x_min, y_min, x_max, y_max]``
  normalised to 0-1000.
* ``percent``: Molmo, x and y in percent (0-100) of the width and height; its
  ``<point x="61.5" y="40.2" alt="...">`` markup is read as such an answer
  (:func:`read_point_markup`).

The format is chosen from the litellm model name (:func:`format_for_model`); an answer may
also name the format it used in its ``coordinates`` field (:data:`COORDINATES_SCHEMA`), which
then wins (:func:`answer_format`): the sim-oracle always answers ``pixels`` and says so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Qwen2.5-VL's image processor: side multiple and pixel budget of the resized input.
QWEN25_MULTIPLE = 28
QWEN25_MIN_PIXELS = 56 * 56
QWEN25_MAX_PIXELS = 16384 * 28 * 28


@dataclass(frozen=True)
class CoordinateFormat:
    """One way of writing image coordinates.

    Attributes:
        name: the format's name (a key of :data:`FORMATS`).
        yx: y comes before x in points (``[y, x]``) and boxes (``[y0, x0, y1, x1]``).
        scale: the range ``[0, scale]`` both axes are normalised to; ``None`` for pixels.
        multiple: pixel formats only: the input's sides are resized to multiples of this
            (1: the image as sent).
    """

    name: str
    yx: bool = False
    scale: float | None = None
    multiple: int = 1

    def frame(self, height: int, width: int) -> tuple[float, float]:
        """(height, width) of the coordinate frame of a ``height`` x ``width`` image, in the
        format's units (pixels of the resized input, or the normalisation range)."""
        if self.scale is not None:
            return self.scale, self.scale
        if self.multiple == 1:
            return float(height), float(width)
        return resized_input(height, width, self.multiple)

    def point_form(self) -> str:
        """How a point is written, e.g. ``[x, y]``."""
        return "[y, x]" if self.yx else "[x, y]"

    def box_form(self) -> str:
        """How a box is written, e.g. ``[x_min, y_min, x_max, y_max]``."""
        return "[y_min, x_min, y_max, x_max]" if self.yx else "[x_min, y_min, x_max, y_max]"

    def describe(self, height: int, width: int) -> str:
        """The sentence a prompt states the format with, for a ``height`` x ``width`` image."""
        order = (f"points are {self.point_form()} and boxes {self.box_form()}"
                 + (" (y first)" if self.yx else ""))
        if self.scale is not None:
            unit = ("percent (0-100)" if self.scale == 100
                    else f"values normalised to 0-{self.scale:g}")
            return (f"Coordinates: {unit} of the image's height (y) and width (x), origin at "
                    f"the top-left corner, y down; {order}.")
        frame_h, frame_w = self.frame(height, width)
        size = (f"the image as your vision input resized it ({frame_w:g} x {frame_h:g} "
                "pixels)" if self.multiple != 1 else f"the image ({width} x {height} pixels)")
        return (f"Coordinates: pixels of {size}, x to the right, y down, origin at the "
                f"top-left corner; {order}.")

    def prompt_values(self, height: int, width: int) -> dict[str, str]:
        """The template values of a pointing prompt: ``coordinates`` (the sentence),
        ``point_form``, ``box_form`` and ``coordinate_format`` (the name)."""
        return {"coordinates": self.describe(height, width), "point_form": self.point_form(),
                "box_form": self.box_form(), "coordinate_format": self.name}


#: Every format by name.
FORMATS: Mapping[str, CoordinateFormat] = {
    "pixels": CoordinateFormat("pixels"),
    "pixels_28": CoordinateFormat("pixels_28", multiple=QWEN25_MULTIPLE),
    "norm1000_yx": CoordinateFormat("norm1000_yx", yx=True, scale=1000.0),
    "norm1000_xy": CoordinateFormat("norm1000_xy", scale=1000.0),
    "percent": CoordinateFormat("percent", scale=100.0),
}
#: The format of a model of no known family.
DEFAULT_FORMAT = "pixels"
#: Model families: (family, pattern searched in the lower-case litellm model name, the format
#: the family is trained to answer in); the first match wins.
FAMILY_FORMATS: tuple[tuple[str, str, str], ...] = (
    ("gemini", r"gemini", "norm1000_yx"),
    ("qwen3-vl", r"qwen3(?:\.\d+)?[-_.]?vl|qwen3\.\d", "norm1000_xy"),
    ("qwen2.5-vl", r"qwen2\.5[-_.]?vl", "pixels_28"),
    ("qwen2-vl", r"qwen2[-_.]?vl", "norm1000_xy"),
    ("molmo", r"molmo", "percent"),
)
#: The answer field in which a model may name the format it used.
COORDINATES_SCHEMA: dict[str, Any] = {"type": "string", "enum": list(FORMATS)}


def resized_input(height: int, width: int, multiple: int = QWEN25_MULTIPLE,
                  min_pixels: int = QWEN25_MIN_PIXELS,
                  max_pixels: int = QWEN25_MAX_PIXELS) -> tuple[float, float]:
    """(height, width) of a Qwen2.5-VL input: each side rounded to the nearest ``multiple``,
    then scaled (keeping the aspect ratio) into ``[min_pixels, max_pixels]``."""
    rows = max(multiple, round(height / multiple) * multiple)
    cols = max(multiple, round(width / multiple) * multiple)
    if rows * cols > max_pixels:
        shrink = math.sqrt(height * width / max_pixels)
        rows = max(multiple, math.floor(height / shrink / multiple) * multiple)
        cols = max(multiple, math.floor(width / shrink / multiple) * multiple)
    elif rows * cols < min_pixels:
        grow = math.sqrt(min_pixels / (height * width))
        rows = math.ceil(height * grow / multiple) * multiple
        cols = math.ceil(width * grow / multiple) * multiple
    return float(rows), float(cols)


def family_of(model: str) -> str | None:
    """The family of litellm model name ``model`` (:data:`FAMILY_FORMATS`), ``None`` when
    unknown."""
    name = model.lower()
    for family, pattern, _ in FAMILY_FORMATS:
        if re.search(pattern, name):
            return family
    return None


def format_for_model(model: str) -> CoordinateFormat:
    """The format to ask ``model`` for: its family's, else :data:`DEFAULT_FORMAT`."""
    by_family = {family: format_name for family, _, format_name in FAMILY_FORMATS}
    return FORMATS[by_family.get(family_of(model) or "", DEFAULT_FORMAT)]


def answer_format(answer: Mapping[str, Any], asked: CoordinateFormat) -> CoordinateFormat:
    """The format an answer is in: the one its ``coordinates`` field names, else ``asked``."""
    return FORMATS.get(str(answer.get("coordinates") or ""), asked)


def to_pixels(values: Sequence[float] | None, fmt: CoordinateFormat, height: int,
              width: int) -> list[float] | None:
    """A point (2 numbers) or box (4 numbers) written in ``fmt`` as pixels of a ``height`` x
    ``width`` image, ``[x, y]`` or ``[x_min, y_min, x_max, y_max]`` (not clipped); ``None``
    for ``None`` or any other count of numbers."""
    if values is None or len(values) not in (2, 4):
        return None
    frame_h, frame_w = fmt.frame(height, width)
    pairs = [(float(values[i]), float(values[i + 1])) for i in range(0, len(values), 2)]
    out: list[float] = []
    for first, second in pairs:
        x, y = (second, first) if fmt.yx else (first, second)
        out.extend((x * width / frame_w, y * height / frame_h))
    return out


_MARKUP = re.compile(r"<points?\b([^>]*)>(.*?)(?:</points?>|$)", re.DOTALL | re.IGNORECASE)
_ATTRIBUTE = re.compile(r"(\w+)\s*=\s*\"([^\"]*)\"")


def read_point_markup(text: str) -> dict[str, Any] | None:
    """Molmo's point markup as a pointing answer: the first ``<point x=".." y="..">`` (or
    ``<points x1=".." y1=".." ...>``) of ``text`` as ``{"found": true, "point": [x, y],
    "box": null, "coordinates": "percent", "reasoning": <its alt text or label>}``;
    ``None`` when ``text`` has no such markup."""
    for match in _MARKUP.finditer(text):
        attributes = {key.lower(): value for key, value in _ATTRIBUTE.findall(match.group(1))}
        x = attributes.get("x", attributes.get("x1"))
        y = attributes.get("y", attributes.get("y1"))
        try:
            point = [float(x), float(y)] if x is not None and y is not None else None
        except ValueError:
            point = None
        if point is not None:
            label = attributes.get("alt") or match.group(2).strip()
            return {"found": True, "point": point, "box": None, "coordinates": "percent",
                    "reasoning": label}
    return None
