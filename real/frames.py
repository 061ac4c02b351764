"""From a device's native frame to the observation's camera entries.

A :class:`~agentic_env.real.drivers.base.RawFrame` arrives at the device's resolution and
formats (Azure Kinect BGRA + millimetre depth, D405 RGB + 0.1 mm depth). :func:`fit_frame`
converts it to the contract's RGB uint8 and float32 metres, crops it centrally to the
configured aspect ratio, resizes it to the configured resolution and adjusts the intrinsics
to match (crop shifts the principal point, resizing scales the focal lengths and principal
point; pixel centres at integer + 0.5, as in :mod:`agentic_env.sim.cameras`). Depth is resized
with nearest neighbours (never averaged across edges) and ranged like the sim's.
:func:`camera_frame` also undistorts the result with the device's lens coefficients (what
the real env and the LeRobot camera plugin deliver). :func:`check_fresh` refuses frames
older than a bound.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import CameraConfig
from agentic_env.geometry.distortion import undistort
from agentic_env.real.drivers.base import RawFrame
from agentic_env.real.safety import FaultKind, SafetyFault, SafetyFaultError

#: Pillow raw decoder mode of each colour format (to RGB).
_PIL_RAW = {"rgb8": "RGB", "bgr8": "BGR", "bgra8": "BGRX"}


def crop_box(width: int, height: int, target_width: int, target_height: int
             ) -> tuple[int, int, int, int]:
    """Central crop (x0, y0, x1, y1) of a ``width`` x ``height`` image with the target's
    aspect ratio (pixels)."""
    if width * target_height > height * target_width:  # too wide: crop columns
        crop_w = round(height * target_width / target_height)
        x0 = (width - crop_w) // 2
        return x0, 0, x0 + crop_w, height
    crop_h = round(width * target_height / target_width)
    y0 = (height - crop_h) // 2
    return 0, y0, width, y0 + crop_h


def adjust_intrinsics(intrinsics: np.ndarray, box: tuple[int, int, int, int],
                      width: int, height: int) -> np.ndarray:
    """Intrinsics (3, 3) after cropping to ``box`` and resizing to ``width`` x ``height``."""
    x0, y0, x1, y1 = box
    adjusted = np.asarray(intrinsics, dtype=float).copy()
    adjusted[0, 2] -= x0
    adjusted[1, 2] -= y0
    adjusted[0] *= width / (x1 - x0)
    adjusted[1] *= height / (y1 - y0)
    adjusted[2] = (0.0, 0.0, 1.0)
    return adjusted


def fit_frame(raw: RawFrame, camera: CameraConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """RGB (H, W, 3) uint8, depth (H, W) float32 metres and intrinsics (3, 3) at the
    ``camera``'s resolution; depth outside ``[depth_min, depth_max]`` is 0.

    Raises:
        InvalidConfigError: on an unknown colour format or mismatched image sizes.
    """
    if raw.color_format not in _PIL_RAW:
        raise InvalidConfigError(f"colour format {raw.color_format!r}; valid: "
                                 f"{', '.join(_PIL_RAW)}")
    height, width = raw.color.shape[:2]
    if raw.depth.shape != (height, width):
        raise InvalidConfigError(
            f"depth {raw.depth.shape} is not registered to the colour image {(height, width)}: "
            "the driver must align depth to colour"
        )
    box = crop_box(width, height, camera.width, camera.height)
    x0, y0, x1, y1 = box
    size = (camera.width, camera.height)
    crop = np.ascontiguousarray(raw.color[y0:y1, x0:x1])
    image = Image.frombuffer("RGB", (x1 - x0, y1 - y0), crop, "raw", _PIL_RAW[raw.color_format],
                             0, 1)
    if image.size != size:
        shrinking = camera.width < x1 - x0
        image = image.resize(size, Image.Resampling.BOX if shrinking
                             else Image.Resampling.BILINEAR)
    rgb = np.asarray(image)
    # nearest neighbours on the raw units first (PIL's NEAREST sampling: pixel centres)
    rows = y0 + ((np.arange(camera.height) + 0.5) * (y1 - y0) / camera.height).astype(int)
    cols = x0 + ((np.arange(camera.width) + 0.5) * (x1 - x0) / camera.width).astype(int)
    depth = raw.depth[rows[:, None], cols].astype(np.float32) * np.float32(raw.depth_scale)
    depth[(depth < camera.depth_min) | (depth > camera.depth_max)] = 0.0
    return rgb, depth, adjust_intrinsics(raw.intrinsics, box, camera.width, camera.height)


def camera_frame(raw: RawFrame, camera: CameraConfig, distortion: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`fit_frame`, then undistorted with the lens ``distortion`` (OpenCV order; colour
    bilinear, depth nearest so 0 stays no return). The coefficients act on normalised
    coordinates, so the crop and resize leave them unchanged.

    Returns:
        RGB (H, W, 3) uint8, depth (H, W) float32 metres, intrinsics (3, 3) pixels.
    """
    rgb, depth, intrinsics = fit_frame(raw, camera)
    return (undistort(rgb, intrinsics, distortion, nearest=False),
            undistort(depth, intrinsics, distortion, nearest=True), intrinsics)


def check_fresh(raw: RawFrame, camera: str, now: float, max_age: float) -> None:
    """Raise unless ``raw`` is at most ``max_age`` s old at ``now`` (same clock).

    Raises:
        SafetyFaultError: of kind ``stale_frame``.
    """
    age = now - raw.timestamp
    if age > max_age:
        raise SafetyFaultError(SafetyFault(
            FaultKind.STALE_FRAME,
            f"the {camera} camera's newest frame is {age * 1000:.0f} ms old (limit "
            f"{max_age * 1000:.0f} ms): check its cable and that it is streaming", now))
