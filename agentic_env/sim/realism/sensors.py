"""Camera sensor models of the realistic world: what each device makes of an exact render.

:func:`make_sensor` builds the :class:`CameraSensor` of a camera configuration: the shoulder
camera is an Azure Kinect DK (time-of-flight depth, :mod:`.depth_tof`), the wrist camera a
RealSense D405 (passive stereo depth, :mod:`.depth_stereo`); both have a colour model
(:mod:`.rgb`) at the exposure and white balance of the scene setting, and a Brown-Conrady lens.

:meth:`CameraSensor.apply` gives what the real env hands agents after a real frame: the
device image undistorted with the coefficients the device reports
(:class:`~agentic_env.real.real_env.RealEnv`), i.e. a pinhole image with the configuration's
intrinsics. The depth and colour effects act on the pinhole render directly (their windows,
a few pixels wide, differ from the device image's by the lens's few per cent of scale), and
the lens leaves its mark where undistortion does: the pinhole pixels whose ray lands outside
the device's sensor are empty (black, no depth return;
:func:`agentic_env.geometry.distortion.outside_field`). The sub-pixel blur of undistortion's
bilinear resampling is not modelled (a distort-then-undistort round trip of the render would
add a second, unreal one and cost four remaps a frame).

Every number comes from ``world.toml`` (each table with its ``source``), read by
:func:`sensor_params` alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol, Self

import cv2
import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import CameraConfig
from agentic_env.geometry.distortion import outside_field
from agentic_env.sim.realism import section
from agentic_env.sim.realism.depth_stereo import StereoDepthModel
from agentic_env.sim.realism.depth_tof import TofDepthModel
from agentic_env.sim.realism.rgb import RgbModel, exposure, white_balance_gains
from agentic_env.sim.realism.surfaces import SurfaceSample

#: Device of each camera name.
DEVICES = {"shoulder": "kinect", "wrist": "d405"}
#: Scene settings with exposure and white-balance parameters.
SETTINGS = ("lab", "kitchen", "outdoor")
#: Seed of each sensor's table of standard-normal samples (not a world parameter: every
#: frame reads the table from an offset drawn from the caller's generator).
_NOISE_TABLE_SEED = 34


def sensor_params(name: str) -> dict[str, Any]:
    """The table ``name`` (dotted, e.g. ``"kinect.depth"``) of the sensor parameters
    (``world.toml``).

    Raises:
        InvalidConfigError: when there is no such table.
    """
    return section(name)


class DepthModel(Protocol):
    """A device's depth effects on an exact depth render."""

    @property
    def uses_grey(self) -> bool:
        """Whether :meth:`apply` reads its ``grey`` (else any array of its size will do)."""
        ...

    def apply(self, depth: np.ndarray, grey: np.ndarray, rng: np.random.Generator,
              noise: np.ndarray, surface: SurfaceSample) -> np.ndarray:
        """(H, W) float32 metres, 0 = no return, from the exact depth, the 8-bit luma of the
        lit render of the same view, a float32 standard-normal field (H, W) and what the
        world knows of the surfaces seen."""
        ...


