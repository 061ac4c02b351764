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

A frame's windows are recomputed in two stages, each over its own reach: the signal fields
(incidence, noise std, weak-return and mixed-pixel masks; :data:`~.depth_tof.SIGNAL_REACH`,
8 px) around the changed tiles, then the base depth (multipath's local mean,
:attr:`~.depth_tof.TofDepthModel.multipath_reach`, 12 px at 640 px) around every pixel whose
depth or mask changed: the costly signal stage covers the changed tiles plus 16 px where one
window over the whole reach took 48. The frames' fields live in this object's own arrays,
updated in place; from the static scene they are first restored where an earlier frame
changed them, not copied whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from agentic_env.sim.realism.depth_tof import (
    FIELD_REACH,
    SIGNAL_REACH,
    TofDepthModel,
    TofFields,
)
from agentic_env.sim.realism.surfaces import SurfaceMap, SurfaceSample

#: Edge, pixels, of the tiles the changed inputs are found in (even).
TILE = 8
#: Above this share of the image in windows, one whole-image pass is cheaper.
_WHOLE_IMAGE_SHARE = 0.7
#: A window: the image rows and columns whose fields are taken, then those computed.
Window = tuple[tuple[slice, slice], tuple[slice, slice]]


def changed_windows(changed: np.ndarray, reach: int = FIELD_REACH, tile: int = TILE,
                    spread: int | None = None) -> list[Window]:
    """Windows of the image covering every pixel within ``spread`` pixels (default
    ``reach``) of a ``changed`` one ((H, W) bool): per connected group of tiles (``tile``
    pixels, even) holding a changed pixel and their neighbours, (the rows and columns to
    take, the rows and columns to compute them from: those widened by ``reach`` pixels, even,
    within the image). Empty when nothing changed."""
    return tile_windows(changed_tiles(changed, tile), changed.shape, reach, tile, spread)


