"""RGB-D observations to point clouds in the robot base frame, and cloud operations.

Every function reads only the observation contract (:mod:`agentic_env.contract`): the camera's
``<cam>_rgb``, ``<cam>_depth`` (metres, 0 = no return), ``<cam>_intrinsics`` (OpenCV pinhole)
and ``<cam>_extrinsics`` (camera -> robot base). Points are in the robot base frame (z up, the
table top is z = 0), metres. Pixels are ``(u, v)`` = (column, row) integers; pixel ``(u, v)``
covers ``[u, u+1) x [v, v+1)`` in the continuous image coordinates of
:func:`agentic_env.cameras.project_points`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agentic_env.actions import vector_to_pose
from agentic_env.agents.perception.gripper import gripper_geometry, points_in_boxes
from agentic_env.cameras import depth_to_points, project_points
from agentic_env.errors import InvalidConfigError

#: Smallest extent, along both its horizontal axes, of a support surface that
#: :func:`remove_support_plane` removes (bin floors, bowls, shelves), m.
MIN_SUPPORT_EXTENT = 0.08
#: Most points whose normals :func:`remove_support_plane` estimates.
MAX_NORMAL_POINTS = 800
#: Half size (pixels) of the square searched around a pointed pixel by :func:`target_cloud`
#: when no box is given, as a fraction of the image height.
POINT_WINDOW_FRACTION = 0.15


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


def _check_camera(obs: Mapping[str, np.ndarray], camera: str) -> None:
    if f"{camera}_depth" not in obs:
        available = sorted(k[: -len("_depth")] for k in obs if k.endswith("_depth"))
        raise InvalidConfigError(
            f"the observation has no camera {camera!r}; valid: {', '.join(available) or 'none'}"
        )


def _to_base(points_cam: np.ndarray, extrinsics: np.ndarray) -> np.ndarray:
    ext = np.asarray(extrinsics, dtype=float)
    return points_cam.astype(float) @ ext[:3, :3].T + ext[:3, 3]


def camera_cloud(obs: Mapping[str, np.ndarray], camera: str, stride: int = 1,
                 keep_gripper: bool = False) -> PointCloud:
    """The cloud of every pixel of ``camera`` with a depth return (base frame).

    Args:
        obs: an observation dict (see :mod:`agentic_env.contract`).
        camera: ``shoulder`` or ``wrist``.
        stride: keep every ``stride``-th row and column (>= 1), to thin the cloud.
        keep_gripper: keep the points of the robot's own gripper (by default they are
            removed with :func:`remove_gripper` when the observation has ``tcp_pose`` and
            ``gripper_width``; the wrist camera always sees the fingers).

    Raises:
        InvalidConfigError: unknown camera or stride < 1.
    """
    _check_camera(obs, camera)
    if stride < 1:
        raise InvalidConfigError(f"stride must be >= 1, got {stride}")
    depth = np.asarray(obs[f"{camera}_depth"])
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
    _check_camera(obs, camera)
    depth = np.asarray(obs[f"{camera}_depth"])
    height, width = depth.shape
    u0, v0, u1, v1 = _clip_box(box_xyxy, width, height)
    if u1 <= u0 or v1 <= v0:
        return PointCloud.empty()
    crop = {f"{camera}_depth": depth[v0:v1, u0:u1],
            f"{camera}_rgb": np.asarray(obs[f"{camera}_rgb"])[v0:v1, u0:u1],
            f"{camera}_intrinsics": _shifted_intrinsics(obs[f"{camera}_intrinsics"], u0, v0),
            f"{camera}_extrinsics": obs[f"{camera}_extrinsics"]}
    crop.update({key: obs[key] for key in ("tcp_pose", "gripper_width") if key in obs})
    cloud = camera_cloud(crop, camera)
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
    _check_camera(obs, camera)
    depth = np.asarray(obs[f"{camera}_depth"])
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


def remove_table(cloud: PointCloud, table_z: float = 0.0, margin: float = 0.004) -> PointCloud:
    """The points more than ``margin`` m above the horizontal plane ``z = table_z`` (base
    frame). Points below the table (its edges, the floor) go too."""
    return cloud.select(cloud.points[:, 2] > table_z + margin)


@dataclass(frozen=True)
class Plane:
    """A plane ``normal . p + offset = 0`` (base frame); ``normal`` is a unit vector with
    ``normal[2] >= 0`` so that positive distances lie above it."""

    normal: np.ndarray
    offset: float

    def distance(self, points: np.ndarray) -> np.ndarray:
        """Signed distances (N,) of points (N, 3) from the plane, metres."""
        return points @ self.normal + self.offset


def fit_plane(points: np.ndarray, rng: np.random.Generator, threshold: float = 0.004,
              iterations: int = 100, max_tilt_deg: float | None = None) -> tuple[Plane, np.ndarray]:
    """RANSAC plane fit, refined by least squares on the inliers.

    Args:
        points: (N, 3) base frame, metres (N >= 3).
        rng: random generator for the samples.
        threshold: inlier distance, metres.
        iterations: random 3-point hypotheses.
        max_tilt_deg: if given, only planes whose normal is within this angle of +z count
            (support surfaces).

    Returns:
        The plane and the (N,) inlier mask. A cloud with fewer than 3 points, or no plane
        within the tilt limit, gives a zero-normal plane and an all-false mask.

    """
    points = np.asarray(points, dtype=float)
    none = Plane(np.zeros(3), 0.0), np.zeros(len(points), bool)
    if len(points) < 3:
        return none
    samples = points[rng.integers(0, len(points), size=(iterations, 3))]
    normals = np.cross(samples[:, 1] - samples[:, 0], samples[:, 2] - samples[:, 0])
    norms = np.linalg.norm(normals, axis=1)
    keep = norms > 1e-12
    normals = normals[keep] / norms[keep, None]
    normals *= np.where(normals[:, 2] < 0, -1.0, 1.0)[:, None]
    anchors = samples[keep, 0]
    if max_tilt_deg is not None:
        upright = normals[:, 2] >= np.cos(np.deg2rad(max_tilt_deg))
        normals, anchors = normals[upright], anchors[upright]
    if len(normals) == 0:
        return none
    distances = np.abs(points @ normals.T - np.sum(normals * anchors, axis=1))
    counts = np.sum(distances < threshold, axis=0)
    best = int(np.argmax(counts))
    inliers = distances[:, best] < threshold
    centre = points[inliers].mean(axis=0)
    _, _, vt = np.linalg.svd(points[inliers] - centre, full_matrices=False)
    normal = vt[-1] * (1.0 if vt[-1][2] >= 0 else -1.0)
    plane = Plane(normal, float(-normal @ centre))
    return plane, np.abs(plane.distance(points)) < threshold


def voxel_keys(points: np.ndarray, voxel: float) -> np.ndarray:
    """Integer voxel indices (N, 3) of points for a grid of edge ``voxel`` m."""
    return np.floor(np.asarray(points) / voxel).astype(np.int64)


def flat_keys(keys: np.ndarray) -> np.ndarray:
    """One int64 per voxel index row (N, 3), unique for indices within +-2**20."""
    scale = np.int64(1 << 21)
    return ((keys[:, 0] + (1 << 20)) * scale + keys[:, 1] + (1 << 20)) * scale + keys[:, 2]


def near_mask(points: np.ndarray, reference: np.ndarray, voxel: float) -> np.ndarray:
    """Which of ``points`` (N, 3) lie in a ``voxel``-m grid cell holding, or touching (26-
    neighbourhood), a ``reference`` point: all points closer than ``voxel`` to one, and
    none farther than ``2 * sqrt(3) * voxel``."""
    offsets = np.array([(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)])
    target_keys = np.unique(voxel_keys(reference, voxel), axis=0)
    dilated = np.unique(flat_keys((target_keys[:, None] + offsets).reshape(-1, 3)))
    return np.isin(flat_keys(voxel_keys(points, voxel)), dilated)


def voxel_downsample(cloud: PointCloud, voxel: float) -> PointCloud:
    """One point per occupied voxel of edge ``voxel`` m: the point nearest the voxel's mean."""
    if len(cloud) == 0:
        return cloud
    _, inverse, counts = np.unique(flat_keys(voxel_keys(cloud.points, voxel)),
                                   return_inverse=True, return_counts=True)
    means = np.stack([np.bincount(inverse, cloud.points[:, i]) for i in range(3)], 1)
    means /= counts[:, None]
    gap = np.sum((cloud.points - means[inverse]) ** 2, axis=1)
    order = np.lexsort((gap, inverse))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return cloud.select(order[starts])


