"""Twin cameras: the :class:`~agentic_env.real.drivers.base.CameraDriver` interface over the
world's MuJoCo cameras, at the real devices' native resolutions and formats.

:func:`azure_kinect_twin` renders 1280x720 BGRA with depth in millimetres (uint16), like
``pyk4a``'s colour image and ``transformed_depth``; :func:`realsense_d405_twin` renders
848x480 RGB with depth in 0.1 mm units, like the D405. The real env then crops, resizes and
converts them exactly as it does real frames. The twins render pinhole images, so their lens
distortion (:attr:`TwinCamera.distortion`) is zero and the real env's undistortion leaves
them unchanged. Fault injection: :meth:`TwinCamera.drop_frames`
(the device keeps delivering its last frame, so its timestamp ages) and
:meth:`TwinCamera.stall` (no frame at all: a timeout).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentic_env.geometry.camera import CameraConfig
from agentic_env.real.drivers.base import (
    Connectable,
    ConnectionLostError,
    FrameTimeoutError,
    RawFrame,
)
from agentic_env.real.twin.world import TwinWorld
from agentic_env.sim.cameras import CameraRenderer


@dataclass(frozen=True)
class NativeFormat:
    """A device's native stream.

    Attributes:
        width: pixels.
        height: pixels.
        color_format: ``bgra8`` or ``rgb8``.
        depth_scale: metres per depth unit.
        depth_min: nearest return, metres.
        depth_max: farthest return, metres.
    """

    width: int
    height: int
    color_format: str
    depth_scale: float
    depth_min: float
    depth_max: float


#: Azure Kinect: 720p BGRA colour, NFOV unbinned depth (0.5-3.86 m) in millimetres.
AZURE_KINECT_720P = NativeFormat(1280, 720, "bgra8", 0.001, 0.5, 3.86)
#: RealSense D405: 848x480 RGB, depth 7-50 cm in 0.1 mm units.
REALSENSE_D405_848 = NativeFormat(848, 480, "rgb8", 0.0001, 0.07, 0.5)


class TwinCamera(Connectable):
    """Renders one of the world's cameras in a device's native format.

    Args:
        world: the simulated cell.
        name: ``shoulder`` or ``wrist``.
        native: the device's stream format.
    """

    def __init__(self, world: TwinWorld, name: str, native: NativeFormat) -> None:
        self.world = world
        self.name = name
        self.native = native
        self._renderer: CameraRenderer | None = None
        self._last: RawFrame | None = None
        self._drop = 0
        self._stalled = False

    @property
    def distortion(self) -> np.ndarray:
        """Brown-Conrady coefficients in OpenCV order: zeros (the twin renders a pinhole)."""
        return np.zeros(5)

    def connect(self) -> None:
        """Create the renderer (the world's offscreen buffer grows to the native size)."""
        env, native = self.world.env, self.native
        model = env.model
        camera_id = env.camera_id(self.name)
        model.vis.global_.offwidth = max(model.vis.global_.offwidth, native.width)
        model.vis.global_.offheight = max(model.vis.global_.offheight, native.height)
        config = CameraConfig(self.name, native.width, native.height,
                              fovy_deg=float(model.cam_fovy[camera_id]),
                              depth_min=native.depth_min, depth_max=native.depth_max)
        self._renderer = CameraRenderer(model, config, model.camera(camera_id).name)

    def disconnect(self) -> None:
        """Release the renderer."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    def drop_frames(self, count: int) -> None:
        """The next ``count`` captures return the previous frame again (old timestamp)."""
        self._drop += count

    def stall(self, stalled: bool = True) -> None:
        """Deliver no frames at all (captures time out) until called with ``False``."""
        self._stalled = stalled

    def capture(self, timeout: float) -> RawFrame:
        """Render the current world state in the native format."""
        if self._renderer is None:
            raise ConnectionLostError(f"twin {self.name} camera is not connected")
        if self._stalled:
            raise FrameTimeoutError(f"no {self.name} frame in {timeout:.2f} s (stalled twin)")
        if self._drop and self._last is not None:
            self._drop -= 1
            return self._last
        native = self.native
        with self.world.lock:
            rgb, depth = self._renderer.render(self.world.env.data, None)
            timestamp = self.world.time
        units = np.round(depth / native.depth_scale)
        raw_depth = np.clip(units, 0, np.iinfo(np.uint16).max).astype(np.uint16)
        if native.color_format == "bgra8":
            color = np.concatenate([rgb[..., ::-1], np.full(rgb.shape[:2] + (1,), 255, np.uint8)],
                                   axis=-1)
        else:
            color = rgb
        self._last = RawFrame(color=color, color_format=native.color_format, depth=raw_depth,
                              depth_scale=native.depth_scale,
                              intrinsics=self._renderer.config.intrinsics, timestamp=timestamp)
        return self._last


def azure_kinect_twin(world: TwinWorld) -> TwinCamera:
    """The shoulder camera as an Azure Kinect at 720p."""
    return TwinCamera(world, "shoulder", AZURE_KINECT_720P)


def realsense_d405_twin(world: TwinWorld) -> TwinCamera:
    """The wrist camera as a D405 at 848x480."""
    return TwinCamera(world, "wrist", REALSENSE_D405_848)
