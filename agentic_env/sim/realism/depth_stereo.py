"""RealSense D405 depth model: passive stereo (no projector), left imager as the reference.

Effects on an exact depth render (metres along the optical axis, 0 = no return), with the
disparity ``d = f * baseline / z`` (pixels) at the configured resolution:

* **Edge fattening**: block matching assigns a window straddling a depth edge to the nearer
  surface, so foreground depth spreads about half the matching window into the background.
* **Occlusion shadow (0)**: pixels the right imager cannot see: a background pixel is hidden
  when a nearer pixel to its right lands at or left of it in the right image (the band on the
  left of foreground objects, as wide as the disparity jump), and the left image band whose
  match falls outside the right image. Only the pixels within the frame's disparity span
  (largest less smallest disparity) to its right can hide a pixel, so the test takes the
  least right-image column over that many pixels (a sparse table of minima, ~log2 of the
  span in whole-image passes).
* **Textureless holes (0)**: matching fails where the grey-level standard deviation within the
  matching window is below a threshold (the render's 8-bit luma stands in for the imagers'),
  on whole world-fixed surface patches (a stated share of them; :meth:`StereoDepthModel.apply`),
  so holes are contiguous and stay on their surface from frame to frame.
* **Minimum range (0)**: nearer than ``f * baseline / disparity_range``.
* **Random error**: Gaussian with std ``z^2 * subpixel / (f * baseline)`` (the disparity's
  subpixel precision propagated to depth).
* Output quantised to the device's depth unit and cut to the configured range.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from agentic_env.sim.realism.surfaces import SurfaceSample

#: Edge, pixels, of the image-fixed patches of a synthetic frame (no world behind it).
_IMAGE_PATCH = 16


@dataclass(frozen=True, eq=False)
class StereoFields:
    """What :meth:`StereoDepthModel.fields` gives: one frame's effects before its noise, each
    (H, W).

    Attributes:
        depth: float32 metres, the exact depth with the foreground fattened.
        std: float32 metres, the random error's std (low texture's factor included).
        invalid: bool, no return whatever the noise (none rendered, occluded, a textureless
            hole, nearer than the minimum range).
    """

    depth: np.ndarray
    std: np.ndarray
    invalid: np.ndarray


@dataclass(frozen=True, eq=False)
class StereoDepthModel:
    """The stereo depth model of one camera configuration (see the module docstring).

    Attributes:
        focal: focal length of the depth image, pixels.
        depth_min: nearest returned depth of the configuration, metres.
        depth_max: farthest returned depth, metres.
        params: the ``d405.depth`` table (units in its comments).
    """

    focal: float
    depth_min: float
    depth_max: float
    params: dict[str, Any]

    @property
    def uses_grey(self) -> bool:
        """Whether the frames depend on the render's luma: always (passive stereo matches
        the lit scene's texture)."""
        return True

    @property
    def min_z(self) -> float:
        """Nearest depth the disparity search reaches at this resolution, metres."""
        p = self.params
        return self.focal * p["baseline"] / p["disparity_range"]

    def random_std(self, depth: np.ndarray) -> np.ndarray:
        """Std of the random error, metres, per pixel (the RMS-error formula)."""
        p = self.params
        return np.float32(p["subpixel_rms"] / (self.focal * p["baseline"])) * depth * depth

    def apply(self, depth: np.ndarray, grey: np.ndarray, rng: np.random.Generator,
              noise: np.ndarray, surface: SurfaceSample) -> np.ndarray:
        """The device's depth (H, W) float32 metres, 0 = no return, for an exact ``depth``,
        the 8-bit luma ``grey`` (H, W) of the lit render of the same view (passive stereo
        matches the lit scene's texture), a standard-normal field ``noise`` (H, W) and the
        world's ``surface`` patches; ``rng`` draws the patches of a synthetic frame (no
        ``surface.patch``).

        Low texture (a matching window with less contrast than ``texture_threshold``) makes
        the matcher unsure rather than blind: a rendered surface has none of a real one's
        fine texture, so a low-texture region is a hole on the share
        ``textureless_invalid_fraction`` of the world's surface patches (whole patches, the
        same in every view of the episode: :func:`.surfaces.surface_patches`) and matched
        ``textureless_noise_factor`` times less precisely on the others."""
        return self.finish(self.fields(depth, grey, rng, surface), noise)

    def fields(self, depth: np.ndarray, grey: np.ndarray, rng: np.random.Generator,
               surface: SurfaceSample) -> StereoFields:
        """Everything of :meth:`apply` before its noise (same arguments but ``noise``)."""
        p = self.params
        valid = depth > 0
        depth, far = self._fatten(depth, valid)
        textureless = self._textureless(grey)
        patch = surface.patch if surface.patch is not None else _image_patches(depth.shape, rng)
        invalid = self._occluded(depth, far, valid)
        # nearer than the minimum range, and no return (0, kept 0 by the fattening)
        invalid |= depth < np.float32(self.min_z)
        dropped = np.less(patch, np.float32(p["textureless_invalid_fraction"]))
        dropped &= textureless
        invalid |= dropped
        std = self.random_std(depth)
        # x 1 elsewhere: the same bits as a whole-image product with a 1-or-factor field (a
        # masked copy of the product, cheaper than a masked product)
        cv2.copyTo(std * np.float32(p["textureless_noise_factor"]), textureless.view(np.uint8),
                   std)
        return StereoFields(depth, std, invalid)

    def finish(self, fields: StereoFields, noise: np.ndarray) -> np.ndarray:
        """The device's depth (H, W) float32 metres, 0 = no return, from a frame's
        :meth:`fields` (not modified) and its standard-normal ``noise`` (H, W)."""
        p = self.params
        out = np.multiply(fields.std, noise)
        out += fields.depth
        unit = np.float32(p["depth_unit"])
        out /= unit
        np.round(out, out=out)
        out *= unit
        invalid = out < np.float32(self.depth_min)
        invalid |= out > np.float32(self.depth_max)
        invalid |= fields.invalid
        # +0.0 where invalid: a branch-free bit mask (all bits kept where valid), several times
        # faster than boolean-mask assignment on the scattered holes of low texture
        bits = out.view(np.uint32)
        bits &= np.subtract(invalid, 1, dtype=np.uint32)
        return out

    def _fatten(self, depth: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Foreground depth spread half the matching window across depth jumps: the
        fattened depth (m, 0 where ``valid`` is false, as ``depth``) and the same with +inf
        there (no return reads as infinitely far)."""
        p = self.params
        half = p["matching_window"] // 2
        # no return: never the nearest (a masked copy onto +inf: ~3x np.where)
        far = np.full(depth.shape, np.float32(np.inf))
        cv2.copyTo(depth, valid.view(np.uint8), far)
        nearest = cv2.erode(far, np.ones((2 * half + 1, 2 * half + 1), np.uint8))
        spread = np.subtract(depth, nearest) > np.float32(p["fattening_jump"])
        spread &= valid
        mask = spread.view(np.uint8)
        fattened = depth.astype(np.float32)
        cv2.copyTo(nearest, mask, fattened)  # masked copies without branches
        cv2.copyTo(nearest, mask, far)
        return fattened, far

    def _occluded(self, depth: np.ndarray, far: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """Pixels the right imager (``+baseline`` along x) cannot see, of the (fattened)
        ``depth`` (m, 0 where not ``valid``) and ``far``, the same with +inf there."""
        p = self.params
        height, width = depth.shape
        focal_baseline = np.float32(self.focal * p["baseline"])
        disparity = np.divide(focal_baseline, far)  # +0.0 where there is no return
        # a pixel u is hidden by a pixel v > u landing left of it in the right image:
        # v - d[v] < u - d[u] - 0.5, so v - u < d[v] - d[u] <= (largest - smallest disparity
        # with a return): only the next `span` pixels of its row can hide it, and the least
        # right-image column among them decides
        smallest = focal_baseline / np.float32(depth.max())  # the farthest return's
        span = int(np.ceil(float(disparity.max()) - float(smallest))) + 2 if valid.any() else 1
        span = min(span, width)
        # each row padded by `span` never-hiding columns (+inf), then read as one flat array
        padded = np.full((height, width + span), np.float32(np.inf))
        np.subtract(np.arange(width, dtype=np.float32), disparity,
                    out=padded[:, :width])  # column of each pixel in the right image
        right = padded.reshape(-1)
        beyond = _window_minimum(right, span)
        beyond += np.float32(0.5)
        hidden = right > beyond
        hidden |= right < 0
        return np.logical_and(hidden.reshape(padded.shape)[:, :width], valid)

    def _textureless(self, grey: np.ndarray) -> np.ndarray:
        """Pixels whose matching window has too little grey-level contrast (8-bit std)."""
        p = self.params
        size = (p["matching_window"], p["matching_window"])
        mean = cv2.boxFilter(grey, cv2.CV_32F, size)
        variance = cv2.sqrBoxFilter(grey, cv2.CV_32F, size)
        variance -= np.multiply(mean, mean, out=mean)
        return variance < np.float32(p["texture_threshold"] ** 2)


def _window_minimum(values: np.ndarray, span: int) -> np.ndarray:
    """Per element ``i`` of the 1-D float32 ``values``, the least of ``values[i + 1]`` to
    ``values[i + span]`` (+inf past the end; ``span`` >= 1): a sparse table, minima over
    ``2^k`` elements built by doubling (``floor(log2 span)`` whole-array passes, where a
    running minimum walks every row element by element). A new array."""
    size = values.size
    power = 1 << (span.bit_length() - 1)  # the largest power of two <= span
    buffers = (np.empty_like(values), np.empty_like(values))
    level, reach, step = values, 1, 0  # level[i]: the least of values[i:i + reach]
    while reach < power:
        target = buffers[step % 2]
        np.minimum(level[:size - reach], level[reach:], out=target[:size - reach])
        target[size - reach:] = level[size - reach:]
        level, reach, step = target, 2 * reach, step + 1
    out = buffers[step % 2]
    # [i + 1, i + power] and [i + span - power + 1, i + span] cover [i + 1, i + span]
    last = size - span
    np.minimum(level[1:last + 1], level[span - power + 1:span - power + 1 + last],
               out=out[:last])
    out[last:] = np.inf
    return out


def _image_patches(shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """Patch values in [0, 1) constant over :data:`_IMAGE_PATCH`-pixel blocks of the image,
    (H, W) float32: the stand-in for world-fixed patches on a synthetic frame."""
    height, width = shape
    blocks = rng.random((-(-height // _IMAGE_PATCH), -(-width // _IMAGE_PATCH)),
                        dtype=np.float32)
    return np.repeat(np.repeat(blocks, _IMAGE_PATCH, 0), _IMAGE_PATCH, 1)[:height, :width]


@dataclass(eq=False)
class StillStereoDepth:
    """A :class:`~.sensors.DepthModel` giving :attr:`model`'s frames, with its
    :meth:`~StereoDepthModel.fields` reused while the view stays the same (exact depth, luma
    and world-fixed patches equal to the previous frame's: a still arm); the noise is drawn
    every frame. One per camera and episode.

    Attributes:
        model: the camera's stereo model.
    """

    model: StereoDepthModel
    _last: tuple[np.ndarray, np.ndarray, np.ndarray, StereoFields] | None = field(
        default=None, init=False)

    @property
    def uses_grey(self) -> bool:
        """Whether the frames depend on the render's luma (as :attr:`model`'s)."""
        return self.model.uses_grey

    def apply(self, depth: np.ndarray, grey: np.ndarray, rng: np.random.Generator,
              noise: np.ndarray, surface: SurfaceSample) -> np.ndarray:
        """As :meth:`StereoDepthModel.apply` (a synthetic frame, without patches, is never
        reused: its patches are drawn from ``rng``)."""
        if surface.patch is None:
            return self.model.apply(depth, grey, rng, noise, surface)
        last = self._last
        if last is None or not _same_view(last[:3], (depth, grey, surface.patch)):
            fields = self.model.fields(depth, grey, rng, surface)
            last = self._last = (depth.copy(), grey.copy(), surface.patch, fields)
        return self.model.finish(last[3], noise)


def _same_view(last: tuple[np.ndarray, ...], frame: tuple[np.ndarray, ...]) -> bool:
    """Whether each array of ``frame`` is (or equals) the one at its place in ``last``."""
    return all(a is b or np.array_equal(a, b) for a, b in zip(last, frame, strict=True))
