"""Depth post-processing as a real camera stack applies it, on simulated and real depth alike.

The agents' cameras give raw depth: the Azure Kinect's time-of-flight depth engine already
invalidates most mixed (flying) pixels at depth edges but lets some through (Microsoft, Azure
Kinect DK depth camera, "Invalidation"), and the RealSense D405's passive stereo leaves holes
where the matcher finds no texture, shadows beside foreground objects and random error that
grows with the square of the range (Intel, "Depth Post-Processing for Intel RealSense D400
Depth Cameras" and librealsense's post-processing filters: decimation, spatial edge-preserving,
temporal and hole-filling filters). :func:`filter_depth` does on one frame what such a stack
does, in three steps whose thresholds scale with the camera's noise at each pixel's range
(:class:`DepthNoise`):

1. **Outlier removal** (flying pixels, salt): a pixel is kept when at least
   :data:`MIN_SUPPORT` of its 8 neighbours lie within its tolerance of it (radius outlier
   removal on the organised cloud). The tolerance is :data:`SUPPORT_SIGMAS` standard
   deviations of the difference of two pixels' random errors plus :data:`SLOPE_FOOTPRINTS`
   pixel footprints ``z / f`` for the surface's slope; on a plane tilted however steeply the
   neighbours along its line of equal depth qualify, at a depth jump the pixels of either
   side have their own side's neighbours, and a lone salt or mixed pixel has none (two
   mixed pixels side by side pass; what stands on the table needs more points than that,
   :func:`~agentic_env.agents.skills.spots.standing_mask`).
2. **Edge-preserving smoothing** (for a camera whose stack smooths, :class:`DepthProfile`:
   the stereo camera's spatial filter): each kept pixel becomes the mean of itself and of the
   opposite pairs of its 8 neighbours (left and right, above and below, the diagonals) that
   both lie within its tolerance and in line with it (their second difference within
   :data:`SUPPORT_SIGMAS` of its noise): a range-gated 3x3 mean that blurs no depth edge,
   crease or curved object's limb, and takes whole pairs only, so it does not pull a pixel
   beside an edge or a hole towards one side of a tilted surface.
3. **Small-hole filling**: a run of at most :data:`MAX_HOLE` invalid pixels along a row,
   then along a column, between two valid pixels of one surface (within the tolerance plus
   the slope over the run) is filled by linear interpolation between them: the scattered
   holes of a stereo matcher on low texture, the speckle of a dim surface. A hole between
   two surfaces (a depth edge, a thin rim whose pixels the depth engine dropped as mixed)
   stays a hole, as do larger ones: what was not seen is not made up.

Depth images follow the observation contract (:mod:`agentic_env.contract.spaces`): (H, W)
metres along the optical axis, 0 = no return. On exact depth (the ideal world) the filter is
close to a no-op: exact neighbours agree, only isolated pixels go and a curved surface's
mean moves by a fraction of a millimetre. Everything is vectorised numpy, once per frame
(:func:`~agentic_env.agents.perception.pointcloud.camera_depth` keeps the result): a 640x480
time-of-flight frame takes about 5-8 ms of one core, a smoothed stereo frame whose holes are
scattered over half of it about 20 ms (``tests/agents/perception/test_depth_filter.py``
bounds both profiles).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentic_env.errors import InvalidConfigError

#: Standard deviations of the difference of two pixels' random errors within which they
#: count as one surface.
SUPPORT_SIGMAS = 3.0
#: Depth change (in pixel footprints ``z / f``) allowed between neighbouring pixels of one
#: surface for its slope, on top of the noise: a 63 degree slope (tan 2) per neighbour; a
#: steeper plane keeps the two neighbours along its line of equal depth, and a curved
#: object's grazing silhouette (a mug's side, where that line runs between pixels) those
#: above and below.
SLOPE_FOOTPRINTS = 2.0
#: Fewest neighbours (of 8) within the tolerance that keep a pixel: a lone pixel (salt, a
#: mixed pixel the depth engine let through) has none; a strip one pixel wide seen edge-on (a
#: mug handle's side, joining the handle to the mug) has one, which is all it tells apart
#: from a pair of mixed pixels.
MIN_SUPPORT = 1
#: Longest run (pixels) of invalid pixels along a row or a column that is filled: the
#: speckle of low texture or of a dim surface, narrower than the objects on the table.
MAX_HOLE = 4


@dataclass(frozen=True)
class DepthNoise:
    """Random error of a depth camera: standard deviation
    ``sqrt((coefficient * z^2)^2 + unit^2 / 12)`` metres at depth ``z`` metres.

    Attributes:
        coefficient: growth of the std with the square of the depth, 1/m (>= 0): the std at
            1 m is ``coefficient`` metres.
        unit: the depth quantum, metres (>= 0): its rounding adds ``unit / sqrt(12)``.
    """

    coefficient: float
    unit: float

    def __post_init__(self) -> None:
        if self.coefficient < 0 or self.unit < 0:
            raise InvalidConfigError(f"depth noise needs coefficient >= 0 and unit >= 0, got "
                                     f"{self.coefficient} and {self.unit}")

    def std(self, depth: np.ndarray) -> np.ndarray:
        """Std (m) of the random error at ``depth`` (m, any shape; float32 out)."""
        z = np.asarray(depth, np.float32)
        spread = np.float32(self.coefficient) * z * z
        spread *= spread
        spread += np.float32(self.unit * self.unit / 12.0)
        return np.sqrt(spread)


def tof_noise(bound: float = 0.017, range_max: float = 3.86, unit: float = 0.001) -> DepthNoise:
    """The Azure Kinect's time-of-flight noise (NFOV unbinned): the datasheet's bound on the
    random error's std, ``bound`` m, reached at the end of the range, ``range_max`` m, for
    the dimmest rated surface, falling with the square of the range (a signal-limited pixel);
    depth in ``unit`` m (the SDK's millimetres). Microsoft, Azure Kinect DK hardware
    specification, "Depth camera supported operating modes"."""
    return DepthNoise(bound / range_max**2, unit)


def stereo_noise(focal: float, baseline: float = 0.018, subpixel: float = 0.08,
                 unit: float = 0.0001) -> DepthNoise:
    """A stereo camera's noise, ``z^2 * subpixel / (focal * baseline)`` (the disparity's
    subpixel error, ``subpixel`` px, propagated to depth; ``focal`` in pixels of the depth
    image, ``baseline`` m), depth in ``unit`` m. Defaults: the RealSense D405 (18 mm
    baseline, 0.1 mm depth unit; D400 series datasheet), subpixel error 0.08 px on a
    textured surface (Grunnet-Jepsen et al., "Best-known-methods for tuning Intel RealSense
    D400 depth cameras for best performance"; it rises towards 0.15-0.2 px on poor texture,
    which the tolerances' three standard deviations still take in)."""
    if focal <= 0 or baseline <= 0:
        raise InvalidConfigError(f"stereo noise needs focal > 0 px and baseline > 0 m, got "
                                 f"{focal} and {baseline}")
    return DepthNoise(subpixel / (focal * baseline), unit)


@dataclass(frozen=True)
class DepthProfile:
    """How a camera's depth is post-processed and read.

    Attributes:
        noise: its random error (the filter's tolerances scale with it).
        smooth: whether its stack smooths it (a stereo camera's spatial filter; a
            time-of-flight depth engine hands over depth its users only invalidate and fill).
        biased: whether a unit's systematic depth error (a time-of-flight camera's, a few
            millimetres) moves the whole table, so that the table's height is measured in
            its cloud rather than taken as z = 0.
    """

    noise: DepthNoise
    smooth: bool
    biased: bool


#: The workcell's cameras (:mod:`agentic_env.contract.workcell`) and their depth devices.
CAMERA_DEVICES = {"shoulder": "Azure Kinect (time of flight)",
                  "wrist": "RealSense D405 (passive stereo)"}


def camera_profile(camera: str, intrinsics: np.ndarray) -> DepthProfile:
    """The depth post-processing of the workcell's ``camera``: ``shoulder``, the Azure
    Kinect (:func:`tof_noise`, not smoothed, its datasheet's systematic error up to 11 mm +
    0.1 % of the distance); ``wrist``, the RealSense D405 (:func:`stereo_noise` with the
    focal length of ``intrinsics`` (3, 3), pixels; smoothed as librealsense's spatial
    filter does; its close views may show a bin's floor rather than the table).

    Raises:
        InvalidConfigError: ``camera`` is not one of :data:`CAMERA_DEVICES`.
    """
    if camera == "shoulder":
        return DepthProfile(tof_noise(), smooth=False, biased=True)
    if camera == "wrist":
        return DepthProfile(stereo_noise(float(np.asarray(intrinsics)[0, 0])), smooth=True,
                            biased=False)
    raise InvalidConfigError(f"no depth model for camera {camera!r}; valid: "
                             f"{', '.join(CAMERA_DEVICES)}")


def height_noise(points: np.ndarray, extrinsics: np.ndarray, noise: DepthNoise) -> np.ndarray:
    """Std (m, (N,)) of the random error of the height (base-frame z) of each point (N, 3),
    base frame, m, that a camera at ``extrinsics`` (4, 4; camera -> base) with ``noise``
    measured: an error of its depth along the optical axis moves a point along its viewing
    ray, ``depth_error * ray_z / depth``."""
    ext = np.asarray(extrinsics, float)
    ray = np.asarray(points, float).reshape(-1, 3) - ext[:3, 3]
    depth = np.maximum(ray @ ext[:3, 2], 1e-6)
    return noise.std(depth).astype(float) * np.abs(ray[:, 2]) / depth


def tolerance(depth: np.ndarray, focal: float, noise: DepthNoise) -> np.ndarray:
    """Largest depth difference (m) between two neighbouring pixels of one surface at
    ``depth`` (m, any shape): :data:`SUPPORT_SIGMAS` stds of their errors' difference plus
    :data:`SLOPE_FOOTPRINTS` pixel footprints ``depth / focal`` (``focal`` in pixels)."""
    z = np.asarray(depth, np.float32)
    allowed = noise.std(z)
    allowed *= np.float32(SUPPORT_SIGMAS * np.sqrt(2.0))
    allowed += z * np.float32(SLOPE_FOOTPRINTS / focal)
    return allowed


def filter_depth(depth: np.ndarray, intrinsics: np.ndarray, noise: DepthNoise,
                 smooth: bool = True) -> np.ndarray:
    """The post-processed depth (H, W) float32 metres, 0 = no return, of a raw ``depth``
    (H, W) metres (0, negative or non-finite = no return) seen through ``intrinsics`` (3, 3)
    pixels, with the camera's ``noise``: outliers removed, edge-preserving smoothing (with
    ``smooth``), small holes filled (see the module docstring). The input is not modified.

    The image is worked on flat, framed by a border of pixels without return, so that each
    neighbour is a constant offset away; masks act by arithmetic, not by selection (a stereo
    camera's holes on a plain surface are scattered at random, and branching on them is
    several times slower).

    Raises:
        InvalidConfigError: ``depth`` is not two-dimensional.
    """
    raw = np.asarray(depth, np.float32)
    if raw.ndim != 2:
        raise InvalidConfigError(f"depth must be an (H, W) image, got shape {raw.shape}")
    k = np.asarray(intrinsics, float)
    focal = float(np.sqrt(k[0, 0] * k[1, 1]))
    framed = np.zeros((raw.shape[0] + 2, raw.shape[1] + 2), np.float32)
    framed[1:-1, 1:-1] = raw
    d = framed.ravel()  # a view
    np.fmax(d, 0.0, out=d)  # negative and NaN: no return
    d[np.isinf(d)] = 0.0
    valid = d > 0
    tol = tolerance(d, focal, noise)  # 0 m away, a pixel without return is never within
    if smooth:  # what the noise allows a second difference
        spread = noise.std(d)
        spread *= np.float32(SUPPORT_SIGMAS * np.sqrt(6.0))

    # radius outlier removal and smoothing in one sweep over the neighbour offsets (a
    # pixel's own tolerance judges its pairs: they differ only across depth edges)
    width = framed.shape[1]
    support, pairs = np.zeros(d.shape, np.uint8), np.zeros(d.shape, np.uint8)
    shift = np.zeros_like(d)
    gap, size, near = np.empty_like(d), np.empty_like(d), np.empty(d.shape, bool)
    for offset in (1, width - 1, width, width + 1):  # right, down-left, down, down-right
        a, b = slice(0, d.size - offset), slice(offset, d.size)
        np.subtract(d[a], d[b], out=gap[a])  # pixel minus its neighbour at +offset
        np.abs(gap[a], out=size[a])
        np.less_equal(size[a], tol[a], out=near[a])
        near[d.size - offset:], gap[d.size - offset:] = False, 0.0  # no pair past the end
        support[a] += near[a]
        support[b] += near[a]
        if smooth:
            # the pixels at +-offset both close and in line with it (their second
            # difference within the noise: no crease, no limb): their mean, the pixel plus
            # half the second difference, is unbiased on a plane however tilted
            both = near[b] & near[a][: d.size - offset]  # at the middle pixel, b
            np.subtract(gap[a][: d.size - offset], gap[b], out=size[b])  # second difference
            both &= np.abs(size[b]) <= spread[b]
            shift[b] += size[b] * both
            pairs[b] += both
    keep = (support >= MIN_SUPPORT) & valid  # (pixels without return agree with another)
    if smooth:  # the mean of the pixel and its pairs: (d + sum of pairs) / (1 + 2 pairs)
        shift /= 2 * pairs + np.float32(1.0)
        d += shift
    d *= keep
    _fill_holes(framed, keep, focal, noise)
    return framed[1:-1, 1:-1].copy()


def _fill_holes(framed: np.ndarray, valid: np.ndarray, focal: float,
                noise: DepthNoise) -> None:
    """Fill, in place, the runs of at most :data:`MAX_HOLE` invalid pixels of the image
    inside ``framed`` (H + 2, W + 2) m (a one-pixel frame around it, 0 where not ``valid``,
    the flat (N,) mask, which the rows' fills join), along its rows, then along its columns
    (a hole the rows left, with the rows' fills as ends); see the module docstring."""
    height, width = framed.shape
    d = framed.ravel()
    inner = np.zeros(framed.shape, bool)
    inner[1:-1, 1:-1] = True
    inner = inner.ravel()
    for along_columns in (False, True):
        holes = (inner & ~valid).reshape(framed.shape)
        if along_columns:  # column by column, each a line of the transposed frame
            holes = holes.T
        flat = holes.ravel()  # a copy for the columns
        change = np.flatnonzero(flat[1:] != flat[:-1]) + 1  # each run's start, then end
        before, ends = change[0::2] - 1, change[1::2]  # the framed lines end in no hole
        span = ends - before  # pixels from the one before a run to the one after it
        short = span <= MAX_HOLE + 1
        before, span = before[short], span[short]
        if along_columns:  # to flat indices of the frame
            column, row = np.divmod(before, height)
            before = row * width + column
        stride = width if along_columns else 1
        after = before + span * stride
        bounded = inner[before] & inner[after]  # not the frame
        before, after, span = before[bounded], after[bounded], span[bounded]
        first, last = d[before], d[after]
        # one surface: within the farther end's tolerance and the slope over the run
        farther = np.maximum(first, last)
        allowed = tolerance(farther, focal, noise)
        allowed += farther * np.float32(SLOPE_FOOTPRINTS / focal) * (span - 1)
        same = np.abs(last - first) <= allowed
        before, first, span = before[same], first[same], span[same]
        rise = (last[same] - first) / span.astype(np.float32)
        # MAX_HOLE writes per run: those past its end repeat its last pixel's value
        gaps = span - 1
        for step in range(1, MAX_HOLE + 1):
            done = np.minimum(gaps, step)
            at = before + done * stride
            d[at] = first + rise * done.astype(np.float32)
            if not along_columns:  # the columns' pass sees the rows' fills as ends
                valid[at] = True
