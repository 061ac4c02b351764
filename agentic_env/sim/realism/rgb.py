"""Colour camera model: exposure, white balance, motion blur and sensor noise.

Works in linear RGB (float32, 0..1, the render decoded from sRGB) in the order light meets a
real camera: the lens image blurs while the camera moves during the exposure, the sensor adds
shot and read noise (scaled by the analog gain auto-exposure needed), the white balance leaves
part of the illuminant's colour cast, and the result is encoded back to 8-bit sRGB.

Exposure follows the reflected-light exposure equation ``t = N^2 K / (L S)`` for a mid-grey
surface (``L = E * 0.18 / pi``) at the setting's illuminance ``E``; when ``t`` exceeds one frame
the camera keeps one frame and raises the gain. Motion blur is a linear blur along the image
motion of the principal point, ``length = image speed * t`` (pixels), an approximation that
ignores rotation about the optical axis and motion along it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

#: sRGB decoding of each 8-bit value to linear 0..1.
_DECODE = np.where(
    (levels := np.arange(256) / 255.0) <= 0.04045, levels / 12.92,
    ((levels + 0.055) / 1.055) ** 2.4).astype(np.float32)
#: Longest blur, pixels, convolved with its antialiased line kernel; longer ones (a fast
#: wrist) are built by doubling (:func:`_motion_blur`), whose cost does not grow with the
#: kernel's area.
_SHORT_BLUR = 12.0
#: Largest share of a still camera's rows recomputed in place when its render changed there
#: (beyond it, the whole frame anew).
_BAND_SHARE = 0.7
#: Nearest depth, m, the motion-blur bound assumes (nearer than either camera's range).
_NEAREST_DEPTH = 0.05
#: Linear values are encoded through this many table steps (finer than 8 bits in the darks).
_ENCODE_STEPS = 4096
_ENCODE = np.round(255.0 * np.where(
    (lin := np.linspace(0.0, 1.0, _ENCODE_STEPS)) <= 0.0031308, lin * 12.92,
    1.055 * lin ** (1 / 2.4) - 0.055)).astype(np.uint8)


def srgb_to_linear(rgb: np.ndarray) -> np.ndarray:
    """(..., 3) uint8 sRGB -> float32 linear 0..1 (also a single 8-bit channel, (H, W))."""
    if isinstance(rgb, np.ndarray) and rgb.dtype == np.uint8 and (
            rgb.ndim == 2 or (rgb.ndim == 3 and rgb.shape[2] == 3)):
        return cv2.LUT(rgb, _DECODE)  # an image: cv2's table lookup is ~5x a numpy gather
    return _DECODE[rgb]


def linear_to_srgb(linear: np.ndarray) -> np.ndarray:
    """float linear (clipped to 0..1) -> uint8 sRGB."""
    index = np.clip(linear * np.float32(_ENCODE_STEPS - 1) + np.float32(0.5), 0,
                    _ENCODE_STEPS - 1).astype(np.int32)
    return _ENCODE[index]


def exposure(illuminance: float, f_number: float, iso: float, meter_constant: float,
             grey_reflectance: float, frame_rate: float) -> tuple[float, float]:
    """Auto-exposure's (exposure time s, analog gain >= 1) for a scene at ``illuminance`` lux."""
    luminance = illuminance * grey_reflectance / np.pi
    needed = f_number**2 * meter_constant / (luminance * iso)
    time = min(needed, 1.0 / frame_rate)
    return time, needed / time


def white_balance_gains(illuminant: np.ndarray, reference: np.ndarray,
                        residual: float) -> np.ndarray:
    """Linear per-channel gains (G = 1) of the cast auto white balance leaves: the
    illuminant's colour against the reference white, raised to ``residual`` (0 = perfect).
    Both colours are sRGB-encoded 0..1 triples."""
    ratio = _srgb_float_to_linear(illuminant) / _srgb_float_to_linear(reference)
    gains = ratio ** residual
    return (gains / gains[1]).astype(np.float32)


def _srgb_float_to_linear(colour: np.ndarray) -> np.ndarray:
    colour = np.asarray(colour, dtype=np.float64)
    return np.where(colour <= 0.04045, colour / 12.92, ((colour + 0.055) / 1.055) ** 2.4)


