"""Collision geometry of the fin-ray gripper, read from the project's MJCF model.

All boxes are axis-aligned in the **TCP frame**: origin at the TCP, z = approach direction
(towards the object), y = closing direction, x = y cross z; metres. The model's finger
carriages slide along +-y, so a finger's boxes move by +-width/2 with the opening.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agentic_env.robot.model import gripper_rest_boxes

_PALM_GEOMS = ("coupling", "servo_housing", "d405_shell")
_FINGER_GEOMS = ("carriage", "middle_pad", "tip_pad")


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in the TCP frame: ``centre`` (3,) and ``half`` extents (3,), m."""

    centre: np.ndarray
    half: np.ndarray


@dataclass(frozen=True)
class GripperGeometry:
    """The gripper's colliding parts as TCP-frame boxes.

    Attributes:
        left_finger: boxes of the +y finger (carriage, middle pad, tip pad) at zero opening.
        right_finger: the same for the -y finger.
        palm: boxes of the parts that do not move (flange coupling, servo housing, wrist
            camera shell; the round coupling is boxed by its bounding box).
        max_opening: widest distance between the pads, m.
        fingertip_depth: distance from the TCP to the fingertips along the approach, m.
        pad_length: extent of the pads along the approach (middle and tip pad together), m.
        pad_half_width: half extent of the pads along the TCP x axis, m.
    """

    left_finger: tuple[Box, ...]
    right_finger: tuple[Box, ...]
    palm: tuple[Box, ...]
    max_opening: float

    @property
    def fingertip_depth(self) -> float:
        """TCP to fingertip along the approach axis, m."""
        return float(max(b.centre[2] + b.half[2] for b in self.left_finger))

    @property
    def pad_top(self) -> float:
        """Approach coordinate of the pads' end nearest the palm (negative: behind the TCP)."""
        return float(min(b.centre[2] - b.half[2] for b in self.left_finger[1:]))

    @property
    def pad_length(self) -> float:
        """Length of the pads along the approach, m."""
        return self.fingertip_depth - self.pad_top

    @property
    def pad_half_width(self) -> float:
        """Half extent of the pads along the TCP x axis, m."""
        return float(max(b.half[0] for b in self.left_finger[1:]))

    @property
    def palm_depth(self) -> float:
        """Approach coordinate of the palm's face nearest the object (negative), m."""
        return float(max(b.centre[2] + b.half[2] for b in self.palm))

    def boxes(self, opening: float) -> tuple[np.ndarray, np.ndarray]:
        """Centres (B, 3) and half extents (B, 3) of every box with the pads ``opening`` m
        apart; the fingers come first (the first :attr:`n_finger_boxes`)."""
        centres, halves = self.boxes_at(np.array([opening], dtype=float))
        return centres[0], halves

    def boxes_at(self, openings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`boxes` for many openings (H,) m at once: centres (H, B, 3) and the half
        extents (B, 3), which do not change with the opening."""
        parts = (*self.left_finger, *self.right_finger, *self.palm)
        centres = np.array([b.centre for b in parts])
        halves = np.array([b.half for b in parts])
        # +1 for the left finger's boxes (they move by +opening/2 along y), -1 for the right's
        side = np.repeat([1.0, -1.0, 0.0], [len(self.left_finger), len(self.right_finger),
                                            len(self.palm)])
        shift = np.zeros((len(openings), 1, 3))
        shift[:, 0, 1] = np.asarray(openings, dtype=float) / 2.0
        return centres + side[:, None] * shift, halves

    @property
    def n_finger_boxes(self) -> int:
        """How many of :meth:`boxes` belong to the fingers (the rest is the palm)."""
        return len(self.left_finger) + len(self.right_finger)


@lru_cache(maxsize=1)
def gripper_geometry() -> GripperGeometry:
    """The geometry of ``assets/finray_gripper.xml`` at rest (fingers straight, closed)."""
    sides = tuple(f"{side}_{name}" for side in ("left", "right") for name in _FINGER_GEOMS)
    boxes, opening = gripper_rest_boxes((*sides, *_PALM_GEOMS))

    def box(name: str) -> Box:
        return Box(*boxes[name])

    return GripperGeometry(
        left_finger=tuple(box(f"left_{name}") for name in _FINGER_GEOMS),
        right_finger=tuple(box(f"right_{name}") for name in _FINGER_GEOMS),
        palm=tuple(box(name) for name in _PALM_GEOMS),
        max_opening=opening,
    )


def points_in_boxes(local: np.ndarray, centres: np.ndarray, halves: np.ndarray,
                    margin: float = 0.0) -> np.ndarray:
    """Which points lie inside which box.

    Args:
        local: (..., N, 3) points in the boxes' frame.
        centres, halves: (B, 3) boxes, or (..., N, B, 3): a set of boxes per point.
        margin: inflation of every box, m.

    Returns:
        (..., N, B) bool.
    """
    gap = np.abs(local[..., :, None, :] - centres) - halves - margin
    return np.all(gap <= 0.0, axis=-1)


def distance_to_boxes(local: np.ndarray, centres: np.ndarray, halves: np.ndarray) -> np.ndarray:
    """Euclidean distance (..., N) from each point ``local`` (..., N, 3) to the nearest box
    (0 inside), m; boxes as in :func:`points_in_boxes`."""
    gap = np.maximum(np.abs(local[..., :, None, :] - centres) - halves, 0.0)
    return np.min(np.linalg.norm(gap, axis=-1), axis=-1)
