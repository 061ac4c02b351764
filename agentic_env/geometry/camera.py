"""Pinhole RGB-D camera models with real-device optics: intrinsics, back-projection, projection.

Conventions used everywhere in the package (sim and real):

* **Intrinsics** ``K`` (3x3): the pinhole matrix of the *OpenCV* camera frame (x right,
  y down, z forward), in pixels. Pixels are square, the principal point is the image centre.
* **Extrinsics** (4x4): the pose of that OpenCV camera frame in the robot base frame, i.e. it
  maps camera-frame points to base-frame points (``p_base = E @ [p_cam, 1]``).
* **Depth** (H, W) float32, metres, measured along the optical axis (z of the camera frame),
  and exactly 0 where the device would give no return (outside its working range).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentic_env.errors import InvalidConfigError

#: The skybox lies beyond this fraction of the far clipping distance; depth_max must not.
SKYBOX_DEPTH_FRACTION = 0.4
#: MuJoCo cameras look along -z with y up; OpenCV cameras look along +z with y down.
MUJOCO_TO_OPENCV = np.diag([1.0, -1.0, -1.0])


@dataclass(frozen=True)
class CameraConfig:
    """Optics and output of one RGB-D camera.

    Attributes:
        name: camera name in the MJCF model (``shoulder`` or ``wrist``).
        width: image width, pixels (16-4096).
        height: image height, pixels (16-4096).
        fovy_deg: vertical field of view, degrees (1-170). The horizontal field of view
            follows from the aspect ratio with square pixels.
        depth_min: nearest range the device returns, metres.
        depth_max: farthest range the device returns, metres.
        depth_noise_std: standard deviation of seeded Gaussian depth noise at 1 m, metres;
            the noise grows with the square of the depth like a stereo/ToF sensor. 0 = none.
    """

    name: str
    width: int
    height: int
    fovy_deg: float
    depth_min: float
    depth_max: float
    depth_noise_std: float = 0.0

    def __post_init__(self) -> None:
        if not (16 <= self.width <= 4096 and 16 <= self.height <= 4096):
            raise InvalidConfigError(
                f"camera {self.name!r}: resolution {self.width}x{self.height} is outside "
                "16..4096 pixels per side"
            )
        if not 1.0 <= self.fovy_deg <= 170.0:
            raise InvalidConfigError(
                f"camera {self.name!r}: fovy_deg={self.fovy_deg} is outside 1..170 degrees"
            )
        if not 0.0 <= self.depth_min < self.depth_max:
            raise InvalidConfigError(
                f"camera {self.name!r}: need 0 <= depth_min < depth_max, got "
                f"{self.depth_min}, {self.depth_max}"
            )
        if self.depth_noise_std < 0.0:
            raise InvalidConfigError(f"camera {self.name!r}: depth_noise_std must be >= 0")

    @property
    def intrinsics(self) -> np.ndarray:
        """Pinhole matrix K (3x3, float64, pixels) of the OpenCV camera frame."""
        return pinhole_intrinsics(self.width, self.height, self.fovy_deg)

    @property
    def fovx_deg(self) -> float:
        """Horizontal field of view, degrees."""
        half_y = np.tan(np.deg2rad(self.fovy_deg) / 2.0)
        return float(np.rad2deg(2.0 * np.arctan(half_y * self.width / self.height)))


def pinhole_intrinsics(width: int, height: int, fovy_deg: float) -> np.ndarray:
    """Return K for square pixels, principal point at the image centre (pixels)."""
    focal = 0.5 * height / np.tan(np.deg2rad(fovy_deg) / 2.0)
    return np.array(
        [[focal, 0.0, width / 2.0], [0.0, focal, height / 2.0], [0.0, 0.0, 1.0]]
    )


def azure_kinect_color(width: int = 640, height: int = 360) -> CameraConfig:
    """Shoulder camera: Azure Kinect colour camera (90 x 59 deg at 16:9), NFOV depth range."""
    return CameraConfig("shoulder", width, height, fovy_deg=59.0, depth_min=0.5, depth_max=3.86)


def realsense_d405(width: int = 640, height: int = 360) -> CameraConfig:
    """Wrist camera: Intel RealSense D405 (87 x 58 deg), depth range 7-50 cm."""
    return CameraConfig("wrist", width, height, fovy_deg=58.0, depth_min=0.07, depth_max=0.5)


def depth_to_points(depth: np.ndarray, intrinsics: np.ndarray) -> np.ndarray:
    """Back-project a depth image to camera-frame points.

    Args:
        depth: (H, W) metres along the optical axis; 0 = no return.
        intrinsics: (3, 3) pinhole matrix.

    Returns:
        (H, W, 3) float32 points in the OpenCV camera frame, metres (0 where depth is 0).
    """
    height, width = depth.shape
    u, v = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    x = (u - intrinsics[0, 2]) / intrinsics[0, 0] * depth
    y = (v - intrinsics[1, 2]) / intrinsics[1, 1] * depth
    return np.stack([x, y, depth], axis=-1).astype(np.float32)


def project_points(points_cam: np.ndarray, intrinsics: np.ndarray) -> np.ndarray:
    """Project (N, 3) camera-frame points to (N, 2) pixel coordinates (u right, v down).

    Pixel (0, 0) is the top-left corner of the top-left pixel, so pixel ``(r, c)`` covers
    ``u in [c, c+1)`` and ``v in [r, r+1)``.
    """
    uvw = points_cam @ intrinsics.T
    return uvw[:, :2] / uvw[:, 2:3]