def estimate_normals(points: np.ndarray, k: int = 12) -> np.ndarray:
    """Unit normals (N, 3) from PCA of each point's ``k`` nearest neighbours, oriented away
    from the cloud's centroid (outward for convex objects)."""
    n = len(points)
    if n < 3:
        return np.tile([0.0, 0.0, 1.0], (n, 1))
    k = min(k, n)
    d2 = np.sum((points[:, None, :] - points[None, :, :]) ** 2, axis=-1)
    neighbours = points[np.argpartition(d2, k - 1, axis=1)[:, :k]]
    centred = neighbours - neighbours.mean(axis=1, keepdims=True)
    _, vectors = np.linalg.eigh(np.einsum("nki,nkj->nij", centred, centred))
    normals = vectors[:, :, 0]
    outward = np.sum(normals * (points - points.mean(axis=0)), axis=1) < 0
    normals[outward] *= -1.0
    return normals


def _linked_voxels(points: np.ndarray, voxel_of: np.ndarray, keys: np.ndarray, start: int,
                   radius: float) -> np.ndarray:
    """Mask of the voxels (rows of ``keys``, unique; ``voxel_of`` maps points to rows) of
    edge ``radius / 2`` reachable from voxel ``start`` through point pairs at most ``radius``
    apart. Points of one voxel are closer than that, so they are linked; linked pairs of
    points lie at most two voxels apart along each axis."""
    order = np.argsort(voxel_of, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(voxel_of, minlength=len(keys)))])
    lookup = {key: i for i, key in enumerate(map(tuple, keys.tolist()))}
    offsets = [(a, b, c) for a in range(-2, 3) for b in range(-2, 3) for c in range(-2, 3)
               if (a, b, c) != (0, 0, 0)]
    seen = np.zeros(len(keys), bool)
    seen[start] = True
    queue = deque([start])
    limit = radius * radius
    key_list = keys.tolist()
    while queue:
        here = queue.popleft()
        x, y, z = key_list[here]
        around = [j for a, b, c in offsets
                  if (j := lookup.get((x + a, y + b, z + c))) is not None and not seen[j]]
        if not around:
            continue
        mine = points[order[bounds[here]:bounds[here + 1]]]
        members = [order[bounds[j]:bounds[j + 1]] for j in around]
        theirs = points[np.concatenate(members)]
        near = np.min(np.sum((theirs[:, None, :] - mine[None, :, :]) ** 2, axis=-1), axis=1)
        owner = np.repeat(np.arange(len(around)), [len(m) for m in members])
        for k in np.unique(owner[near <= limit]):
            seen[around[k]] = True
            queue.append(around[k])
    return seen


