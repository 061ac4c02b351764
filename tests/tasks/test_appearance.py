"""Every named object looks like what its names say: each is rendered alone (small, from the
catalogue sheet's renderer) and its dominant colour must be its colour word, its measured shape
(footprint from above, hollowness from the depth image, proportions) its noun's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

from agentic_env.harness.catalogue_sheet import PropView, prop_views
from agentic_env.tasks.appearance import Appearance, appearances
from agentic_env.tasks.catalogue import CATALOGUE
from agentic_env.tasks.sorting import SortingTask

ENTRIES = appearances()

#: Colour word -> (hue ranges in degrees, saturation range, lowest value) of its pixels, HSV in
#: 0..1 but hue in degrees. Pixels of saturation under 0.15 are white (value >= 0.45), grey or
#: black (value < 0.12 always is).
COLOURS: dict[str, tuple[tuple[tuple[float, float], ...], tuple[float, float], float]] = {
    "pink": (((300, 360), (0, 20)), (0.25, 0.6), 0.6),
    "cream": (((30, 70),), (0.1, 0.35), 0.7),
    "red": (((345, 360), (0, 15)), (0.35, 1.0), 0.0),
    "orange": (((15, 40),), (0.35, 1.0), 0.0),
    "yellow": (((40, 70),), (0.35, 1.0), 0.0),
    "green": (((70, 165),), (0.35, 1.0), 0.0),
    "turquoise": (((165, 200),), (0.35, 1.0), 0.0),
    "blue": (((200, 255),), (0.35, 1.0), 0.0),
    "purple": (((255, 345),), (0.35, 1.0), 0.0),
}


@pytest.fixture(scope="module")
def views() -> dict[tuple[str, str], PropView]:
    """Every entry rendered alone at 64 x 64 pixels, by (task, name)."""
    return {(e.task, e.name): v for e, v in zip(ENTRIES, prop_views(ENTRIES, size=64),
                                                strict=True)}


def _hsv(rgb: np.ndarray) -> np.ndarray:
    """(N, 3) uint8 RGB -> (N, 3) hue (degrees), saturation, value (0..1)."""
    colour = rgb.astype(float) / 255.0
    high, low = colour.max(axis=1), colour.min(axis=1)
    spread = np.where(high > low, high - low, 1.0)
    r, g, b = colour.T
    hue = np.select([high == r, high == g], [(g - b) / spread % 6, (b - r) / spread + 2],
                    (r - g) / spread + 4) * 60.0
    saturation = np.where(high > 0, (high - low) / np.where(high > 0, high, 1.0), 0.0)
    return np.stack([np.where(high > low, hue, 0.0), saturation, high], axis=1)


def colour_word(hue: float, saturation: float, value: float) -> str | None:
    """The colour word of one pixel (``None``: a pale tint of no listed colour)."""
    if value < 0.12:
        return "black"
    if saturation < 0.15:
        return "white" if value >= 0.45 else "grey"
    for word, (hues, (s_low, s_high), v_low) in COLOURS.items():
        if (s_low <= saturation < s_high and value >= v_low
                and any(h0 <= hue < h1 for h0, h1 in hues)):
            return word
    return None


def dominant_colour(view: PropView) -> str | None:
    """The colour word most of the object's pixels in the oblique view have."""
    words = Counter(colour_word(*pixel) for pixel in _hsv(view.oblique[view.oblique_mask]))
    return words.most_common(1)[0][0]


# -- shapes ------------------------------------------------------------------------------


def _footprint(view: PropView) -> tuple[float, float]:
    """(fill, elongation) of the silhouette from above: its share of its bounding box
    (a disc 0.79, a rectangle 1) and the box's long side over its short side."""
    rows, cols = np.nonzero(view.top_mask)
    height, width = np.ptp(rows) + 1, np.ptp(cols) + 1
    return float(view.top_mask.sum() / (height * width)), max(height, width) / min(height, width)


def _hollow(view: PropView) -> bool:
    """The middle of the silhouette lies under half the object's height (a floor in walls)."""
    rows, cols = np.nonzero(view.top_mask)
    row, col = int(rows.mean()), int(cols.mean())
    reach = max(1, int(0.1 * min(np.ptp(rows), np.ptp(cols))))
    middle = view.heights[row - reach:row + reach + 1, col - reach:col + reach + 1]
    return bool(np.nanmedian(middle) < 0.5 * view.extents[2])


def _tall(view: PropView) -> float:
    """Height over the shorter horizontal side."""
    return float(view.extents[2] / min(view.extents[:2]))


