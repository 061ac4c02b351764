"""The Azure Kinect's depth effects for a camera fixed to the world, reusing the static scene's.

Everything of the ToF model that does not depend on a frame's random draws
(:meth:`~.depth_tof.TofDepthModel.fields`: incidence, signal, weak-return and mixed-pixel
masks, multipath) is a function of the exact depth, the surfaces' albedo and (outdoors) the
render's luma, each field at a pixel depending on those inputs within
:data:`~.depth_tof.FIELD_REACH` pixels of it only. For the shoulder camera most of the image
is the static scene, whose depth and albedo are the same in every frame of the episode
(:class:`~.surfaces.SurfaceMap`): :class:`StaticTofDepth` computes the fields of the static
scene once per episode and, each frame, again only in windows around the tiles where the
frame's inputs differ from the static scene's (the moving bodies: the arm, the objects), so
that its frame is the one :meth:`~.depth_tof.TofDepthModel.apply` gives, at a fraction of
its cost. The previous frame is a second baseline, its fields kept with its inputs: what did
not move since (objects at rest, a still arm) needs no recompute either, and each frame takes
the baseline that leaves less to recompute. The random draws (noise, mixed pixels) stay per
frame and whole-image.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from agentic_env.sim.realism.depth_tof import FIELD_REACH, TofDepthModel, TofFields
from agentic_env.sim.realism.surfaces import SurfaceMap, SurfaceSample

#: Edge, pixels, of the tiles the changed inputs are found in (even).
TILE = 8
#: Above this share of the image in windows, one whole-image pass is cheaper.
_WHOLE_IMAGE_SHARE = 0.7
#: A window: the image rows and columns whose fields are taken, then those computed.
Window = tuple[tuple[slice, slice], tuple[slice, slice]]


def changed_windows(changed: np.ndarray, reach: int = FIELD_REACH, tile: int = TILE
                    ) -> list[Window]:
    """Windows of the image covering every pixel within ``reach`` pixels of a ``changed``
    one ((H, W) bool): per connected group of tiles (``tile`` pixels, even) holding a
    changed pixel and their neighbours, (the rows and columns to take, the rows and
    columns to compute them from: those widened by ``reach`` pixels, even, within the
    image). Empty when nothing changed."""
    height, width = changed.shape
    rows, cols = -(-height // tile), -(-width // tile)
    if (rows * tile, cols * tile) != changed.shape:
        changed = np.pad(changed, ((0, rows * tile - height), (0, cols * tile - width)))
    # two axis-wise maxima of the 0/1 bytes: ~10x numpy's any over both tile axes at once
    tiles = changed.view(np.uint8).reshape(rows, tile, cols * tile).max(axis=1)
    tiles = tiles.reshape(rows, cols, tile).max(axis=2)
    if not tiles.any():
        return []
    grow = -(-reach // tile)
    tiles = cv2.dilate(tiles, np.ones((2 * grow + 1, 2 * grow + 1), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(tiles, connectivity=8)
    windows = []
    for x, y, w, h, _ in stats[1:count]:
        top, left = int(y) * tile, int(x) * tile
        bottom, right = min(int(y + h) * tile, height), min(int(x + w) * tile, width)
        taken = (slice(top, bottom), slice(left, right))
        computed = (slice(max(top - reach, 0), min(bottom + reach, height)),
                    slice(max(left - reach, 0), min(right + reach, width)))
        windows.append((taken, computed))
    return windows


@dataclass(frozen=True, eq=False)
class _Baseline:
    """A frame whose fields are known: its inputs (exact depth, m; luma, 8-bit, or ``None``
    where the fields do not depend on it), each (H, W), and its :class:`TofFields`."""

    depth: np.ndarray
    grey: np.ndarray | None
    fields: TofFields


def _window_area(windows: list[Window]) -> int:
    """Pixels the ``windows`` compute their fields from."""
    return sum((rows.stop - rows.start) * (cols.stop - cols.start)
               for _, (rows, cols) in windows)


@dataclass(eq=False)
class StaticTofDepth:
    """The ToF depth model of a camera fixed to the world, for one episode: a
    :class:`~.sensors.DepthModel` whose frames are :meth:`TofDepthModel.apply`'s with the
    albedo of ``surfaces`` (module docstring).

    Attributes:
        model: the episode's unit of the device.
        surfaces: what the camera sees of the static scene this episode.
    """

    model: TofDepthModel
    surfaces: SurfaceMap
    _static: _Baseline | None = field(default=None, init=False)
    _last: _Baseline | None = field(default=None, init=False)

    @property
    def _uses_grey(self) -> bool:
        """Whether the fields depend on the luma (ambient infrared beyond the rated one)."""
        return self.model.ambient_ratio > 0

    def apply(self, depth: np.ndarray, grey: np.ndarray, rng: np.random.Generator,
              noise: np.ndarray, surface: SurfaceSample) -> np.ndarray:
        """As :meth:`TofDepthModel.apply` with ``surface`` the albedo of :attr:`surfaces`
        at ``depth`` (the ``surface`` given is not read)."""
        return self.model.finish(self.fields(depth, grey), rng, noise)

    def fields(self, depth: np.ndarray, grey: np.ndarray) -> TofFields:
        """:meth:`TofDepthModel.fields` of a frame (exact ``depth`` m and ``grey`` luma, (H, W))
        with the albedo of :attr:`surfaces`: a baseline's (the static scene's or the previous
        frame's, whichever differs in less), recomputed in the windows around the tiles where
        the inputs differ from it. Not to be modified, and valid until the next call: a
        baseline's own arrays, those of the previous frame updated in place."""
        model, surfaces = self.model, self.surfaces
        if model.width % 2 or model.height % 2:  # windows need the 2 x 2 bins aligned
            return model.fields(depth, grey, surfaces.albedo(depth))
        if self._static is None:
            static = surfaces.static_depth
            static_grey = grey.copy() if self._uses_grey else None
            self._static = _Baseline(static, static_grey,
                                     model.fields(static, grey, surfaces.albedo(static)))
            self._last = self._static
        area, baseline, windows = self._nearest_baseline(depth, grey)
        if not windows:
            return baseline.fields
        if area > _WHOLE_IMAGE_SHARE * depth.size:
            frame = model.fields(depth, grey, surfaces.albedo(depth))
        else:
            # the previous frame's arrays are this class's own: updated in place
            frame = self._update(baseline.fields, depth, grey, windows,
                                 in_place=baseline is not self._static)
        self._last = _Baseline(depth.copy(), grey.copy() if self._uses_grey else None, frame)
        return frame

    def _nearest_baseline(self, depth: np.ndarray, grey: np.ndarray
                          ) -> tuple[int, _Baseline, list[Window]]:
        """Of the previous frame and the static scene, the baseline whose windows around
        the frame's changes (``depth`` m, ``grey`` luma) compute the fewest pixels: (that
        count, the baseline, its windows); the previous frame first, and alone when the
        frame equals it."""
        choice: tuple[int, _Baseline, list[Window]] | None = None
        for baseline in dict.fromkeys((self._last, self._static)):  # each once
            if baseline is None:
                continue
            changed = depth != baseline.depth
            if baseline.grey is not None:
                changed |= grey != baseline.grey
            windows = changed_windows(changed)
            area = _window_area(windows)
            if choice is None or area < choice[0]:
                choice = (area, baseline, windows)
            if not windows:
                break
        if choice is None:
            raise RuntimeError("no baseline: the static scene's fields come first")
        return choice

    def _update(self, fields: TofFields, depth: np.ndarray, grey: np.ndarray,
                windows: list[Window], in_place: bool) -> TofFields:
        """``fields`` with the frame's own (``depth`` m, ``grey`` luma, (H, W)) in
        ``windows``: ``fields`` itself, its arrays overwritten there, when ``in_place``, else
        new arrays (``fields`` not modified)."""
        model, surfaces = self.model, self.surfaces
        names = ("base", "sigma", "invalid", "edge", "nearest", "farthest")
        out = {name: getattr(fields, name) if in_place else getattr(fields, name).copy()
               for name in names}
        for taken, computed in windows:
            rows, cols = computed
            part = model.fields(depth[computed], grey[computed],
                                surfaces.albedo(depth[computed], computed),
                                origin=(rows.start, cols.start))
            inner = (slice(taken[0].start - rows.start, taken[0].stop - rows.start),
                     slice(taken[1].start - cols.start, taken[1].stop - cols.start))
            for name in names:
                out[name][taken] = getattr(part, name)[inner]
        return fields if in_place else TofFields(**out)