def cluster_near(cloud: PointCloud, seed: np.ndarray, radius: float = 0.01) -> PointCloud:
    """The connected cluster of ``cloud`` containing, or nearest to, ``seed`` (3,) base frame.

    Single-linkage Euclidean clustering: two points are connected when they are at most
    ``radius`` m apart (found through a voxel grid of edge ``radius / 2``), and the cluster is
    every point connected, directly or through others, to the cloud point nearest ``seed``.
    An empty cloud gives an empty cloud.

    Raises:
        InvalidConfigError: ``radius`` <= 0.
    """
    if radius <= 0:
        raise InvalidConfigError(f"radius must be > 0 m, got {radius}")
    if len(cloud) == 0:
        return cloud
    keys = voxel_keys(cloud.points, radius / 2.0)
    _, first, inverse = np.unique(flat_keys(keys), return_index=True, return_inverse=True)
    nearest = int(np.argmin(np.sum((cloud.points - np.asarray(seed, float)) ** 2, axis=1)))
    linked = _linked_voxels(cloud.points, inverse, keys[first], int(inverse[nearest]), radius)
    return cloud.select(linked[inverse])


def remove_support_plane(cloud: PointCloud, below_z: float, rng: np.random.Generator,
                         min_fraction: float = 0.2, threshold: float = 0.004) -> PointCloud:
    """Remove a horizontal support surface (a bin floor, a shelf) lying under ``below_z``.

    Among the points below ``below_z`` m whose surface normal is within 25 degrees of vertical
    (a horizontal band of a round object's side fits a plane too, but its normals point
    sideways), fits a near-horizontal plane (within 10 degrees); if that holds at least
    ``min_fraction`` of the (5 mm thinned) cloud and spans ``MIN_SUPPORT_EXTENT`` along both
    its horizontal axes (a duck's back under its head does not), the points on it and under
    it are removed. Otherwise the cloud is returned unchanged.
    """
    thinned = voxel_downsample(cloud, 0.005).points
    low = thinned[thinned[:, 2] < below_z]
    if len(low) < 10:
        return cloud
    if len(low) > MAX_NORMAL_POINTS:  # normals cost O(n^2): a sample describes a floor well
        low = low[rng.choice(len(low), MAX_NORMAL_POINTS, replace=False)]
    flat = low[np.abs(estimate_normals(low)[:, 2]) > np.cos(np.deg2rad(25.0))]
    plane, inliers = fit_plane(flat, rng, threshold, max_tilt_deg=10.0)
    if not np.any(inliers):
        return cloud
    on_plane = np.abs(plane.distance(thinned)) < threshold
    if np.count_nonzero(on_plane) < max(min_fraction * len(thinned), 10):
        return cloud
    spread = thinned[on_plane, :2] - thinned[on_plane, :2].mean(axis=0)
    _, axes = np.linalg.eigh(spread.T @ spread)
    if np.min(np.ptp(spread @ axes, axis=0)) < MIN_SUPPORT_EXTENT:
        return cloud  # too small to hold objects: a step of the object itself
    return cloud.select(plane.distance(cloud.points) > threshold)


