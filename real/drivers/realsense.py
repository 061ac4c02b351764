"""RealSense D405 wrist camera via ``pyrealsense2`` (imported lazily on ``connect``).

RGB and z16 depth at the same resolution (default 848x480, 87 x 58 degrees), depth aligned to
colour with ``rs.align``, the colour stream's intrinsics and lens distortion
(:attr:`RealSenseCamera.distortion`, which the real env undistorts both images with) and the
device's depth scale (0.1 mm on the D405). ``pyrealsense2`` is in the ``real`` extra and
needs the Debian package ``libusb-1.0-0``.
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

_INSTALL = ("install the 'real' extra (pip install 'agentic-env[real]') and the Debian "
            "package libusb-1.0-0")


class RealSenseCamera(Connectable):
    """:class:`~agentic_env.real.drivers.base.CameraDriver` for a RealSense D405.

    Args:
        serial_number: device serial, or ``None`` for the only one attached.
        width: stream width, pixels.
        height: stream height, pixels.
        fps: frame rate.
        clock: host clock stamped on frames, seconds (the env's clock).
    """

    def __init__(self, serial_number: str | None = None, width: int = 848, height: int = 480,
                 fps: int = 30, clock: Callable[[], float] = time.monotonic) -> None:
        self.serial_number = serial_number
        self.width, self.height, self.fps = width, height, fps
        self.clock = clock
        self._pipeline = None
        self._align = None
        self._scale = 1e-4
        self._intrinsics = np.eye(3)
        self._distortion = np.zeros(5)

    @property
    def distortion(self) -> np.ndarray:
        """The colour stream's Brown-Conrady coefficients in OpenCV order
        ``(k1, k2, p1, p2, k3)`` (``rs2_intrinsics.coeffs``; zeros until connected). Depth is
        aligned to colour, so the same lens model applies to it. librealsense labels D400
        colour streams "inverse Brown-Conrady"; they are used here as the forward model, as
        realsense-ros publishes them (``plumb_bob``): a relabelling pull request
        (librealsense #13833) was closed unmerged, so the label is disputed, not settled."""
        return self._distortion.copy()

    def connect(self) -> None:
        """Start the RGB and depth streams."""
        rs = require("pyrealsense2", "the RealSense driver", _INSTALL)
        pipeline, config = rs.pipeline(), rs.config()
        if self.serial_number:
            config.enable_device(self.serial_number)
        config.enable_stream(rs.stream.depth, self.width, self.height, rs.format.z16, self.fps)
        config.enable_stream(rs.stream.color, self.width, self.height, rs.format.rgb8, self.fps)
        try:
            profile = pipeline.start(config)
        except RuntimeError as error:
            raise ConnectionLostError(f"RealSense {self.serial_number or ''}: {error}") from None
        self._scale = float(profile.get_device().first_depth_sensor().get_depth_scale())
        stream = profile.get_stream(rs.stream.color).as_video_stream_profile()
        intr = stream.get_intrinsics()
        # librealsense: pixel centres at integers; ours at + 0.5
        self._intrinsics = np.array([[intr.fx, 0.0, intr.ppx + 0.5],
                                     [0.0, intr.fy, intr.ppy + 0.5], [0.0, 0.0, 1.0]])
        self._distortion = np.asarray(intr.coeffs, dtype=float)
        self._pipeline, self._align = pipeline, rs.align(rs.stream.color)

    def disconnect(self) -> None:
        """Stop streaming."""
        if self._pipeline is not None:
            self._pipeline.stop()
            self._pipeline = None

    def capture(self, timeout: float) -> RawFrame:
        """Newest frame pair, depth aligned to colour."""
        if self._pipeline is None:
            raise ConnectionLostError("the RealSense is not connected; call connect() first")
        try:
            frames = self._pipeline.wait_for_frames(max(1, round(timeout * 1000)))
        except RuntimeError:
            raise FrameTimeoutError(f"no RealSense frame in {timeout:.2f} s") from None
        aligned = self._align.process(frames)
        color = np.asanyarray(aligned.get_color_frame().get_data()).copy()
        depth = np.asanyarray(aligned.get_depth_frame().get_data()).copy()
        return RawFrame(color=color, color_format="rgb8", depth=depth, depth_scale=self._scale,
                        intrinsics=self._intrinsics, timestamp=self.clock())