def _round(view: PropView) -> bool:
    fill, elongation = _footprint(view)
    return 0.7 <= fill <= 0.86 and elongation < 1.15


def _square(view: PropView) -> bool:
    fill, elongation = _footprint(view)
    return fill >= 0.9 and elongation < 1.15


def _boxy(view: PropView) -> bool:
    return _footprint(view)[0] >= 0.9


def _between(low: float, high: float) -> Callable[[float], bool]:
    return lambda value: low <= value <= high


#: Last word of a noun -> what its rendered shape must be.
SHAPES: dict[str, Callable[[PropView], bool]] = {
    "bowl": lambda v: _round(v) and _hollow(v) and _between(0.1, 0.3)(_tall(v)),
    "pot": lambda v: _hollow(v) and _between(0.25, 0.6)(_tall(v)),
    "bin": lambda v: _square(v) and _hollow(v),
    "plate": lambda v: _round(v) and not _hollow(v) and _tall(v) < 0.15,
    "cube": lambda v: _square(v) and _between(0.85, 1.15)(_tall(v)),
    "block": lambda v: _square(v) and _between(0.85, 1.15)(_tall(v)),
    "ball": lambda v: _round(v) and _between(0.75, 1.1)(_tall(v)),
    "box": lambda v: _boxy(v) and not _hollow(v),
    "pack": lambda v: _boxy(v) and _tall(v) < 0.7,
    "sponge": lambda v: _boxy(v) and _tall(v) < 0.7,
    "board": lambda v: _boxy(v) and _tall(v) < 0.1,
    "slot": lambda v: _square(v) and _tall(v) < 0.1,
    "drawer": lambda v: _boxy(v) and not _hollow(v),
    "can": lambda v: _round(v) and _between(1.2, 3.0)(_tall(v)),
    "bottle": lambda v: _round(v) and _between(1.5, 5.0)(_tall(v)),
    "mug": lambda v: (not _hollow(v) and _between(1.2, 1.8)(_footprint(v)[1])
                      and _between(0.8, 2.0)(_tall(v))),
    **{fruit: lambda v: _round(v) and _between(0.75, 1.15)(_tall(v))
       for fruit in ("apple", "orange", "peach", "plum", "tomato")},
    "lemon": lambda v: _between(0.7, 0.86)(_footprint(v)[0])
    and _between(1.2, 1.6)(_footprint(v)[1]),
    **{long: lambda v: _footprint(v)[1] >= 2.5 for long in ("banana", "screwdriver", "marker")},
}
#: Nouns whose shape no rule above describes (figures made of several parts).
FREE_FORM = ("duck", "car", "leg")


def _id(entry: Appearance) -> str:
    return f"{entry.task}:{entry.name}"


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_the_rendered_object_has_its_colour_and_shape(
        entry: Appearance, views: dict[tuple[str, str], PropView]) -> None:
    view = views[entry.task, entry.name]
    assert view.top_mask.any() and view.oblique_mask.any(), f"{entry.name} renders nothing"
    if entry.colour is not None:
        assert entry.colour in {*COLOURS, "white"}, f"no hue range for {entry.colour!r}"
        assert dominant_colour(view) == entry.colour, entry.description
    noun = entry.noun.split()[-1]
    assert noun in SHAPES or noun in FREE_FORM, f"no shape rule for the noun {entry.noun!r}"
    if noun in SHAPES:
        assert SHAPES[noun](view), (entry.description, _footprint(view), _hollow(view),
                                    _tall(view))


def test_a_name_that_does_not_match_fails(views: dict[tuple[str, str], PropView]) -> None:
    """The checks tell things apart: the white bin is no bowl and no blue thing, the bowl no
    bin nor plate, a plate no bowl."""
    white_bin, bowl = views["sorting", "white-bin"], views["sorting", "bowl"]
    plate = views["stacking", "pink-plate-1"]
    assert not SHAPES["bowl"](white_bin) and dominant_colour(white_bin) != "blue"
    assert not SHAPES["bin"](bowl) and not SHAPES["plate"](bowl)
    assert not SHAPES["bowl"](plate) and SHAPES["plate"](plate)


def test_every_task_container_and_catalogue_object_is_listed() -> None:
    names = {(e.task, e.name) for e in ENTRIES}
    assert {("sorting", entry.name) for entry in CATALOGUE.values()} <= names
    assert {("sorting", name) for name in SortingTask().containers} <= names
    assert {"pot-1", "bowl-1", "top-drawer"} <= {e.name for e in ENTRIES if e.task == "kitchen"}
    assert {e.task for e in ENTRIES} == {"sorting", "stacking", "crossword", "reorientation",
                                         "kitchen"}
