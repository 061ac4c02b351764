"""RGB-D observations to point clouds in the robot base frame.

Every function reads only the observation contract (:mod:`agentic_env.contract.spaces`): the
camera's ``<cam>_rgb``, ``<cam>_depth`` (metres, 0 = no return), ``<cam>_intrinsics`` (OpenCV
pinhole) and ``<cam>_extrinsics`` (camera -> robot base). The depth is read post-processed as
a camera stack does (:func:`camera_depth`: outliers removed, small holes filled, the stereo
camera's smoothed), on simulated and real depth alike. Points are in the robot base frame
(z up, the table top is z = 0), metres. Pixels are ``(u, v)`` = (column, row) integers; pixel
``(u, v)`` covers ``[u, u+1) x [v, v+1)`` in the continuous image coordinates of
:func:`agentic_env.geometry.camera.project_points`.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agentic_env.agents.perception.depth_filter import camera_profile, filter_depth
from agentic_env.agents.perception.gripper import gripper_geometry, points_in_boxes
from agentic_env.contract.actions import vector_to_pose
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import depth_to_points, project_points


@dataclass(frozen=True)
class PointCloud:
    """Points with their colours and source pixels.

    Attributes:
        points: (N, 3) float64, robot base frame, metres.
        colors: (N, 3) uint8 RGB.
        pixels: (N, 2) int64 ``(u, v)`` of each point in its source image (column, row).
    """

    points: np.ndarray
    colors: np.ndarray
    pixels: np.ndarray

    def __len__(self) -> int:
        return int(self.points.shape[0])

    def select(self, mask: np.ndarray) -> PointCloud:
        """The sub-cloud where ``mask`` (N,) bool is true, or of the given (K,) indices."""
        return PointCloud(self.points[mask], self.colors[mask], self.pixels[mask])

    @staticmethod
    def empty() -> PointCloud:
        """A cloud with no points."""
        return PointCloud(np.zeros((0, 3)), np.zeros((0, 3), np.uint8), np.zeros((0, 2), int))

    @staticmethod
    def concatenate(clouds: Sequence[PointCloud]) -> PointCloud:
        """All points of ``clouds`` in one cloud (pixels keep their source images' values)."""
        if not clouds:
            return PointCloud.empty()
        return PointCloud(
            np.concatenate([c.points for c in clouds]),
            np.concatenate([c.colors for c in clouds]),
            np.concatenate([c.pixels for c in clouds]),
        )


def check_camera(obs: Mapping[str, np.ndarray], camera: str) -> None:
    """Raise :class:`InvalidConfigError` naming the cameras of ``obs`` if ``camera`` is not
    one of them."""
    if f"{camera}_depth" not in obs:
        available = sorted(k[: -len("_depth")] for k in obs if k.endswith("_depth"))
        raise InvalidConfigError(
            f"the observation has no camera {camera!r}; valid: {', '.join(available) or 'none'}"
        )


#: How many post-processed depth images :func:`camera_depth` keeps (the latest few
#: observations' cameras).
KEPT_DEPTHS = 8
#: The post-processed depth of the latest raw depth images, by the raw array's id, oldest
#: first (the weak reference drops an entry when its array goes).
_FILTERED: dict[int, tuple[weakref.ref[np.ndarray], np.ndarray]] = {}


def camera_depth(obs: Mapping[str, np.ndarray], camera: str) -> np.ndarray:
    """The post-processed depth (H, W) float32 metres, 0 = no return, of ``camera`` in
    ``obs``: :func:`~agentic_env.agents.perception.depth_filter.filter_depth` with the
    camera's :func:`~agentic_env.agents.perception.depth_filter.camera_profile`, what every
    cloud, lift and visibility test of the agents reads. Computed once per depth image
    (observations are not modified in place) and read-only.

    Raises:
        InvalidConfigError: ``obs`` has no such camera, or no depth model is known for it.
    """
    check_camera(obs, camera)
    raw = obs[f"{camera}_depth"]
    cached = _FILTERED.get(id(raw))
    if cached is not None and cached[0]() is raw:
        return cached[1]
    intrinsics = np.asarray(obs[f"{camera}_intrinsics"], float)
    profile = camera_profile(camera, intrinsics)
    filtered = filter_depth(raw, intrinsics, profile.noise, profile.smooth)
    filtered.flags.writeable = False
    if isinstance(raw, np.ndarray):
        key = id(raw)
        _FILTERED[key] = (weakref.ref(raw, lambda _gone: _FILTERED.pop(key, None)), filtered)
        while len(_FILTERED) > KEPT_DEPTHS:
            _FILTERED.pop(next(iter(_FILTERED)))
    return filtered


def _to_base(points_cam: np.ndarray, extrinsics: np.ndarray) -> np.ndarray:
    ext = np.asarray(extrinsics, dtype=float)
    return points_cam.astype(float) @ ext[:3, :3].T + ext[:3, 3]


def camera_cloud(obs: Mapping[str, np.ndarray], camera: str, stride: int = 1,
                 keep_gripper: bool = False) -> PointCloud:
    """The cloud of every pixel of ``camera`` with a depth return (base frame).

    Args:
        obs: an observation dict (see :mod:`agentic_env.contract.spaces`).
        camera: ``shoulder`` or ``wrist``.
        stride: keep every ``stride``-th row and column (>= 1), to thin the cloud.
        keep_gripper: keep the points of the robot's own gripper (by default they are
            removed with :func:`remove_gripper` when the observation has ``tcp_pose`` and
            ``gripper_width``; the wrist camera always sees the fingers).

    Raises:
        InvalidConfigError: unknown camera or stride < 1.
    """
    check_camera(obs, camera)
    if stride < 1:
        raise InvalidConfigError(f"stride must be >= 1, got {stride}")
    return _pixel_cloud(obs, camera, camera_depth(obs, camera), stride, keep_gripper)


def _pixel_cloud(obs: Mapping[str, np.ndarray], camera: str, depth: np.ndarray, stride: int,
                 keep_gripper: bool) -> PointCloud:
    """:func:`camera_cloud` of the (post-processed) ``depth`` (H, W) m of ``camera``."""
    rows, cols = np.nonzero(depth[::stride, ::stride] > 0)
    if rows.size == 0:
        return PointCloud.empty()
    u, v = cols * stride, rows * stride
    cam = depth_to_points(depth, np.asarray(obs[f"{camera}_intrinsics"], dtype=float))[v, u]
    points = _to_base(cam, obs[f"{camera}_extrinsics"])
    colors = np.asarray(obs[f"{camera}_rgb"])[v, u]
    cloud = PointCloud(points, colors.astype(np.uint8), np.stack([u, v], 1).astype(np.int64))
    if keep_gripper or "tcp_pose" not in obs or "gripper_width" not in obs:
        return cloud
    return remove_gripper(cloud, obs["tcp_pose"], float(np.ravel(obs["gripper_width"])[0]))


def remove_gripper(cloud: PointCloud, tcp_pose: np.ndarray, gripper_width: float,
                   margin: float = 0.01) -> PointCloud:
    """The cloud without the points inside the gripper's boxes (grown by ``margin`` m, for
    the fins' bending) at ``tcp_pose`` (7,) ``[x, y, z, qw, qx, qy, qz]`` or (4, 4), base
    frame, with the pads ``gripper_width`` m apart."""
    pose = np.asarray(tcp_pose, float)
    pose = vector_to_pose(pose) if pose.shape == (7,) else pose
    centres, halves = gripper_geometry().boxes(gripper_width)
    near = np.linalg.norm(cloud.points - pose[:3, 3], axis=1) < 0.25
    local = (cloud.points[near] - pose[:3, 3]) @ pose[:3, :3]
    inside = np.zeros(len(cloud), bool)
    inside[near] = np.any(points_in_boxes(local, centres, halves, margin), axis=1)
    return cloud.select(~inside)


def _clip_box(box_xyxy: Sequence[float], width: int, height: int) -> tuple[int, int, int, int]:
    """Integer pixel bounds ``(u0, v0, u1, v1)`` (exclusive end) of a box clipped to the image."""
    u0, v0, u1, v1 = (float(x) for x in box_xyxy)
    u0, u1 = sorted((u0, u1))
    v0, v1 = sorted((v0, v1))
    return (int(np.clip(np.floor(u0), 0, width)), int(np.clip(np.floor(v0), 0, height)),
            int(np.clip(np.ceil(u1), 0, width)), int(np.clip(np.ceil(v1), 0, height)))


def box_cloud(obs: Mapping[str, np.ndarray], camera: str,
              box_xyxy: Sequence[float]) -> PointCloud:
    """The points of the pixels inside ``box_xyxy`` = (u_min, v_min, u_max, v_max), pixels.

    The box is clipped to the image; pixels with no depth return are left out.
    """
    depth = camera_depth(obs, camera)
    height, width = depth.shape
    u0, v0, u1, v1 = _clip_box(box_xyxy, width, height)
    if u1 <= u0 or v1 <= v0:
        return PointCloud.empty()
    crop = {f"{camera}_depth": depth[v0:v1, u0:u1],
            f"{camera}_rgb": np.asarray(obs[f"{camera}_rgb"])[v0:v1, u0:u1],
            f"{camera}_intrinsics": _shifted_intrinsics(obs[f"{camera}_intrinsics"], u0, v0),
            f"{camera}_extrinsics": obs[f"{camera}_extrinsics"]}
    crop.update({key: obs[key] for key in ("tcp_pose", "gripper_width") if key in obs})
    cloud = _pixel_cloud(crop, camera, crop[f"{camera}_depth"], 1, False)
    return PointCloud(cloud.points, cloud.colors, cloud.pixels + np.array([u0, v0]))


def _shifted_intrinsics(intrinsics: np.ndarray, du: int, dv: int) -> np.ndarray:
    k = np.array(intrinsics, dtype=float)
    k[0, 2] -= du
    k[1, 2] -= dv
    return k


def lift_pixel(obs: Mapping[str, np.ndarray], camera: str, uv: Sequence[float],
               window: int = 5) -> np.ndarray | None:
    """The base-frame point (3,) seen at pixel ``uv`` = (u, v), metres.

    The depth is the median of the valid depths in a ``window`` x ``window`` square around the
    pixel (robust to edges and holes) and the point is back-projected through the pixel's
    centre. Returns ``None`` when no pixel of the window has a depth return or ``uv`` lies
    outside the image.
    """
    depth = camera_depth(obs, camera)
    height, width = depth.shape
    u, v = int(np.floor(uv[0])), int(np.floor(uv[1]))
    if not (0 <= u < width and 0 <= v < height):
        return None
    half = max(int(window), 1) // 2
    patch = depth[max(v - half, 0): v + half + 1, max(u - half, 0): u + half + 1]
    valid = patch[patch > 0]
    if valid.size == 0:
        return None
    pixel = np.full((1, 1), np.median(valid), dtype=np.float32)
    cam = depth_to_points(pixel, _shifted_intrinsics(obs[f"{camera}_intrinsics"], u, v))
    return _to_base(cam.reshape(1, 3), obs[f"{camera}_extrinsics"])[0]


def project_to_image(points_base: np.ndarray, intrinsics: np.ndarray,
                     extrinsics: np.ndarray) -> np.ndarray:
    """Pixel coordinates (N, 2) ``(u, v)`` of base-frame points (N, 3) in a camera.

    ``extrinsics`` is the camera -> base pose of the observation. Points behind the camera
    get ``nan``.
    """
    points = np.asarray(points_base, dtype=float).reshape(-1, 3)
    ext = np.asarray(extrinsics, dtype=float)
    cam = (points - ext[:3, 3]) @ ext[:3, :3]
    uv = project_points(cam, np.asarray(intrinsics, dtype=float))
    uv[cam[:, 2] <= 1e-9] = np.nan
    return uv