def target_cloud(obs: Mapping[str, np.ndarray], camera: str,
                 point_uv: Sequence[float] | None = None,
                 box_xyxy: Sequence[float] | None = None, *, table_z: float = 0.0,
                 radius: float = 0.01) -> PointCloud:
    """The cloud of the object at a pointed pixel and/or inside a detection box.

    Crops the box (or, with only a point, a square of half size
    ``POINT_WINDOW_FRACTION * image height`` around it), removes the table (``table_z``), then
    keeps the Euclidean cluster (``radius``, see :func:`cluster_near`) nearest to the lifted
    point (the pointed pixel, else the box centre; if that pixel has no depth above the
    table, the crop's point nearest in the image to it). When that cluster holds a
    horizontal support surface below the point (the object lies in a bin or on a shelf, see
    :func:`remove_support_plane`), the surface is removed and the cluster taken again.

    Returns:
        The target's points (base frame); empty when the crop has no point above the table.

    Raises:
        InvalidConfigError: neither ``point_uv`` nor ``box_xyxy`` given, or unknown camera.
    """
    _check_camera(obs, camera)
    if point_uv is None and box_xyxy is None:
        raise InvalidConfigError("target_cloud needs point_uv=(u, v) or box_xyxy=(u0, v0, u1, v1)")
    if box_xyxy is not None:
        u0, v0, u1, v1 = (float(x) for x in box_xyxy)
        centre = np.array([(u0 + u1) / 2, (v0 + v1) / 2]) if point_uv is None else point_uv
    else:
        half = POINT_WINDOW_FRACTION * np.asarray(obs[f"{camera}_depth"]).shape[0]
        u, v = float(point_uv[0]), float(point_uv[1])
        box_xyxy, centre = (u - half, v - half, u + half, v + half), point_uv
    crop = remove_table(box_cloud(obs, camera, box_xyxy), table_z)
    if len(crop) == 0:
        return crop
    seed = lift_pixel(obs, camera, centre)
    if seed is None or seed[2] <= table_z + 0.004:
        gap = np.sum((crop.pixels - np.asarray(centre, float)) ** 2, axis=1)
        seed = crop.points[int(np.argmin(gap))]
    cluster = cluster_near(crop, seed, radius)
    # an object in a bin or on a shelf joins its support: cut the support away, cluster again
    cut = remove_support_plane(cluster, seed[2] - 0.01, np.random.default_rng(0))
    return cluster if len(cut) == len(cluster) else cluster_near(cut, seed, radius)