def changed_tiles(changed: np.ndarray, tile: int = TILE) -> np.ndarray:
    """(ceil(H / tile), ceil(W / tile)) uint8, 1 where the tile of ``changed`` ((H, W) bool)
    holds a changed pixel."""
    height, width = changed.shape
    rows, cols = -(-height // tile), -(-width // tile)
    if (rows * tile, cols * tile) != changed.shape:
        changed = np.pad(changed, ((0, rows * tile - height), (0, cols * tile - width)))
    changed = np.ascontiguousarray(changed)
    if tile == 8:
        # a tile row's 8 bytes read as one 64-bit word: OR over the tile's 8 rows
        words = changed.view(np.uint64).reshape(rows, tile, cols)
        return (np.bitwise_or.reduce(words, axis=1) != 0).view(np.uint8)
    # two axis-wise maxima of the 0/1 bytes: ~10x numpy's any over both tile axes at once
    tiles = changed.view(np.uint8).reshape(rows, tile, cols * tile).max(axis=1)
    return tiles.reshape(rows, cols, tile).max(axis=2)


def tile_windows(tiles: np.ndarray, shape: tuple[int, int], reach: int = FIELD_REACH,
                 tile: int = TILE, spread: int | None = None) -> list[Window]:
    """:func:`changed_windows` of the :func:`changed_tiles` ``tiles`` of an image of
    ``shape`` (H, W)."""
    if not tiles.any():
        return []
    height, width = shape
    grow = -(-(reach if spread is None else spread) // tile)
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
    #: This object's own fields arrays (the frames' after the first change), and the
    #: tiles (:func:`changed_tiles`' grid, 1 = so) where they may differ from the static
    #: scene's.
    _work: TofFields | None = field(default=None, init=False)
    _dirty: np.ndarray | None = field(default=None, init=False)

    @property
    def uses_grey(self) -> bool:
        """Whether the frames depend on the luma (ambient infrared beyond the rated one)."""
        return self.model.uses_grey

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
            static_grey = grey.copy() if self.uses_grey else None
            self._static = _Baseline(static, static_grey,
                                     model.fields(static, grey, surfaces.albedo(static)))
            self._last = self._static
        area, baseline, tiles, windows = self._nearest_baseline(depth, grey)
        if not windows:
            return baseline.fields
        if area > _WHOLE_IMAGE_SHARE * depth.size:
            frame = self._work = model.fields(depth, grey, surfaces.albedo(depth))
            self._dirty = np.ones_like(tiles)
        else:
            # the previous frame's arrays are this class's own (updated in place); from the
            # static scene, they are first made its copy again where they differ from it
            work = (self._work if baseline is not self._static and self._work is not None
                    else self._restored())
            frame = self._update(work, depth, grey, tiles, windows)
        self._last = _Baseline(depth.copy(), grey.copy() if self.uses_grey else None, frame)
        return frame

    def _restored(self) -> TofFields:
        """:attr:`_work` made equal to the static scene's fields (a copy of them at first;
        after, only around its :attr:`_dirty` tiles copied back)."""
        static = self._static.fields if self._static is not None else None
        if static is None:
            raise RuntimeError("no baseline: the static scene's fields come first")
        names = ("base", "sigma", "invalid", "edge", "nearest", "farthest")
        if self._work is None:
            self._work = TofFields(**{name: getattr(static, name).copy() for name in names})
        elif self._dirty is not None:
            for region, _ in tile_windows(self._dirty, static.base.shape, reach=0):
                for name in names:
                    getattr(self._work, name)[region] = getattr(static, name)[region]
            self._work.edited()
        self._dirty = None
        return self._work

    def _nearest_baseline(self, depth: np.ndarray, grey: np.ndarray
                          ) -> tuple[int, _Baseline, np.ndarray, list[Window]]:
        """Of the previous frame and the static scene, the baseline whose windows around
        the frame's changes (``depth`` m, ``grey`` luma) compute the fewest pixels of
        :meth:`~.depth_tof.TofDepthModel.signal_fields`: (that count, the baseline, the
        :func:`changed_tiles` of the frame against it, its windows); the previous frame
        first, and alone when the frame equals it."""
        choice: tuple[int, _Baseline, np.ndarray, list[Window]] | None = None
        for baseline in dict.fromkeys((self._last, self._static)):  # each once
            if baseline is None:
                continue
            changed = depth != baseline.depth
            if baseline.grey is not None:
                changed |= grey != baseline.grey
            tiles = changed_tiles(changed)
            windows = tile_windows(tiles, depth.shape, SIGNAL_REACH)
            area = _window_area(windows)
            if choice is None or area < choice[0]:
                choice = (area, baseline, tiles, windows)
            if not windows:
                break
        if choice is None:
            raise RuntimeError("no baseline: the static scene's fields come first")
        return choice

    def _update(self, fields: TofFields, depth: np.ndarray, grey: np.ndarray,
                tiles: np.ndarray, windows: list[Window]) -> TofFields:
        """:attr:`_work`'s ``fields`` with the frame's own (``depth`` m, ``grey`` luma,
        (H, W), differing from ``fields``' inputs in the :func:`changed_tiles` ``tiles``),
        its arrays overwritten in place, in two stages: the signal fields in ``windows``
        (those of the tiles at :data:`SIGNAL_REACH`), then the base depth in windows around
        every pixel within its reach of a changed input or mask (the weak-return mask changes
        at most :data:`SIGNAL_REACH` pixels from a changed pixel). The tiles written around
        join :attr:`_dirty`."""
        model, surfaces = self.model, self.surfaces
        names = ("sigma", "invalid", "edge", "nearest", "farthest")
        for taken, computed in windows:
            rows, cols = computed
            # the window's own contiguous copy: numpy's passes over a strided view of the
            # image cost ~3x
            window = np.ascontiguousarray(depth[computed])
            part = model.signal_fields(window, grey[computed],
                                       surfaces.albedo(window, computed),
                                       origin=(rows.start, cols.start))
            inner = _inner(taken, computed)
            for name, array in zip(names, part, strict=True):
                getattr(fields, name)[taken] = array[inner]
        reach = model.multipath_reach
        spread = SIGNAL_REACH + reach
        for taken, computed in tile_windows(tiles, depth.shape, reach, spread=spread):
            base = model.base_depth(np.ascontiguousarray(depth[computed]),
                                    np.ascontiguousarray(fields.invalid[computed]))
            fields.base[taken] = base[_inner(taken, computed)]
        # every region written is a box around a group of these tiles (the signal fields'
        # inside the base depth's)
        grow = -(-spread // TILE)
        written = cv2.dilate(tiles, np.ones((2 * grow + 1, 2 * grow + 1), np.uint8))
        self._dirty = written if self._dirty is None else np.bitwise_or(self._dirty, written)
        fields.edited()
        return fields


def _inner(taken: tuple[slice, slice], computed: tuple[slice, slice]) -> tuple[slice, slice]:
    """The rows and columns ``taken`` of the image as slices of the window ``computed``."""
    rows, cols = computed
    return (slice(taken[0].start - rows.start, taken[0].stop - rows.start),
            slice(taken[1].start - cols.start, taken[1].stop - cols.start))
