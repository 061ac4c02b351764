"""The sim-oracle's detector: the point and box of a named target in the image a role was
sent, from that render's segmentation, with the role's injected errors (privileged).

Shared by every agent that asks for a detection (AgenticLab's detector, MALLVI's Localizer
and single agent). Only what the image shows is found
(:meth:`~agentic_env.oracle.visibility.Visibility.target_mask`); a wrong answer lands on
another object, of the kind drawn where the oracle weighs kinds (:meth:`Detector.mistaken`),
and its rate may depend on how hard the target is to see (:mod:`agentic_env.oracle.difficulty`).
The box is the tight box of the pixels reported, loosened where the role's model draws loose
boxes (:meth:`~agentic_env.oracle.context.OracleContext.loosen`,
:mod:`agentic_env.oracle.boxes`); the point stays the pixels' own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.oracle.difficulty import same_category, sighting
from agentic_env.oracle.naming import describe, thing_geoms

if TYPE_CHECKING:
    from agentic_env.agents.models.base import ModelQuery
    from agentic_env.oracle.context import OracleContext


def sent_frame(query: ModelQuery) -> np.ndarray | None:
    """The first image ``query`` was sent (8-bit RGB, (H, W, 3)), ``None`` when none was."""
    return query.images[0].pixels if query.images else None


class Detector:
    """Detections answered from one sim-oracle's context.

    Args:
        oracle: the sim-oracle's context (simulator, visibility truth, error draws).
    """

    def __init__(self, oracle: OracleContext) -> None:
        self._oracle = oracle

    def detect(self, fields: Mapping[str, Any], module: str,
               frame: np.ndarray | None = None) -> dict[str, Any]:
        """Point and box of ``fields["target"]`` in the camera image, in pixels whatever
        format the query asked for (the answer says so); a wrong object at ``module``'s
        error rate (of the kind drawn, :meth:`mistaken`, where kinds are weighed).

        Only what the image shows is found: the target's pixels in that render's
        segmentation, none when fewer than the oracle's ``min_visible_px``, and never the
        inside of a closed drawer (its floor, or what lies in it). Where the oracle weighs
        difficulty, the error rate depends on the target's
        :class:`~agentic_env.oracle.difficulty.Sighting` in that image, ``frame`` (the 8-bit
        RGB image sent, ``None`` when there was none) giving its quality. The box (x0, y0,
        x1, y1; exclusive upper bounds) is the tight box of the pixels reported, loosened by
        ``module``'s box model where it has one; the point lies in those pixels' core.
        """
        oracle = self._oracle
        camera = str(fields.get("camera", "shoulder"))
        target = str(fields.get("target", ""))
        part = str(fields.get("part", "object"))
        height, width = (int(v) for v in fields.get("image_size", (0, 0)))
        segmentation = oracle.sight.segment(camera, width, height)
        mask = oracle.sight.target_mask(segmentation, target, part)
        visible = int(mask.sum())
        if oracle.wrong(module, seen=lambda: sighting(
                oracle.env, segmentation, target, visible, max(oracle.min_visible_px, 1),
                frame)):
            kind = oracle.error_kind(module)
            mask = (self._other_mask(segmentation, target) if kind is None
                    else self.mistaken(kind, segmentation, target, mask))
        if not mask.any():
            return {"found": False, "point": None, "box": None,
                    "reasoning": f"no {describe(target)} is visible"}
        rows, cols = np.nonzero(mask)
        box = oracle.loosen(module, [int(cols.min()), int(rows.min()), int(cols.max()) + 1,
                                     int(rows.max()) + 1], mask.shape)
        interior = _erode_to_core(mask)
        rows, cols = np.nonzero(interior)
        centre = np.array([rows.mean(), cols.mean()])
        pick = int(np.argmin((rows - centre[0]) ** 2 + (cols - centre[1]) ** 2))
        return {"found": True, "point": [int(cols[pick]), int(rows[pick])], "box": box,
                "coordinates": "pixels",
                "reasoning": f"the {describe(target)} is at the marked point"}

    def mistaken(self, kind: str, segmentation: np.ndarray, target: str,
                 mask: np.ndarray) -> np.ndarray:
        """The pixels a wrong detection of ``kind`` reports instead of ``mask``: the
        nearest other visible object in the image (``neighbour``), a visible object of the
        target's category (``distractor``, else a neighbour), a patch beside the target
        (``off_object``; anywhere when it is not seen), or nothing (``no_answer``)."""
        if kind == "no_answer":
            return np.zeros_like(mask)
        seen = self._visible_others(segmentation, target)
        if kind == "distractor":
            kin = same_category(self._oracle.env, target)
            seen = [(m, name) for m, name in seen if name in kin] or seen
        if kind in ("neighbour", "distractor") and seen:
            if not mask.any():
                return seen[int(self._oracle.rng.integers(len(seen)))][0]
            centre = np.argwhere(mask).mean(axis=0)
            return min(seen, key=lambda s: float(np.linalg.norm(
                np.argwhere(s[0]).mean(axis=0) - centre)))[0]
        return self._beside(mask)

    def _visible_others(self, segmentation: np.ndarray, target: str
                        ) -> list[tuple[np.ndarray, str]]:
        """(mask, name) of every other task object the image shows enough of."""
        env = self._oracle.env
        masks = ((np.isin(segmentation, thing_geoms(env, other)), other)
                 for other in self._oracle.task.pddl_objects() if other != target)
        return [(m, name) for m, name in masks
                if m.sum() >= max(self._oracle.min_visible_px, 1)]

    def _beside(self, mask: np.ndarray) -> np.ndarray:
        """A 10 x 10 px patch just left or right of ``mask``'s box (a random spot when the
        mask is empty), clipped to the image."""
        rng = self._oracle.rng
        height, width = mask.shape
        patch = np.zeros_like(mask)
        if mask.any():
            rows, cols = np.nonzero(mask)
            row = int(rows.mean()) - 5
            col = (int(cols.max()) + 4 if rng.random() < 0.5 else int(cols.min()) - 14)
        else:
            row = int(rng.integers(height - 10))
            col = int(rng.integers(width - 10))
        row, col = min(max(row, 0), height - 10), min(max(col, 0), width - 10)
        patch[row:row + 10, col:col + 10] = True
        return patch & ~mask

    def _other_mask(self, segmentation: np.ndarray, target: str) -> np.ndarray:
        """Another task object's pixels (more than 20 of them; a random 10 x 10 px patch
        when none shows): an unweighed wrong detection."""
        rng = self._oracle.rng
        others = [o for o in self._oracle.task.pddl_objects() if o != target]
        rng.shuffle(others)
        for other in others:
            mask = np.isin(segmentation, thing_geoms(self._oracle.env, other))
            if mask.sum() > 20:
                return mask
        mask = np.zeros(segmentation.shape, bool)
        row = int(rng.integers(segmentation.shape[0] - 10))
        col = int(rng.integers(segmentation.shape[1] - 10))
        mask[row:row + 10, col:col + 10] = True
        return mask


def _erode_to_core(mask: np.ndarray, steps: int = 4) -> np.ndarray:
    """The mask shrunk by up to ``steps`` pixels (stops before it would vanish)."""
    core = mask
    for _ in range(steps):
        shrunk = core.copy()
        shrunk[1:, :] &= core[:-1, :]
        shrunk[:-1, :] &= core[1:, :]
        shrunk[:, 1:] &= core[:, :-1]
        shrunk[:, :-1] &= core[:, 1:]
        if not shrunk.any():
            break
        core = shrunk
    return core