@dataclass(frozen=True, eq=False)
class CameraSensor:
    """One RGB-D device at one configuration and setting.

    Attributes:
        config: the camera configuration (resolution, field of view, range).
        device: ``kinect`` or ``d405``.
        distortion: OpenCV lens coefficients ``(k1, k2, p1, p2, k3)``.
        depth_model: the device's depth effects.
        rgb_model: the colour camera's effects at the setting.

    Gaussian noise is read from a table of standard-normal samples (twice a colour frame's
    size, made once per sensor) at offsets drawn from the caller's generator: drawing a
    fresh 640x480x3 field costs ~15 ms, reading the table nothing.
    """

    config: CameraConfig
    device: str
    distortion: np.ndarray
    depth_model: DepthModel
    rgb_model: RgbModel

    def __post_init__(self) -> None:
        size = 2 * self.config.width * self.config.height * 3
        table = np.random.default_rng(_NOISE_TABLE_SEED).standard_normal(size, np.float32)
        object.__setattr__(self, "_noise", table)
        outside = outside_field(self.config.width, self.config.height,
                                self.config.intrinsics, self.distortion)
        object.__setattr__(self, "_outside", np.flatnonzero(outside))
        # 255 on every channel of a pixel inside the sensor's field, 0 outside: one bitwise
        # pass empties a colour frame's outside pixels (~7x an indexed write of the corners)
        inside = np.where(outside, np.uint8(0), np.uint8(255))
        object.__setattr__(self, "_inside", np.repeat(inside[:, :, None], 3, axis=2))
        no_grey = np.zeros((self.config.height, self.config.width), np.uint8)
        no_grey.setflags(write=False)
        object.__setattr__(self, "_no_grey", no_grey)

    def _normal_field(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """A standard-normal field of ``shape`` (a read-only view of the table)."""
        count = int(np.prod(shape))
        start = int(rng.integers(0, self._noise.size - count + 1))
        return self._noise[start:start + count].reshape(shape)

    def apply(self, rgb: np.ndarray, depth: np.ndarray, rng: np.random.Generator,
              camera_velocity: np.ndarray | None = None,
              surface: SurfaceSample | None = None,
              depth_model: DepthModel | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The device's frame of an exact render, as the real env hands it on (undistorted).

        Args:
            rgb: (H, W, 3) uint8 exact render.
            depth: (H, W) float32 metres along the optical axis, 0 outside the device range.
            rng: source of every random draw (a fixed order: deterministic per state).
            camera_velocity: (6,) linear (m/s) then angular (rad/s) velocity of the OpenCV
                camera frame expressed in that frame; ``None`` = still.
            surface: what the world knows of the surfaces each pixel sees (their albedo,
                world-fixed patches; :mod:`.surfaces`); ``None`` = nothing (a synthetic
                frame: default albedo, image-fixed patches).
            depth_model: the depth effects to apply instead of :attr:`depth_model`'s (the
                same effects reusing what an episode's static scene gives: for a camera
                fixed to the world, :class:`~.depth_tof_static.StaticTofDepth`).

        Returns:
            New (rgb (H, W, 3) uint8, depth (H, W) float32 metres, 0 = no return) arrays; the
            inputs are not modified.

        Raises:
            InvalidConfigError: when the images do not have the configuration's size.
        """
        cfg = self.config
        if rgb.shape != (cfg.height, cfg.width, 3) or depth.shape != (cfg.height, cfg.width):
            raise InvalidConfigError(
                f"camera {cfg.name!r}: got rgb {rgb.shape} and depth {depth.shape}, expected "
                f"{(cfg.height, cfg.width, 3)} and {(cfg.height, cfg.width)}")
        depth = depth.astype(np.float32, copy=False)
        model = depth_model or self.depth_model
        # the luma only for a model that reads it (the Kinect's indoors does not)
        grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY) if model.uses_grey else self._no_grey
        out_depth = model.apply(depth, grey, rng, self._normal_field(rng, depth.shape),
                                surface or SurfaceSample())
        out_rgb = self.rgb_model.apply(rgb, depth, self._normal_field(rng, rgb.shape),
                                       camera_velocity)
        if self._outside.size:
            cv2.bitwise_and(out_rgb, self._inside, dst=out_rgb)
            out_depth.reshape(-1)[self._outside] = 0.0
        return out_rgb, out_depth

    def with_unit(self, rng: np.random.Generator) -> Self:
        """This model for one physical unit: unit-to-unit parameters (the Kinect's systematic
        depth error) drawn within their datasheet bounds; call once per episode."""
        if isinstance(self.depth_model, TofDepthModel):
            return replace(self, depth_model=self.depth_model.with_unit_bias(rng))
        return self


def make_sensor(config: CameraConfig, setting: str) -> CameraSensor:
    """The device model for ``config`` (name ``shoulder`` -> Azure Kinect DK depth + colour,
    ``wrist`` -> RealSense D405) at its resolution and field of view, with the exposure and
    white balance of ``setting`` (``lab``, ``kitchen``, ``outdoor``).

    Raises:
        InvalidConfigError: on an unknown camera name or setting (the message lists the valid
            ones).
    """
    if config.name not in DEVICES:
        raise InvalidConfigError(f"no sensor model for camera {config.name!r}; valid: "
                                 f"{', '.join(DEVICES)}")
    if setting not in SETTINGS:
        raise InvalidConfigError(f"no sensor setting {setting!r}; valid: {', '.join(SETTINGS)}")
    device = DEVICES[config.name]
    focal = float(config.intrinsics[0, 0])
    depth_params = sensor_params(f"{device}.depth")
    depth_model: DepthModel
    if device == "kinect":
        depth_model = TofDepthModel(
            config.intrinsics, config.width, config.height, config.depth_min,
            config.depth_max, depth_params,
            ambient_850nm=sensor_params(f"rgb.setting.{setting}")["irradiance_850nm"])
    else:
        depth_model = StereoDepthModel(focal, config.depth_min, config.depth_max, depth_params)
    return CameraSensor(config, device,
                        np.asarray(sensor_params(f"{device}.lens")["coefficients"], float),
                        depth_model, _rgb_model(device, focal, setting))


def _rgb_model(device: str, focal: float, setting: str) -> RgbModel:
    sensor = sensor_params(f"{device}.rgb")
    meter = sensor_params("rgb.exposure")
    light = sensor_params(f"rgb.setting.{setting}")
    balance = sensor_params("rgb.white_balance")
    time, gain = exposure(light["illuminance"], meter["f_number"], meter["iso"],
                          meter["meter_constant"], meter["grey_reflectance"],
                          sensor["frame_rate"])
    gains = white_balance_gains(np.asarray(light["illuminant"]),
                                np.asarray(balance["reference"]), balance["awb_residual"])
    return RgbModel(focal, time, gain, sensor["full_well"], sensor["read_noise"], gains)