@dataclass(frozen=True, eq=False)
class RgbModel:
    """One colour camera at one setting.

    Attributes:
        focal: focal length, pixels (of the image the model is applied to).
        exposure_time: seconds.
        gain: analog gain (>= 1) on top of the base ISO.
        full_well: electrons at full scale at base gain.
        read_noise: read noise, electrons RMS.
        wb_gains: (3,) linear gains of the residual white-balance cast.
    """

    focal: float
    exposure_time: float
    gain: float
    full_well: float
    read_noise: float
    wb_gains: np.ndarray

    def __post_init__(self) -> None:
        # 8-bit tables: the white-balance cast per channel, and the noise std (8-bit units)
        # of each output level: the linear shot + read noise through the sRGB slope there.
        gains = np.asarray(self.wb_gains, np.float32)
        balance = linear_to_srgb(_DECODE[:, None] * gains[None, :]).reshape(1, 256, 3)
        linear = _DECODE.astype(np.float64)
        sigma = np.sqrt(linear * self.gain / self.full_well
                        + (self.read_noise * self.gain / self.full_well) ** 2)
        slope = np.where(linear <= 0.0031308, 12.92,
                         1.055 / 2.4 * np.maximum(linear, 1e-9) ** (1 / 2.4 - 1))
        object.__setattr__(self, "_balance", balance)
        object.__setattr__(self, "_sigma", (255.0 * sigma * slope).astype(np.float32))
        # the last still frame of :meth:`_exposed` ("frame": render, image, noise std) and
        # the noise's scratch buffer ("scratch")
        object.__setattr__(self, "_still", {})

    def image_motion(self, depth: np.ndarray, camera_velocity: np.ndarray | None) -> np.ndarray:
        """(2,) image velocity (u, v), pixels/s, of a static point on the optical axis at the
        median valid ``depth`` (m, 1 m if none) while the camera moves; zeros when still."""
        if camera_velocity is None:
            return np.zeros(2)
        velocity = np.asarray(camera_velocity, dtype=np.float64)
        sample = depth[::8, ::8]  # the median of a sparse grid: plenty for one distance
        valid = sample[sample > 0]
        distance = float(np.median(valid)) if valid.size else 1.0
        return self.focal * np.array([-velocity[0] / distance - velocity[4],
                                      -velocity[1] / distance + velocity[3]])

    def apply(self, rgb: np.ndarray, depth: np.ndarray, noise: np.ndarray,
              camera_velocity: np.ndarray | None) -> np.ndarray:
        """The camera's 8-bit sRGB image (new array) of the lens image ``rgb`` (H, W, 3)
        uint8, given the scene ``depth`` (H, W, m) and a standard-normal field ``noise`` of
        ``rgb``'s shape. The blur acts on the 8-bit image (an approximation of blurring
        linear light)."""
        image, sigma = self._exposed(rgb, depth, camera_velocity)
        noisy = np.multiply(sigma, noise, out=self._scratch(sigma.shape))
        # the image plus its noise, rounded to the nearest level and saturated, in one pass
        return cv2.add(noisy, image, dtype=cv2.CV_8U)

    def _scratch(self, shape: tuple[int, ...]) -> np.ndarray:
        """A float32 buffer of ``shape`` kept between frames (its contents are not kept):
        a fresh 3.7 MB array each frame costs its page faults."""
        buffer = self._still.get("scratch")
        if buffer is None or buffer.shape != shape:
            buffer = self._still["scratch"] = np.empty(shape, np.float32)
        return buffer

    def _exposed(self, rgb: np.ndarray, depth: np.ndarray,
                 camera_velocity: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """The frame before its noise: the white-balanced, blurred 8-bit image (H, W, 3) and
        its noise std per element (float32, 8-bit levels). A still camera's (no blur) are
        kept with its render and given again (not to be modified; valid until the next
        call) while the render stays the same (a still view, the static scene of a camera
        fixed to the world), recomputed only in the band of rows that changed (an arm
        moving in a fixed camera's view)."""
        still = not self._may_blur(camera_velocity)
        last = self._still.get("frame")
        if still and last is not None and last[0].shape == rgb.shape:
            rows = _changed_rows(last[0], rgb)
            if rows is None:
                return last[1], last[2]
            if rows.stop - rows.start <= _BAND_SHARE * rgb.shape[0]:
                # what moved in the view of a still camera: the rows that differ, in place
                # (the kept arrays are this model's own; no pixel depends on another's)
                last[0][rows] = rgb[rows]
                cv2.LUT(rgb[rows], self._balance, dst=last[1][rows])
                cv2.LUT(last[1][rows], self._sigma, dst=last[2][rows])
                return last[1], last[2]
        image = cv2.LUT(rgb, self._balance)
        if not still:
            blur = self.image_motion(depth, camera_velocity) * self.exposure_time
            if np.hypot(*blur) >= 0.5:
                image = (_short_blur(image, blur) if np.hypot(*blur) <= _SHORT_BLUR
                         else _motion_blur(image, blur))
        sigma = cv2.LUT(image, self._sigma)  # the table's float32: ~3x a numpy gather
        if still:
            self._still["frame"] = (rgb.copy(), image, sigma)
        return image, sigma

    def _may_blur(self, camera_velocity: np.ndarray | None) -> bool:
        """Whether the motion blur could reach half a pixel: its bound at the nearest depth
        the camera sees (0.05 m), without the median depth :meth:`image_motion` takes."""
        if camera_velocity is None:
            return False
        velocity = np.abs(np.asarray(camera_velocity, dtype=np.float64))
        bound = self.focal * (np.hypot(velocity[0], velocity[1]) / _NEAREST_DEPTH
                              + np.hypot(velocity[3], velocity[4]))
        return bound * self.exposure_time >= 0.5


def _changed_rows(last: np.ndarray, frame: np.ndarray) -> slice | None:
    """The band of rows (first to last) where the images ``last`` and ``frame`` (same
    shape, uint8) differ; ``None`` when they are equal."""
    # each row read as 64-bit words where its bytes allow (a byte compare costs ~8x more)
    width = last[0].size
    if width % 8 == 0 and last.flags.c_contiguous and frame.flags.c_contiguous:
        differs = (last.reshape(len(last), -1).view(np.uint64)
                   != frame.reshape(len(frame), -1).view(np.uint64)).any(axis=1)
    else:
        differs = (last != frame).reshape(len(last), -1).any(axis=1)
    rows = np.flatnonzero(differs)
    return slice(int(rows[0]), int(rows[-1]) + 1) if rows.size else None


def _short_blur(image: np.ndarray, blur: np.ndarray) -> np.ndarray:
    """``image`` (H, W, 3) uint8 convolved with :func:`_line_kernel` of the (2,) blur vector
    (pixels), borders reflected: with the kernel cut to its rows and columns holding a
    non-zero tap (the same sums without their zero terms). OpenCV convolves a kernel of 130
    taps or more through the DFT, ~30x slower at 13 x 13 than the cut line's direct sum."""
    kernel = _line_kernel(blur)
    rows, cols = np.flatnonzero(kernel.any(axis=1)), np.flatnonzero(kernel.any(axis=0))
    centre = (kernel.shape[0] - 1) // 2  # the full kernel's anchor, its centre
    cut = kernel[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    return cv2.filter2D(image, -1, cut, anchor=(int(centre - cols[0]), int(centre - rows[0])),
                        borderType=cv2.BORDER_REFLECT)


def _motion_blur(image: np.ndarray, blur: np.ndarray) -> np.ndarray:
    """Linear motion blur of ``image`` (H, W, 3) uint8 along the (2,) blur vector (u, v),
    pixels: the mean of ``2^k`` copies shifted evenly along it (``k = ceil(log2 length)``),
    the shifts built by doubling — step ``j`` pairs every copy so far with itself moved by
    twice ``blur / 2^(j + 1)`` in whole pixels, so the copies sit at every sum of
    ``+-blur / 2^(j + 1)`` — borders reflected once (the image padded by the copies' reach).
    The copies are summed exactly in integers and the mean rounded once to the nearest level
    (ties to even). Cost grows with ``log2`` of the length, not with the kernel's area as a
    2-D convolution's does."""
    length = float(np.hypot(*blur))
    shifts = []
    for step in range(1, max(1, int(np.ceil(np.log2(length)))) + 1):
        half = np.asarray(blur, dtype=np.float64) / 2.0**(step + 1)  # +- this, pixels
        du, dv = (int(round(value)) for value in half)
        if du == 0 and dv == 0:
            break
        shifts.append((du, dv))
    if not shifts:
        return image
    across = sum(abs(du) for du, _ in shifts)
    down = sum(abs(dv) for _, dv in shifts)
    # 2^k copies of 8-bit levels: exact in 16 bits up to k = 8
    total = np.uint16 if len(shifts) <= 8 else np.int32
    out = cv2.copyMakeBorder(image, down, down, across, across,
                             cv2.BORDER_REFLECT).astype(total)
    for du, dv in shifts:  # each step trims its own reach from every side
        height, width = out.shape[0] - 2 * abs(dv), out.shape[1] - 2 * abs(du)
        top, left = abs(dv), abs(du)
        ahead = out[top + dv:top + dv + height, left + du:left + du + width]
        behind = out[top - dv:top - dv + height, left - du:left - du + width]
        out = cv2.add(ahead, behind)
    return cv2.convertScaleAbs(out, alpha=1.0 / 2**len(shifts))


def _line_kernel(blur: np.ndarray) -> np.ndarray:
    """Normalised linear blur kernel along the (2,) blur vector, pixels (antialiased)."""
    size = int(np.ceil(np.hypot(*blur))) | 1
    kernel = np.zeros((size, size), np.float32)
    centre = np.full(2, (size - 1) / 2.0)
    cv2.line(kernel, _fixed(centre - blur / 2), _fixed(centre + blur / 2), 1.0, 1, cv2.LINE_AA,
             shift=4)
    return kernel / kernel.sum()


def _fixed(point: np.ndarray) -> tuple[int, int]:
    """A point in cv2's 4-bit fixed point (``shift=4``)."""
    return int(round(point[0] * 16)), int(round(point[1] * 16))
