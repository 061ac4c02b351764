"""How loose an emulated detector's box is: each edge of the tight box displaced at random,
scaled to the box's size, so that the mean IoU of its boxes is the model's measured one.

AgenticLab Table II reports per model a pointing success rate and a mean box IoU over the
same detections (App. B: IoU of the predicted box with the annotated SAM box, averaged over
21 images x 3 runs). A box drawn around another object, or none, has an IoU of about 0 with
the target's (Sec. VI-B: Qwen's boxes are "accurate when grounding succeeds yet prone to
complete misidentification"; in every row of Table II the IoU is below the pointing rate),
so the mean IoU of a *right* detection is ``box_iou / pointing`` (:func:`right_mean`).

A :class:`BoxModel` draws a right detection's box from the tight box of the target's visible
pixels (``(x0, y0, x1, y1)``, pixels of the image sent, exclusive upper bounds):

* each of the four edges moves independently: outward with probability ``grow``, else
  inward; by ``scale * u`` of the box's width (left, right edges) or height (top, bottom),
  ``u`` uniform in [0, 1), an inward move at most ``max_shrink`` of that size;
* the offsets are in units of the box's own size because IoU is scale invariant: the IoU
  drawn does not depend on how large the target appears, as one IoU per model (over
  objects of every size) assumes;
* ``scale`` is solved (bisection, :func:`solve_scale`) so that the mean IoU over a fixed
  sample of :data:`CALIBRATION_DRAWS` draws (seed :data:`CALIBRATION_SEED`) of a box in
  continuous coordinates is the wanted mean: agreement by construction; the returned box is
  then rounded to whole pixels and clipped to the image, which the mean does not include
  (a measurement on rendered scenes shows it).

The model's box is applied to every box its detector returns, a wrong object's too (the
model draws boxes no better on the wrong object); the point is untouched (it stays the
segmentation's, its error the wrong-object draw).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from agentic_env.oracle.odds import solve_increasing

#: Draws of the fixed sample the scale is solved on.
CALIBRATION_DRAWS = 1 << 15
#: Seed of that sample.
CALIBRATION_SEED = 0
#: Largest scale searched (an edge displaced by up to 10 box sizes: mean IoU about 0.01).
MAX_SCALE = 10.0


def right_mean(box_iou: float, pointing: float) -> float:
    """The mean IoU of a right detection's box: the mean over all detections ``box_iou``
    (wrong ones counted at IoU 0) over the pointing success rate ``pointing``, at most 1
    (1 when nothing is pointed at rightly: no right box is ever drawn)."""
    return 1.0 if pointing <= 0.0 else min(box_iou / pointing, 1.0)


@cache
def _sample(draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixed calibration sample: (draws, 4) magnitudes ``u`` and direction coins."""
    rng = np.random.default_rng(seed)
    return rng.random((draws, 4)), rng.random((draws, 4))


def _offsets(scale: float, grow: float, max_shrink: float, magnitudes: np.ndarray,
             coins: np.ndarray) -> np.ndarray:
    """Outward offsets (..., 4) of the left, top, right, bottom edges in units of the box's
    size along their axis (negative: inward)."""
    outward = coins < grow
    return np.where(outward, scale * magnitudes, -np.minimum(scale * magnitudes, max_shrink))


def unit_iou(offsets: np.ndarray) -> np.ndarray:
    """IoU (...,) with the unit box [0, 1] x [0, 1] of the boxes whose edges are moved
    outward by ``offsets`` (..., 4: left, top, right, bottom, units of the box's size)."""
    x0, y0 = -offsets[..., 0], -offsets[..., 1]
    x1, y1 = 1.0 + offsets[..., 2], 1.0 + offsets[..., 3]
    width = np.clip(np.minimum(x1, 1.0) - np.maximum(x0, 0.0), 0.0, None)
    height = np.clip(np.minimum(y1, 1.0) - np.maximum(y0, 0.0), 0.0, None)
    inter = width * height
    return inter / ((x1 - x0) * (y1 - y0) + 1.0 - inter)


def mean_unit_iou(scale: float, grow: float, max_shrink: float) -> float:
    """Mean IoU over the fixed calibration sample at ``scale`` (continuous coordinates)."""
    magnitudes, coins = _sample(CALIBRATION_DRAWS, CALIBRATION_SEED)
    return float(unit_iou(_offsets(scale, grow, max_shrink, magnitudes, coins)).mean())


@cache
def solve_scale(mean_iou: float, grow: float, max_shrink: float) -> float:
    """The scale whose mean IoU over the calibration sample is ``mean_iou`` (in (0, 1]; 0
    for 1: the tight box). The mean falls as the scale grows (every draw's IoU does)."""
    if mean_iou >= 1.0:
        return 0.0
    return solve_increasing(lambda s: -mean_unit_iou(s, grow, max_shrink), -mean_iou,
                            0.0, MAX_SCALE, steps=34)


@dataclass(frozen=True)
class BoxModel:
    """A model's loose boxes (see the module docstring).

    Args:
        mean_iou: the mean IoU, in (0, 1], of a right detection's box with the tight box.
        grow: probability in [0, 1] that an edge moves outward.
        max_shrink: most an edge moves inward, share in [0, 0.5) of the box's size.
    """

    mean_iou: float
    grow: float
    max_shrink: float

    @property
    def scale(self) -> float:
        """The solved scale: largest edge offset, in units of the box's size."""
        return solve_scale(self.mean_iou, self.grow, self.max_shrink)

    def offsets(self, rng: np.random.Generator, draws: int = 1) -> np.ndarray:
        """``draws`` outward edge offsets (draws, 4: left, top, right, bottom), units of the
        box's size (negative: inward), from ``rng``."""
        return _offsets(self.scale, self.grow, self.max_shrink, rng.random((draws, 4)),
                        rng.random((draws, 4)))

    def draw(self, box: Sequence[int], rng: np.random.Generator,
             shape: tuple[int, int]) -> list[int]:
        """A loose box around the tight ``box`` (x0, y0, x1, y1; pixels of the image sent,
        exclusive upper bounds), rounded to whole pixels and clipped to an image of
        ``shape`` (height, width); at least 2 px a side where the tight box is."""
        if self.mean_iou >= 1.0:
            return [int(v) for v in box]
        left, top, right, bottom = self.offsets(rng)[0]
        x0, y0, x1, y1 = (float(v) for v in box)
        width, height = x1 - x0, y1 - y0
        height_px, width_px = shape
        u0 = int(np.clip(round(x0 - left * width), 0, width_px))
        v0 = int(np.clip(round(y0 - top * height), 0, height_px))
        u1 = int(np.clip(round(x1 + right * width), 0, width_px))
        v1 = int(np.clip(round(y1 + bottom * height), 0, height_px))
        u0, u1 = _at_least(u0, u1, min(2, int(width)), width_px)
        v0, v1 = _at_least(v0, v1, min(2, int(height)), height_px)
        return [u0, v0, u1, v1]


def _at_least(low: int, high: int, size: int, limit: int) -> tuple[int, int]:
    """``low``..``high`` widened about its middle to at least ``size`` px within [0,
    ``limit``]."""
    if high - low >= size:
        return low, high
    low = min(max((low + high - size) // 2, 0), max(limit - size, 0))
    return low, low + size
