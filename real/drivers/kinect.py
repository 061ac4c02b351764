"""Azure Kinect shoulder camera via ``pyk4a`` (imported lazily on ``connect``).

Colour BGRA at 1280x720 (90 x 59 degrees), NFOV unbinned depth transformed into the colour
camera (``transformed_depth``, millimetres), factory colour intrinsics and lens distortion
(:attr:`AzureKinectCamera.distortion`, which the real env undistorts both images with).
``pyk4a`` builds against the vendor's Azure Kinect Sensor SDK, which no package registry
provides, so it is in no extra: install the SDK, then ``pip install pyk4a``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from agentic_env.real.drivers.base import (
    Connectable,
    ConnectionLostError,
    FrameTimeoutError,
    RawFrame,
    require,
)

_INSTALL = ("install the Azure Kinect Sensor SDK from the vendor, then `pip install pyk4a` "
            "(neither is in an extra)")
#: The Azure Kinect reports depth in millimetres.
DEPTH_SCALE = 0.001


class AzureKinectCamera(Connectable):
    """:class:`~agentic_env.real.drivers.base.CameraDriver` for an Azure Kinect.

    Args:
        device_id: index of the device on this host.
        clock: host clock stamped on frames, seconds (the env's clock).
    """

    def __init__(self, device_id: int = 0, clock: Callable[[], float] = time.monotonic) -> None:
        self.device_id = device_id
        self.clock = clock
        self._device = None
        self._pyk4a = None
        self._intrinsics = np.eye(3)
        self._distortion = np.zeros(8)

    @property
    def distortion(self) -> np.ndarray:
        """The colour camera's factory Brown-Conrady coefficients in OpenCV order
        ``(k1, k2, p1, p2, k3, k4, k5, k6)`` (zeros until connected). The transformed depth
        is registered to the colour camera, so the same lens model applies to it."""
        return self._distortion.copy()

    def connect(self) -> None:
        """Start colour (720p BGRA) and NFOV depth at 30 fps, synchronised."""
        pyk4a = require("pyk4a", "the Azure Kinect driver", _INSTALL)
        config = pyk4a.Config(
            color_resolution=pyk4a.ColorResolution.RES_720P,
            color_format=pyk4a.ImageFormat.COLOR_BGRA32,
            depth_mode=pyk4a.DepthMode.NFOV_UNBINNED,
            camera_fps=pyk4a.FPS.FPS_30,
            synchronized_images_only=True,
        )
        try:
            device = pyk4a.PyK4A(config, device_id=self.device_id)
            device.start()
        except pyk4a.K4AException as error:
            raise ConnectionLostError(f"Azure Kinect {self.device_id}: {error}") from None
        self._device, self._pyk4a = device, pyk4a
        matrix = np.asarray(device.calibration.get_camera_matrix(pyk4a.CalibrationType.COLOR))
        self._intrinsics = matrix.astype(float)
        self._intrinsics[:2, 2] += 0.5  # SDK: pixel centres at integers; ours at + 0.5
        self._distortion = np.asarray(device.calibration.get_distortion_coefficients(
            pyk4a.CalibrationType.COLOR), dtype=float)

    def disconnect(self) -> None:
        """Stop the cameras."""
        if self._device is not None:
            self._device.stop()
            self._device = None

    def capture(self, timeout: float) -> RawFrame:
        """Newest synchronised capture."""
        if self._device is None:
            raise ConnectionLostError("the Azure Kinect is not connected; call connect() first")
        try:
            capture = self._device.get_capture(timeout=max(1, round(timeout * 1000)))
        except self._pyk4a.K4ATimeoutException:
            raise FrameTimeoutError(f"no Azure Kinect frame in {timeout:.2f} s") from None
        except self._pyk4a.K4AException as error:
            raise ConnectionLostError(f"Azure Kinect failed: {error}") from None
        return RawFrame(color=capture.color, color_format="bgra8",
                        depth=capture.transformed_depth, depth_scale=DEPTH_SCALE,
                        intrinsics=self._intrinsics, timestamp=self.clock())
