"""The workcell's RGB-D cameras as LeRobot :class:`~lerobot.cameras.Camera` objects.

Each camera wraps one of the project's camera drivers — :class:`AgenticKinectCamera` the
Azure Kinect (:mod:`agentic_env.real.drivers.kinect`), :class:`AgenticD405Camera` the
RealSense D405 (:mod:`agentic_env.real.drivers.realsense`), or with ``twin`` their MuJoCo
twins (:mod:`agentic_env.real.twin.camera`) in a simulated cell of their own — and delivers
RGB (H, W, 3) uint8 at the configured resolution, cropped, resized and undistorted by
:func:`agentic_env.real.frames.camera_frame`, as :class:`agentic_env.real.RealEnv` sees it;
with ``use_depth`` also depth (H, W, 1) uint16 millimetres (0 = no return), the dataset
exporter's depth unit. ``async_read`` waits for the device's next frame (the drivers block on
it); ``read_latest`` returns the last frame read if it is recent enough.

A robot that owns the drivers (``agentic_ur5e``) hands them over with
:meth:`AgenticCamera.attach`: the camera then reads through the robot's connected driver and
never opens or closes the device itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from lerobot.cameras import Camera
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError

from agentic_env.contract.features import depth_millimetres
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import CameraConfig as Optics
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.real.drivers.base import (
    CameraDriver,
    FrameTimeoutError,
    MissingDriverError,
    require,
)
from agentic_env.real.frames import camera_frame
from lerobot_camera_agentic.config_agentic_camera import (
    AgenticCameraConfig,
    AgenticD405CameraConfig,
    AgenticKinectCameraConfig,
)


class AgenticCamera(Camera):
    """A workcell camera (see the module docstring); subclasses name the device.

    Args:
        config: the camera's configuration.
    """

    #: Optics of the camera's view in the workcell at a given resolution.
    optics_of: Callable[[int, int], Optics]

    def __init__(self, config: AgenticCameraConfig) -> None:
        super().__init__(config)
        self.config = config
        #: Optics of the delivered image (name ``shoulder`` or ``wrist``, resolution, range).
        self.optics = type(self).optics_of(config.width, config.height)
        self._driver: CameraDriver | None = None
        self._owned = False
        self._closers: list[Callable[[], None]] = []
        self._rgb: np.ndarray | None = None
        self._depth: np.ndarray | None = None
        self._intrinsics = np.eye(3)
        self._read_at = 0.0

    def __str__(self) -> str:
        return f"{type(self).__name__}({self.optics.name})"

    @property
    def is_connected(self) -> bool:
        """Whether a driver is open (owned) or attached (a robot's)."""
        return self._driver is not None

    @property
    def intrinsics(self) -> np.ndarray:
        """(3, 3) pinhole matrix of the delivered image (after the last read), pixels."""
        return self._intrinsics.copy()

    def device_driver(self) -> CameraDriver:
        """The device's driver (not yet connected)."""
        raise NotImplementedError

    def connect(self, warmup: bool = True) -> None:
        """Open the device (or the twin) and, with ``warmup``, read one frame.

        Raises:
            DeviceAlreadyConnectedError: when connected already.
            MissingDriverError: when the device's Python package is missing (names it).
            ConnectionLostError: when the device does not open.
        """
        if self.is_connected:
            raise DeviceAlreadyConnectedError(f"{self} is already connected")
        driver = self._twin_driver() if self.config.twin else self.device_driver()
        try:
            driver.connect()
        except BaseException:
            self._close_twin()
            raise
        self._driver, self._owned = driver, True
        if warmup:
            self.read()

    def attach(self, driver: CameraDriver) -> None:
        """Read through ``driver``, which its owner (a robot) connects and disconnects."""
        self._driver, self._owned = driver, False

    def detach(self) -> None:
        """Forget an attached driver (its owner disconnects it)."""
        if not self._owned:
            self._driver = None

    def disconnect(self) -> None:
        """Close the device (or the twin); an attached driver is only forgotten.

        Raises:
            DeviceNotConnectedError: when not connected.
        """
        if self._driver is None:
            raise DeviceNotConnectedError(f"{self} is not connected; call connect() first")
        driver, owned = self._driver, self._owned
        self._driver = None
        if owned:
            try:
                driver.disconnect()
            finally:
                self._close_twin()

    def read(self) -> np.ndarray:
        """The next frame's RGB (H, W, 3) uint8 (blocks up to ``timeout_s``)."""
        return self._read(self.config.timeout_s)

    def async_read(self, timeout_ms: float = 200.0) -> np.ndarray:
        """The next frame's RGB (H, W, 3) uint8, waiting at most ``timeout_ms``.

        Raises:
            TimeoutError: when no frame arrives in time.
        """
        return self._read(timeout_ms / 1000.0)

    def read_latest(self, max_age_ms: int = 500) -> np.ndarray:
        """The last frame read (RGB), without waiting.

        Raises:
            TimeoutError: when it is older than ``max_age_ms``.
            RuntimeError: when nothing was read yet.
        """
        self._check_latest(max_age_ms)
        return self._rgb

    def read_depth(self, timeout_ms: float = 1000.0) -> np.ndarray:
        """The next frame's depth (H, W, 1) uint16 millimetres (0 = no return).

        Raises:
            InvalidConfigError: without ``use_depth``.
        """
        self._require_depth()
        self._read(timeout_ms / 1000.0)
        return self._depth

    def read_latest_depth(self, max_age_ms: int = 500) -> np.ndarray:
        """The last frame's depth (H, W, 1) uint16 millimetres, without waiting."""
        self._require_depth()
        self._check_latest(max_age_ms)
        return self._depth

    def _read(self, timeout: float) -> np.ndarray:
        if self._driver is None:
            raise DeviceNotConnectedError(f"{self} is not connected; call connect() first")
        try:
            raw = self._driver.capture(timeout)
        except FrameTimeoutError as error:
            raise TimeoutError(f"{self}: {error}") from error
        rgb, depth, self._intrinsics = camera_frame(raw, self.optics, self._driver.distortion)
        self._rgb = rgb
        if self.config.use_depth:
            self._depth = depth_millimetres(depth)[..., None]
        self._read_at = time.monotonic()
        return rgb

    def _check_latest(self, max_age_ms: int) -> None:
        if self._driver is None:
            raise DeviceNotConnectedError(f"{self} is not connected; call connect() first")
        if self._rgb is None:
            raise RuntimeError(f"{self} has delivered no frame yet; call read() first")
        age_ms = (time.monotonic() - self._read_at) * 1000.0
        if age_ms > max_age_ms:
            raise TimeoutError(f"{self}: the latest frame is {age_ms:.0f} ms old (limit "
                               f"{max_age_ms} ms)")

    def _require_depth(self) -> None:
        if not self.config.use_depth:
            raise InvalidConfigError(f"{self} delivers no depth: set use_depth=true")

    def _twin_driver(self) -> CameraDriver:
        """The camera's twin in a freshly reset simulated cell of its own."""
        from agentic_env.contract.workcell import SceneConfig
        from agentic_env.envs.sim_env import SimEnv
        from agentic_env.real.twin.camera import azure_kinect_twin, realsense_d405_twin
        from agentic_env.real.twin.world import TwinWorld

        env = SimEnv(task=self.config.twin_task,
                     scene=SceneConfig.at_resolution(self.config.width, self.config.height))
        self._closers.append(env.close)
        env.reset(seed=self.config.twin_seed)
        twin = azure_kinect_twin if self.optics.name == "shoulder" else realsense_d405_twin
        return twin(TwinWorld(env))

    def _close_twin(self) -> None:
        while self._closers:
            self._closers.pop()()


class AgenticKinectCamera(AgenticCamera):
    """The Azure Kinect shoulder camera (``--...cameras.<name>.type=agentic_kinect``)."""

    config_class = AgenticKinectCameraConfig
    optics_of = staticmethod(azure_kinect_color)

    def __init__(self, config: AgenticKinectCameraConfig) -> None:
        if config.fps != 30:
            raise InvalidConfigError(f"the Azure Kinect streams at 30 fps; got fps={config.fps}")
        super().__init__(config)

    def device_driver(self) -> CameraDriver:
        """An :class:`~agentic_env.real.drivers.kinect.AzureKinectCamera` for ``device_id``."""
        from agentic_env.real.drivers.kinect import AzureKinectCamera

        return AzureKinectCamera(self.config.device_id, clock=time.monotonic)

    @staticmethod
    def find_cameras() -> list[dict[str, Any]]:
        """Attached Azure Kinects (empty without ``pyk4a``)."""
        try:
            pyk4a = require("pyk4a", "finding Azure Kinects", "install pyk4a")
        except MissingDriverError:
            return []
        return [{"type": "agentic_kinect", "id": index, "name": "Azure Kinect"}
                for index in range(pyk4a.connected_device_count())]


class AgenticD405Camera(AgenticCamera):
    """The RealSense D405 wrist camera (``--...cameras.<name>.type=agentic_d405``)."""

    config_class = AgenticD405CameraConfig
    optics_of = staticmethod(realsense_d405)

    def device_driver(self) -> CameraDriver:
        """A :class:`~agentic_env.real.drivers.realsense.RealSenseCamera` (848x480 stream)."""
        from agentic_env.real.drivers.realsense import RealSenseCamera

        return RealSenseCamera(self.config.serial_number or None, fps=self.config.fps,
                               clock=time.monotonic)

    @staticmethod
    def find_cameras() -> list[dict[str, Any]]:
        """Attached RealSense devices (empty without ``pyrealsense2``)."""
        try:
            rs = require("pyrealsense2", "finding RealSense cameras", "install the 'real' extra")
        except MissingDriverError:
            return []
        return [{"type": "agentic_d405", "id": device.get_info(rs.camera_info.serial_number),
                 "name": device.get_info(rs.camera_info.name)}
                for device in rs.context().query_devices()]
