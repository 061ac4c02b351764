"""Geometry on point arrays: voxel grids, thinning, neighbourhoods and their counts,
normals, planes.

Points are (N, 3) arrays in one frame (the robot base frame everywhere in this package),
metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentic_env.agents.perception.pointcloud import PointCloud


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


def neighbour_counts(points: np.ndarray, voxel: float) -> np.ndarray:
    """How many of ``points`` (N, 3) lie in each point's cell of a ``voxel``-m grid or in the
    26 cells around it (N,) int64, the point itself included: every point closer than
    ``voxel`` to it counts, none farther than ``2 * sqrt(3) * voxel``."""
    if len(points) == 0:
        return np.zeros(0, np.int64)
    cells, inverse, counts = np.unique(flat_keys(voxel_keys(points, voxel)),
                                       return_inverse=True, return_counts=True)
    offsets = np.array([(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)])
    # a flat key is linear in the voxel indices: a neighbour's is the key plus a constant
    wanted = cells[:, None] + (flat_keys(offsets) - flat_keys(np.zeros((1, 3), np.int64)))
    slot = np.minimum(np.searchsorted(cells, wanted), len(cells) - 1)
    around = np.sum(np.where(cells[slot] == wanted, counts[slot], 0), axis=1)
    return around[inverse]


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
