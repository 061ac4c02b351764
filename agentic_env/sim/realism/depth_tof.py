"""Azure Kinect depth model: amplitude-modulated continuous-wave time of flight (NFOV unbinned).

A time-of-flight camera lights its own scene: its return depends on the surface's albedo (from
the materials, :mod:`.surfaces`), the range and the incidence, not on how the visible scene is
lit; ambient infrared (sunlight on the surface) adds shot noise. Effects on an exact depth
render (metres along the optical axis, 0 = no return):

* **Random error**: Gaussian with std ``sigma_signal * sqrt(1 + B / S)``. ``sigma_signal =
  sigma_bound * (z / range_max)^2 * reflectivity_min / (albedo * cos(incidence))``: the phase
  noise of a signal-limited pixel grows as the returned infrared falls (inverse square of
  range, albedo, Lambertian incidence) and reaches the datasheet's bound at the end of the
  range for the dimmest rated surface. ``S = albedo * cos(incidence) * (range_max / z)^2 /
  reflectivity_min`` is the active return in units of that weakest rated one; ``B`` the ambient
  infrared the surface reflects beyond the datasheet's rated ambient, in the same units:
  ``max(E - E_rated, 0) / E_rated * L / reflectivity_min`` with ``E`` the setting's spectral
  irradiance at 850 nm and ``L`` the render's linear luminance of the pixel (the share of the
  setting's light the surface reflects: sunlit, shadowed, its albedo). Indoors (``E <=
  E_rated``) ``B = 0``.
* **Invalid pixels (0)**: where that std would exceed the datasheet's bound (weak return: dark or
  grazing surfaces, far range in sunlight), as the depth engine invalidates low-signal pixels.
  The incidence angle comes from depth-gradient normals.
* **Mixed (flying) pixels**: pixels beside a depth discontinuity are invalidated, except a
  fraction that survives as a random mixture of foreground and background depth. A
  discontinuity is a neighbour jump above ``edge_jump`` that the surface's slope does not
  explain (its second difference along a row or column is above the jump too): a floor seen at
  a grazing angle has large neighbour jumps but no mixed pixels, since each pixel still sees
  one surface.
* **Multipath**: a positive bias where the surface is concave (the pixel lies behind the local
  mean of its neighbourhood: bin and bowl corners, the drawer), proportional to that depth and
  capped. A stated assumption, not a light-transport simulation (the datasheet's systematic
  bound excludes multipath; no public figure sizes it).
* **Systematic error**: a unit's bias ``scale * (offset + per_metre * z)`` with ``scale`` in
  [-1, 1] drawn per unit (:meth:`TofDepthModel.with_unit_bias`); 0 for the nominal unit.
* Output quantised to the device's depth unit and cut to the configured range.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any, Self

import cv2
import numpy as np

from agentic_env.sim.realism.surfaces import SurfaceSample

#: Width, pixels, the multipath window is specified at.
_REFERENCE_WIDTH = 640
#: Second-difference kernels along a row and along a column.
_ROW_CURVATURE = np.array([[1.0, -2.0, 1.0]], np.float32)
_COLUMN_CURVATURE = _ROW_CURVATURE.T.copy()
#: Pixels of input around a pixel that its :meth:`TofDepthModel.fields` depend on, at most:
#: 17 by the kernels at 640 px (the multipath mean's bilinear spread and binned window, 1 + 4
#: bins of 2 px, over the weak-return mask's incidence, binned central difference and
#: spread, 3 bins, and the 3 x 3 edge tests, 1 px); with a margin.
FIELD_REACH = 24
#: Pixels of input around a pixel that its :meth:`TofDepthModel.signal_fields` depend on, at
#: most: 7 (the incidence's bilinear spread, 1 bin, over the central differences of the bins
#: it reads, 2 bins, each exact only with its own neighbours in the window, 1 bin; bins of
#: 2 px, pixel p in bin p // 2), even.
SIGNAL_REACH = 8


@dataclass(frozen=True, eq=False)
class TofFields:
    """What :meth:`TofDepthModel.fields` gives: one frame's effects before its random draws,
    each (H, W).

    Attributes:
        base: float32 metres, the exact depth plus multipath and the unit's bias.
        sigma: float32 metres, the random error's std (cut at the datasheet bound).
        invalid: bool, no return (none rendered, or too weak a signal).
        edge: bool, mixed pixels (beside a depth discontinuity).
        nearest: float32 metres, the nearest depth of each pixel's 3 x 3 neighbourhood
            (no return reads 1 km).
        farthest: float32 metres, the farthest of it.
    """

    base: np.ndarray
    sigma: np.ndarray
    invalid: np.ndarray
    edge: np.ndarray
    nearest: np.ndarray
    farthest: np.ndarray

    @functools.cached_property
    def edge_index(self) -> np.ndarray:
        """Flat indices (row-major) of the :attr:`edge` pixels, kept while the fields are
        reused (who overwrites :attr:`edge` in place calls :meth:`edited`)."""
        return np.flatnonzero(self.edge)

    def edited(self) -> None:
        """Forget what was derived from the arrays (they were overwritten in place)."""
        self.__dict__.pop("edge_index", None)


@dataclass(frozen=True, eq=False)
class TofDepthModel:
    """The ToF depth model of one camera configuration (see the module docstring).

    Attributes:
        intrinsics: (3, 3) pinhole matrix of the depth image, pixels.
        width: image width, pixels.
        height: image height, pixels.
        depth_min: nearest returned depth, metres.
        depth_max: farthest returned depth, metres.
        params: the ``kinect.depth`` table (units in its comments).
        bias_scale: this unit's systematic error as a fraction of the datasheet bound, -1..1.
        ambient_850nm: the setting's spectral irradiance at 850 nm, uW/cm^2/nm.
    """

    intrinsics: np.ndarray
    width: int
    height: int
    depth_min: float
    depth_max: float
    params: dict[str, Any]
    bias_scale: float = 0.0
    ambient_850nm: float = 0.0

    @property
    def uses_grey(self) -> bool:
        """Whether the frames depend on the render's luma: only where the ambient infrared
        exceeds the rated one (outdoors)."""
        return self.ambient_ratio > 0

    @property
    def ambient_ratio(self) -> float:
        """Ambient spectral irradiance at 850 nm beyond the datasheet's rated ambient, as a
        multiple of the rated one (0 indoors)."""
        rated = self.params["ambient_rated"]
        return max(self.ambient_850nm - rated, 0.0) / rated

    def __post_init__(self) -> None:
        # the smooth fields (incidence, multipath's local mean) live on a 2 x 2-binned grid:
        # the centre of bin (i, j) is full-resolution pixel (2i + 1, 2j + 1) in the
        # convention where pixel centres sit at + 0.5
        k = self.intrinsics
        binned = (self.width // 2, self.height // 2)
        a = (2 * np.arange(binned[0], dtype=np.float32) + 1 - np.float32(k[0, 2])) / np.float32(
            k[0, 0])
        b = (2 * np.arange(binned[1], dtype=np.float32) + 1 - np.float32(k[1, 2])) / np.float32(
            k[1, 1])
        a_grid, b_grid = np.meshgrid(a, b)
        object.__setattr__(self, "_a", a_grid)
        object.__setattr__(self, "_b", b_grid)
        object.__setattr__(self, "_ray", np.sqrt(1.0 + a_grid**2 + b_grid**2))
        window = round(self.params["multipath_window"] * self.width / _REFERENCE_WIDTH / 2) | 1
        object.__setattr__(self, "_window", max(3, window))

    def with_unit_bias(self, rng: np.random.Generator) -> Self:
        """This model for one unit: its systematic error, a fraction of the datasheet bound
        drawn from a normal distribution with ``systematic_sigma`` bounds of spread, cut at
        the bound (a bound read as three standard deviations, as the project reads the
        UR5e's repeatability)."""
        sigma = self.params["systematic_sigma"]
        return replace(self, bias_scale=float(np.clip(rng.normal(0.0, sigma), -1.0, 1.0)))

    def random_std(self, depth: np.ndarray, albedo: np.ndarray | float,
                   cos_incidence: np.ndarray, luminance: np.ndarray | float = 0.0
                   ) -> np.ndarray:
        """Std of the random error, metres, per pixel (inf where nothing returns), for the
        surfaces' ``albedo`` (0..1) and the render's linear ``luminance`` (0..1, the ambient
        light they reflect; module docstring)."""
        p = self.params
        signal = np.multiply(albedo, cos_incidence)
        np.maximum(signal, np.float32(1e-6), out=signal)
        scale = np.float32(p["sigma_bound"] * p["reflectivity_min"] / p["range_max"] ** 2)
        sigma = np.multiply(scale, depth)
        sigma *= depth
        sigma /= signal
        if self.ambient_ratio > 0:
            # B / S, with S = signal * (range_max / z)^2 / reflectivity_min
            background = np.float32(self.ambient_ratio / p["range_max"] ** 2) * luminance
            background *= depth * depth
            background /= signal
            background += np.float32(1.0)
            sigma *= np.sqrt(background)
        return sigma

    def cos_incidence(self, depth: np.ndarray, origin: tuple[int, int] = (0, 0)
                      ) -> np.ndarray:
        """Cosine of the angle between each pixel's ray and its surface normal, from central
        differences of the 2 x 2-binned depth, spread back to every pixel (bilinear);
        ``depth`` must be positive everywhere (metres). ``depth`` may be a window of the
        image with its top-left pixel at ``origin`` (row, column; both even, as its size)."""
        shape = (depth.shape[1] // 2, depth.shape[0] // 2)
        binned = cv2.resize(depth, shape, interpolation=cv2.INTER_AREA)
        cosine = self._binned_cos_incidence(binned, origin)
        return cv2.resize(cosine, depth.shape[::-1], interpolation=cv2.INTER_LINEAR)

    def _binned_cos_incidence(self, depth: np.ndarray, origin: tuple[int, int] = (0, 0)
                              ) -> np.ndarray:
        """:meth:`cos_incidence` on the binned grid (``depth`` binned, metres; the window's
        full-resolution ``origin``)."""
        rows = slice(origin[0] // 2, origin[0] // 2 + depth.shape[0])
        cols = slice(origin[1] // 2, origin[1] // 2 + depth.shape[1])
        focal = np.float32(self.intrinsics[0, 0] / 2)  # the binned grid's focal length
        du = cv2.Sobel(depth, cv2.CV_32F, 1, 0, ksize=1, scale=0.5)
        # vertical: bit-identical to cv2.Sobel(depth, CV_32F, 0, 1, ksize=1, scale=0.5) (its
        # reflected border gives 0 on the first and last rows), ~4x faster as a row difference
        dv = np.empty(depth.shape, np.float32)
        np.subtract(depth[2:], depth[:-2], out=dv[1:-1])
        dv[1:-1] *= np.float32(0.5)
        dv[0] = dv[-1] = 0.0
        along = depth / focal
        norm = cv2.magnitude(du, dv)
        normal_z = np.multiply(self._a[rows, cols], du, out=du)  # in place: gradients spent
        normal_z += np.multiply(self._b[rows, cols], dv, out=dv)
        normal_z += along
        cv2.magnitude(norm, normal_z, norm)
        norm *= self._ray[rows, cols]
        return np.divide(along, norm, out=norm)

    def apply(self, depth: np.ndarray, grey: np.ndarray, rng: np.random.Generator,
              noise: np.ndarray, surface: SurfaceSample) -> np.ndarray:
        """The device's depth (H, W) float32 metres, 0 = no return, for an exact ``depth``,
        the 8-bit luma ``grey`` (H, W) of the lit render of the same view (linear, as MuJoCo
        renders: the ambient light the surfaces reflect), a standard-normal field ``noise``
        (H, W) and the world's ``surface`` (its albedo; ``None``: ``albedo_default``);
        ``rng`` draws the mixed pixels."""
        albedo = (np.float32(self.params["albedo_default"]) if surface.albedo is None
                  else surface.albedo)
        return self.finish(self.fields(depth, grey, albedo), rng, noise)

    def fields(self, depth: np.ndarray, grey: np.ndarray, albedo: np.ndarray | np.float32,
               origin: tuple[int, int] = (0, 0)) -> TofFields:
        """Everything of :meth:`apply` that does not depend on the frame's random draws, for
        an exact ``depth`` (m), its ``grey`` luma (8-bit) and the surfaces' ``albedo``, all
        (H, W) (``albedo`` may be a scalar). The arrays may be a window of the image with its
        top-left pixel at ``origin`` (row, column; both even, as the window's size): each
        field at a pixel depends on the inputs within :data:`FIELD_REACH` pixels of it only,
        so a window's fields equal the whole image's that far inside its cut edges. Its two
        stages: :meth:`signal_fields`, then :meth:`base_depth`."""
        sigma, invalid, edge, nearest, farthest = self.signal_fields(depth, grey, albedo, origin)
        return TofFields(self.base_depth(depth, invalid), sigma, invalid, edge, nearest,
                         farthest)

    def signal_fields(self, depth: np.ndarray, grey: np.ndarray,
                      albedo: np.ndarray | np.float32, origin: tuple[int, int] = (0, 0)
                      ) -> tuple[np.ndarray, ...]:
        """:meth:`fields`' ``sigma``, ``invalid``, ``edge``, ``nearest`` and ``farthest``
        (same arguments): each at a pixel depends on the inputs within :data:`SIGNAL_REACH`
        pixels of it only."""
        p = self.params
        valid = depth > 0
        invalid = ~valid
        far = np.float32(1e3)
        # no return reads as far away for neighbours (a masked copy: ~3x np.where)
        lifted = np.full(depth.shape, far)
        cv2.copyTo(depth, valid.view(np.uint8), lifted)
        kernel = np.ones((3, 3), np.uint8)
        nearest = cv2.erode(lifted, kernel)
        farthest = cv2.dilate(depth, kernel)
        # a jump between neighbours of a coarser image spans several of the device's pixels
        jump = np.float32(p["edge_jump"] * max(1.0, _REFERENCE_WIDTH / self.width))
        edge = np.subtract(farthest, nearest) > jump
        edge &= nearest < far
        edge &= valid
        edge &= self._curvature(depth) > jump

        luminance = grey * np.float32(1 / 255) if self.ambient_ratio > 0 else 0.0
        sigma = self.random_std(depth, albedo, self.cos_incidence(lifted, origin), luminance)
        bound = np.float32(p["sigma_bound"])
        weak = sigma > bound
        weak &= ~edge
        invalid |= weak
        np.minimum(sigma, bound, out=sigma)
        return sigma, invalid, edge, nearest, farthest

    def base_depth(self, depth: np.ndarray, invalid: np.ndarray) -> np.ndarray:
        """:meth:`fields`' ``base`` (m) from the exact ``depth`` and its ``invalid`` mask
        (may be a window, even-aligned): at a pixel it depends on both within
        :attr:`multipath_reach` pixels of it only."""
        p = self.params
        base = self._multipath(depth, invalid)
        base += depth
        if self.bias_scale:
            base += np.float32(self.bias_scale) * (
                np.float32(p["systematic_offset"]) + np.float32(p["systematic_per_metre"]) * depth)
        return base

    @property
    def multipath_reach(self) -> int:
        """Pixels of depth and mask around a pixel that its :meth:`base_depth` depends on, at
        most (even): the bilinear spread back to full resolution (1 bin) over the binned
        window's half (``window // 2`` bins), bins of 2 px."""
        reach = 2 * (self._window // 2 + 1) + 1
        return reach + reach % 2

    def finish(self, fields: TofFields, rng: np.random.Generator, noise: np.ndarray
               ) -> np.ndarray:
        """The device's depth (H, W) float32 metres, 0 = no return, from a frame's
        :meth:`fields` (not modified), its standard-normal ``noise`` (H, W) and ``rng``
        (the mixed pixels' draws, in row-major order of the edge pixels)."""
        p = self.params
        out = np.multiply(fields.sigma, noise)
        out += fields.base
        edge = fields.edge_index  # row-major, as boolean-mask indexing visits them
        keep = rng.random(edge.size) < p["flying_keep"]
        mix = rng.random(edge.size).astype(np.float32)
        fore, back = fields.nearest.reshape(-1)[edge], fields.farthest.reshape(-1)[edge]
        out.reshape(-1)[edge] = np.where(keep, mix * fore + (1 - mix) * back, np.float32(0.0))

        unit = np.float32(p["depth_unit"])
        out *= 1 / unit
        np.round(out, out=out)
        out *= unit
        invalid = out < np.float32(self.depth_min)
        invalid |= out > np.float32(self.depth_max)
        invalid |= fields.invalid
        # +0.0 where invalid: a branch-free bit mask (all bits kept elsewhere), faster than a
        # boolean-mask assignment
        bits = out.view(np.uint32)
        bits &= np.subtract(invalid, 1, dtype=np.uint32)
        return out

    @staticmethod
    def _curvature(depth: np.ndarray) -> np.ndarray:
        """Largest absolute second difference of ``depth`` (m) along its row and column."""
        along_row = cv2.filter2D(depth, cv2.CV_32F, _ROW_CURVATURE,
                                 borderType=cv2.BORDER_REPLICATE)
        along_column = cv2.filter2D(depth, cv2.CV_32F, _COLUMN_CURVATURE,
                                    borderType=cv2.BORDER_REPLICATE)
        np.abs(along_row, out=along_row)
        return np.maximum(along_row, np.abs(along_column, out=along_column), out=along_row)

    def _multipath(self, depth: np.ndarray, invalid: np.ndarray) -> np.ndarray:
        """Positive bias, metres, where the pixel lies behind its neighbourhood's mean depth
        (the mean over pixels with a return, taken on the 2 x 2-binned grid and spread back
        bilinearly: a window of ``multipath_window`` pixels is smooth at that scale)."""
        p = self.params
        valid = np.subtract(1, invalid, dtype=np.float32)  # 1 = a return
        weighted = np.multiply(depth, valid)
        size = (self._window, self._window)
        binned = (depth.shape[1] // 2, depth.shape[0] // 2)
        weight = cv2.blur(cv2.resize(valid, binned, interpolation=cv2.INTER_AREA), size)
        mean = cv2.blur(cv2.resize(weighted, binned, interpolation=cv2.INTER_AREA), size)
        mean /= np.maximum(weight, np.float32(1e-6), out=weight)
        mean = cv2.resize(mean, depth.shape[::-1], interpolation=cv2.INTER_LINEAR)
        concavity = np.subtract(depth, mean, out=mean)  # negative where there is no return
        concavity *= np.float32(p["multipath_gain"])
        return np.clip(concavity, np.float32(0.0), np.float32(p["multipath_max"]), out=concavity)
