"""What a camera image shows, read from the simulator (privileged): the one home of the
sim-oracle's camera-visibility truth.

Every answer that depends on what a role was sent reads it here, whichever agent asked:

* the segmentation of the image sent (geom id per pixel, at the size it was sent; cached
  for one camera, size and simulation time): :meth:`Visibility.segment`;
* which objects it shows (at least the visibility threshold of their pixels, never the
  inside of a closed drawer): :meth:`Visibility.shown`, and their raw visible pixels:
  :meth:`Visibility.pixels` (the gripper occludes what it holds: a render's segmentation
  shows the fingers in front of it);
* the detection truth of one target (its visible mask, empty below the threshold or in a
  closed drawer): :meth:`Visibility.target_mask`;
* the grasp truth of one pose (the closing segment passes through the target, the
  fingertips clear the table): :meth:`Visibility.grasp_truth`, and what the crop a grasp
  judge is shown holds besides the target (:meth:`Visibility.crop`).

The sim-oracle's context owns one (:attr:`agentic_env.oracle.context.OracleContext.sight`);
this module imports nothing of the oracle's answers, so every answer module may use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.oracle.naming import thing_geoms
from agentic_env.visualize import resize_nearest

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv

#: Fingertips lower than this above the table (m) mean the grasp collides with the table.
TABLE_CLEARANCE = 0.002
#: Radius (m, horizontal) about the grasp point of the local cloud a grasp judge is shown
#: (the agents' :data:`agentic_env.agents.perception.drawing.RENDER_RADIUS`; a test keeps
#: them equal, the oracle does not import the drawing code).
CROP_RADIUS = 0.12


@dataclass(frozen=True)
class CropSight:
    """What the crop a grasp judge is shown holds besides its target.

    Attributes:
        neighbours: other task objects whose body centre lies within :data:`CROP_RADIUS`
            (m, horizontal) of the grasp point: clutter the crop shows (>= 0).
        occluded: share in [0, 1] of the target's outline in the shoulder image (its mask's
            one-pixel outer ring) that other task objects cover or touch: occlusion of the
            target where its cloud was taken (0: free all round; the target unseen: 1).
    """

    neighbours: int
    occluded: float


def view_of(images: Iterable[Any], fields: Mapping[str, Any]) -> tuple[str, tuple[int, int]]:
    """The camera and (height, width) of the image a query sent: its first camera image
    (``shoulder_rgb`` -> ``shoulder``), else the query's ``camera`` and ``image_size``
    fields (default: the shoulder camera at its own size, ``(0, 0)``)."""
    for image in images:
        name = str(getattr(image, "name", ""))
        if name.endswith("_rgb"):
            height, width = np.asarray(image.pixels).shape[:2]
            return name.removesuffix("_rgb"), (int(height), int(width))
    height, width = (int(v) for v in fields.get("image_size", (0, 0)))
    return str(fields.get("camera", "shoulder")), (height, width)


class Visibility:
    """The camera-visibility truth of one episode's simulator (see the module docstring).

    Args:
        env: the simulator (privileged).
        min_visible_px: an object with fewer pixels than this in the image sent is not
            seen (>= 1).
        facts: the true PDDL facts now, lower case, written ``p a b``.
    """

    def __init__(self, env: SimEnv, min_visible_px: int,
                 facts: Callable[[], set[str]]) -> None:
        self._env = env
        self.min_visible_px = max(int(min_visible_px), 1)
        self._facts = facts
        self._cache: tuple[tuple[str, int, int, float], np.ndarray] | None = None

    def segment(self, camera: str, width: int, height: int) -> np.ndarray:
        """Geom id of every pixel of ``camera`` at ``width`` x ``height`` px (0, 0: the
        camera's own size), -1 where no geom is."""
        env = self._env
        key = (camera, width, height, float(env.data.time))
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        ids = env.segmentation(camera)
        if width > 0 and height > 0 and (height, width) != ids.shape:
            ids = resize_nearest(ids, width, height)  # the image was sent at another size
        self._cache = (key, ids)
        return ids

    def in_closed_drawer(self, target: str, part: str = "object") -> bool:
        """Whether ``target``'s ``part`` is inside a closed drawer (no camera sees it)."""
        facts = self._facts()
        closed = {f.split()[1] for f in facts if f.startswith("drawer-closed ")}
        return (target in closed and part == "interior") or any(
            f"in-drawer {target} {drawer}" in facts for drawer in closed)

    def target_mask(self, segmentation: np.ndarray, target: str,
                    part: str = "object") -> np.ndarray:
        """``target``'s ``part``'s visible pixels in ``segmentation`` (H, W) bool: none when
        fewer than the threshold or inside a closed drawer (the detection truth)."""
        mask = np.isin(segmentation, thing_geoms(self._env, target, part))
        if self.in_closed_drawer(target, part) or mask.sum() < self.min_visible_px:
            return np.zeros_like(mask)
        return mask

    def pixels(self, names: Iterable[str], camera: str,
               size: tuple[int, int]) -> dict[str, int]:
        """Visible pixels of each of ``names`` that has geometry of its own in the image of
        ``camera`` at ``size`` (height, width; 0, 0: the camera's own): raw counts, 0 inside
        a closed drawer; names without geometry (a slot, a pose, the gripper) are left out."""
        segmentation = self.segment(camera, size[1], size[0])
        counts = {}
        for name in names:
            geoms = thing_geoms(self._env, name)
            if geoms:
                counts[name] = 0 if self.in_closed_drawer(name) \
                    else int(np.isin(segmentation, geoms).sum())
        return counts

    def shown(self, names: Iterable[str], camera: str, size: tuple[int, int]) -> set[str]:
        """Those of ``names`` the image of ``camera`` at ``size`` (height, width; 0, 0: the
        camera's own) shows: at least the threshold of their pixels, and not inside a closed
        drawer. A name with no geometry of its own (a slot, a pose: a region of something
        else) is kept."""
        names = list(names)
        counts = self.pixels(names, camera, size)
        return {name for name in names
                if name not in counts or counts[name] >= self.min_visible_px}

    def grasp_truth(self, target: str, pose: np.ndarray) -> tuple[bool, bool]:
        """(the closing segment passes through the target, the fingertips clear the table)
        for a TCP ``pose`` (4, 4), robot base frame, m."""
        from agentic_env.robot.constants import TCP_TO_FINGERTIP
        from agentic_env.sim.state import body_box

        scene = self._env.scene_state
        try:
            box = body_box(scene, target)
        except KeyError:
            return False, True
        tcp = pose[:3, 3]
        inside = bool(np.all(tcp[:2] >= box.low[:2] - 0.005)
                      and np.all(tcp[:2] <= box.high[:2] + 0.005)
                      and box.low[2] - 0.01 <= tcp[2] <= box.high[2] + TCP_TO_FINGERTIP + 0.01)
        fingertip = tcp + pose[:3, 2] * TCP_TO_FINGERTIP
        return inside, bool(fingertip[2] > TABLE_CLEARANCE)

    def crop(self, target: str, pose: np.ndarray, others: Iterable[str]) -> CropSight:
        """What the crop about a grasp ``pose`` (4, 4, base frame, m) of ``target`` holds
        besides it, among the task objects ``others`` (:class:`CropSight`)."""
        scene = self._env.scene_state
        tcp = np.asarray(pose, float)[:3, 3]
        others = [o for o in others if o != target]
        near = 0
        for other in others:
            try:
                where = scene.body_position(other)
            except KeyError:
                continue
            near += float(np.linalg.norm(np.asarray(where)[:2] - tcp[:2])) < CROP_RADIUS
        segmentation = self.segment("shoulder", 0, 0)
        mask = np.isin(segmentation, thing_geoms(self._env, target))
        if not mask.any():
            return CropSight(near, 1.0)
        ring = _dilate(mask) & ~mask
        geoms = [g for other in others for g in thing_geoms(self._env, other)]
        covered = np.isin(segmentation[ring], geoms).mean() if ring.any() else 0.0
        return CropSight(near, float(covered))


def _dilate(mask: np.ndarray) -> np.ndarray:
    """``mask`` (H, W) bool grown by one pixel (4-neighbourhood)."""
    grown = mask.copy()
    grown[1:, :] |= mask[:-1, :]
    grown[:-1, :] |= mask[1:, :]
    grown[:, 1:] |= mask[:, :-1]
    grown[:, :-1] |= mask[:, 1:]
    return grown
