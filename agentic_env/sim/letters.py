"""Generated textures with letters and numbers: letter-block faces and crossword slot tiles.

Nothing is read from image or font files of this project: glyphs are drawn with Pillow's
built-in default font (the embedded FreeType font that ``ImageFont.load_default(size)``
returns, drawn with a stroke for a bold weight). Where Pillow or its FreeType support is
missing, a built-in 5x7 bitmap font (:data:`BITMAP_FONT`: A-Z, 0-9) is drawn with thick square
dots instead, so a model always compiles. Both give the same images on every machine with the
same Pillow version.

Image orientation: MuJoCo maps a 2D texture onto *every face* of a box with the image's top
edge towards the face's +y (the top face) or +z (the side faces), so a block carries its letter
on all six faces, and the letter on the top face reads upright when the block's +y axis points
away from the reader.

:func:`add_letter_textures` and :func:`add_slot_textures` put the images into an ``MjSpec`` as
buffer textures named by :func:`letter_texture_name` / :func:`slot_texture_name`.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from functools import lru_cache

import mujoco
import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.sim.textures import add_texture

#: Letters that have a block texture.
LETTERS: str = string.ascii_uppercase
#: Side of every generated texture, pixels.
TEXTURE_SIZE = 128

Rgb = Sequence[float]

#: 5x7 bitmap glyphs: seven rows top to bottom, bit 4 = the left column.
BITMAP_FONT: dict[str, tuple[int, ...]] = {
    "A": (0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11),
    "B": (0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e),
    "C": (0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e),
    "D": (0x1e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1e),
    "E": (0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f),
    "F": (0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10),
    "G": (0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f),
    "H": (0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11),
    "I": (0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e),
    "J": (0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c),
    "K": (0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11),
    "L": (0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f),
    "M": (0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11),
    "N": (0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11),
    "O": (0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e),
    "P": (0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10),
    "Q": (0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d),
    "R": (0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11),
    "S": (0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e),
    "T": (0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04),
    "U": (0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e),
    "V": (0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04),
    "W": (0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a),
    "X": (0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11),
    "Y": (0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04),
    "Z": (0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f),
    "0": (0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e),
    "1": (0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e),
    "2": (0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f),
    "3": (0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e),
    "4": (0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02),
    "5": (0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e),
    "6": (0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e),
    "7": (0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08),
    "8": (0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e),
    "9": (0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c),
}

#: Colours of the block faces (tinted per block by its material) and of the slot tiles.
BLOCK_PAPER: tuple[float, float, float] = (1.0, 1.0, 1.0)
BLOCK_INK: tuple[float, float, float] = (0.05, 0.05, 0.07)
BLOCK_EDGE: tuple[float, float, float] = (0.55, 0.55, 0.55)
TILE_PAPER: tuple[float, float, float] = (0.97, 0.96, 0.92)
TILE_INK: tuple[float, float, float] = (0.08, 0.08, 0.10)
TILE_FAINT: tuple[float, float, float] = (0.62, 0.62, 0.64)


def _freetype_font(size: int):  # noqa: ANN202 (PIL types stay optional)
    """Pillow's default scalable font at ``size`` px, or ``None`` without FreeType."""
    try:
        from PIL import ImageFont, features
    except ImportError:
        return None
    if not features.check("freetype2"):
        return None
    font = ImageFont.load_default(size=size)
    return font if hasattr(font, "getbbox") and hasattr(font, "size") else None


def text_mask(text: str, canvas: int, centre: tuple[float, float], height: float,
              width: float | None = None, bold: float = 0.05,
              bitmap: bool = False) -> np.ndarray:
    """Coverage mask (canvas, canvas) in 0..1 of ``text`` drawn in capitals.

    Args:
        text: characters of :data:`BITMAP_FONT` (letters are upper-cased).
        canvas: side of the square image, pixels.
        centre: (column, row) of the centre of the text's ink, pixels.
        height: height of a capital letter, pixels.
        width: largest width of the ink, pixels (the text shrinks to fit); ``None``: no limit.
        bold: stroke width as a fraction of ``height`` (thickens the strokes).
        bitmap: force the built-in 5x7 bitmap font.

    Raises:
        InvalidConfigError: on a character that has no glyph.
    """
    text = text.upper()
    unknown = sorted(set(text) - set(BITMAP_FONT))
    if unknown:
        raise InvalidConfigError(
            f"no glyph for {unknown}; valid characters: {''.join(BITMAP_FONT)}"
        )
    if not bitmap:
        mask = _freetype_mask(text, canvas, centre, height, width, bold)
        if mask is not None:
            return mask
    return _bitmap_mask(text, canvas, centre, height, width, bold)


def _freetype_mask(text: str, canvas: int, centre: tuple[float, float], height: float,
                   width: float | None, bold: float) -> np.ndarray | None:
    probe = _freetype_font(100)
    if probe is None:
        return None
    from PIL import Image, ImageDraw

    cap = probe.getbbox("H")
    ink = probe.getbbox(text)
    scale = height / (cap[3] - cap[1])
    if width is not None:
        scale = min(scale, (1.0 - 2.0 * bold) * width / (ink[2] - ink[0]))
    size = max(int(round(100 * scale)), 4)
    font = _freetype_font(size)
    stroke = max(int(round(bold * height)), 0)
    image = Image.new("L", (canvas, canvas), 0)
    draw = ImageDraw.Draw(image)
    # centre the ink box (stroke included) on ``centre``
    box = draw.textbbox((0, 0), text, font=font, stroke_width=stroke)
    origin = (centre[0] - (box[0] + box[2]) / 2.0, centre[1] - (box[1] + box[3]) / 2.0)
    draw.text(origin, text, font=font, fill=255, stroke_width=stroke, stroke_fill=255)
    return np.asarray(image, dtype=float) / 255.0


def _bitmap_mask(text: str, canvas: int, centre: tuple[float, float], height: float,
                 width: float | None, bold: float) -> np.ndarray:
    dot = height / 7.0
    if width is not None:
        dot = min(dot, width / (6 * len(text) - 1))
    grow = bold * 7.0 * dot / 2.0  # each dot grows by this on every side
    left = centre[0] - (6 * len(text) - 1) * dot / 2.0
    top = centre[1] - 3.5 * dot
    mask = np.zeros((canvas, canvas))
    for index, char in enumerate(text):
        for row, bits in enumerate(BITMAP_FONT[char]):
            for col in range(5):
                if bits >> (4 - col) & 1:
                    x0 = left + (6 * index + col) * dot - grow
                    y0 = top + row * dot - grow
                    r0, r1 = int(round(y0)), int(round(y0 + dot + 2 * grow))
                    c0, c1 = int(round(x0)), int(round(x0 + dot + 2 * grow))
                    mask[max(r0, 0):max(r1, 0), max(c0, 0):max(c1, 0)] = 1.0
    return mask


def _paint(image: np.ndarray, mask: np.ndarray, rgb: Rgb) -> None:
    image *= 1.0 - mask[..., None]
    image += mask[..., None] * np.asarray(rgb, float)


def _frame(image: np.ndarray, width: int, rgb: Rgb) -> None:
    image[:width] = image[-width:] = rgb
    image[:, :width] = image[:, -width:] = rgb


def _to_uint8(image: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(image * 255.0), 0, 255).astype(np.uint8)


@lru_cache(maxsize=64)
def letter_image(letter: str, size: int = TEXTURE_SIZE, bitmap: bool = False) -> np.ndarray:
    """A block face (size, size, 3) uint8: a bold dark capital on white, a thin grey edge.

    The capital fills about 70 % of the face so it stays legible at a few pixels; the face is
    white so a material tint colours the block while the letter stays dark.
    """
    if letter.upper() not in LETTERS:
        raise InvalidConfigError(f"no block texture for {letter!r}; valid: {LETTERS}")
    image = np.ones((size, size, 3)) * np.asarray(BLOCK_PAPER)
    _paint(image, text_mask(letter, size, (size / 2.0, size / 2.0), 0.64 * size,
                            width=0.8 * size, bold=0.06, bitmap=bitmap), BLOCK_INK)
    _frame(image, max(size // 40, 1), BLOCK_EDGE)
    result = _to_uint8(image)
    result.flags.writeable = False
    return result


@lru_cache(maxsize=64)
def slot_image(number: int, size: int = TEXTURE_SIZE, target: float = 0.66,
               bitmap: bool = False) -> np.ndarray:
    """A crossword slot tile (size, size, 3) uint8.

    A light square with a dark border, the slot ``number`` small and dark in the top-left
    corner (visible when a block fills the slot), the same number large and grey in the middle
    (where the block goes, so it reads from afar while the slot is empty) and a grey outline of
    the block's footprint, ``target`` of the tile's side.
    """
    if not 0 <= number <= 99:
        raise InvalidConfigError(f"slot number {number} is outside 0..99")
    image = np.ones((size, size, 3)) * np.asarray(TILE_PAPER)
    label = str(number)
    inner = target * size
    _paint(image, text_mask(label, size, (size / 2.0, size / 2.0), 0.6 * inner,
                            width=0.8 * inner, bold=0.05, bitmap=bitmap), TILE_FAINT)
    margin = (size - inner) / 2.0
    border = max(size // 32, 1)
    corner = 0.8 * (margin - border)  # label height in the corner
    corner_width = 0.75 * corner * len(label)
    _paint(image, text_mask(label, size, (border + 0.25 * margin + corner_width / 2.0,
                                          border + 0.5 * (margin - border)),
                            corner, width=corner_width, bold=0.08, bitmap=bitmap), TILE_INK)
    low, high = int(round(margin)), int(round(size - margin))
    line = max(size // 64, 1)
    for rows, cols in (((low, low + line), (low, high)), ((high - line, high), (low, high)),
                       ((low, high), (low, low + line)), ((low, high), (high - line, high))):
        image[rows[0]:rows[1], cols[0]:cols[1]] = TILE_FAINT
    _frame(image, border, TILE_INK)
    result = _to_uint8(image)
    result.flags.writeable = False
    return result


def letter_texture_name(letter: str) -> str:
    """Model name of the block texture of ``letter``."""
    return f"letter/{letter.upper()}"


def slot_texture_name(number: int) -> str:
    """Model name of the tile texture of slot ``number``."""
    return f"slot-tile/{number}"


def add_letter_textures(spec: mujoco.MjSpec, letters: str = LETTERS) -> None:
    """Add one block texture per letter of ``letters`` to ``spec``."""
    for letter in letters:
        add_texture(spec, letter_texture_name(letter), letter_image(letter))


def add_slot_textures(spec: mujoco.MjSpec, numbers: Sequence[int]) -> None:
    """Add one tile texture per slot number to ``spec``."""
    for number in numbers:
        add_texture(spec, slot_texture_name(number), slot_image(number))
