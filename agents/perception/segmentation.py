"""Segmenting a target object from a camera's cloud: the table's seen height, table and
support-surface removal and Euclidean clustering around a pointed pixel or inside a detection
box (base frame, metres)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np

from agentic_env.agents.perception.depth_filter import camera_profile
from agentic_env.agents.perception.geometry import (
    estimate_normals,
    fit_plane,
    flat_keys,
    voxel_downsample,
    voxel_keys,
)
from agentic_env.agents.perception.pointcloud import (
    PointCloud,
    box_cloud,
    camera_cloud,
    check_camera,
    lift_pixel,
)
from agentic_env.errors import InvalidConfigError

#: Smallest extent, along both its horizontal axes, of a support surface that
#: :func:`remove_support_plane` removes (bin floors, bowls, shelves), m.
MIN_SUPPORT_EXTENT = 0.08
#: Most points whose normals :func:`remove_support_plane` estimates.
MAX_NORMAL_POINTS = 800
#: Chromaticity distance that tells stacked objects apart, how much of the cluster the other
#: colour must hold, and how far (m) it may reach above the seed object's lowest point
#: (see :func:`split_stack`).
STACK_CHROMA, STACK_FRACTION, STACK_OVERLAP = 0.06, 0.03, 0.005
#: Smallest height of an object that :func:`split_stack` cuts from the one below it, m.
STACK_MIN_HEIGHT = 0.015
#: Search range (m) about z = 0 for the table's seen height, the thickness (m) of the layer
#: whose densest instance is the table, and the pixel stride of the cloud it is measured in
#: (see :func:`table_height`, :func:`seen_table_height`).
TABLE_SEARCH, TABLE_LAYER, TABLE_STRIDE = 0.02, 0.004, 4
#: Half size (pixels) of the square searched around a pointed pixel by :func:`target_cloud`
#: when no box is given, as a fraction of the image height.
POINT_WINDOW_FRACTION = 0.15
#: Offsets between voxels of edge ``radius / 2`` whose points may lie within ``radius`` of
#: each other (at most two voxels apart along each axis), one of each pair +-o, grouped by
#: length (see :func:`cluster_near`).
_LINK_SHELLS = [np.array(list(shell), dtype=np.int64) for _, shell in itertools.groupby(
    sorted(((a, b, c) for a in range(-2, 3) for b in range(-2, 3) for c in range(-2, 3)
            if (a, b, c) > (0, 0, 0)), key=lambda o: np.dot(o, o)),
    key=lambda o: np.dot(o, o))]
#: Point pairs whose distances :func:`cluster_near` computes at once (bounds its memory).
_PAIR_CHUNK = 1 << 20


def table_height(cloud: PointCloud) -> float:
    """Height (m) at which ``cloud`` (base frame) shows the table top: the median of the
    densest :data:`TABLE_LAYER`-thick layer of its heights within :data:`TABLE_SEARCH` of
    z = 0 (a depth camera's systematic error moves the whole table by a few millimetres);
    0 when no point lies there."""
    heights = cloud.points[:, 2]
    ordered = np.sort(heights[np.abs(heights) < TABLE_SEARCH])
    if len(ordered) == 0:
        return 0.0
    counts = np.searchsorted(ordered, ordered + TABLE_LAYER) - np.arange(len(ordered))
    first = int(np.argmax(counts))
    return float(np.median(ordered[first:first + int(counts[first])]))


def seen_table_height(obs: Mapping[str, np.ndarray], camera: str) -> float:
    """Height (m) of the table top in the clouds of ``camera``: for a camera whose depth
    has a unit's systematic error (the shoulder's time of flight,
    :attr:`~agentic_env.agents.perception.depth_filter.DepthProfile.biased`; it sees the
    table at large) :func:`table_height` of its whole cloud, thinned; else z = 0.

    Raises:
        InvalidConfigError: ``obs`` has no such camera, or no depth model is known for it.
    """
    check_camera(obs, camera)
    if not camera_profile(camera, obs[f"{camera}_intrinsics"]).biased:
        return 0.0
    return table_height(camera_cloud(obs, camera, stride=TABLE_STRIDE))


def remove_table(cloud: PointCloud, table_z: float = 0.0, margin: float = 0.004) -> PointCloud:
    """The points more than ``margin`` m above the horizontal plane ``z = table_z`` (base
    frame). Points below the table (its edges, the floor) go too."""
    return cloud.select(cloud.points[:, 2] > table_z + margin)


def _ranges(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(which range, position in it) for ranges of the given lengths laid end to end."""
    which = np.repeat(np.arange(len(lengths)), lengths)
    return which, np.arange(len(which)) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def _merge(label: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Component labels (each the smallest voxel of its component) after also linking each
    ``a[k]`` with ``b[k]``, given the labels of the links so far."""
    root = np.arange(len(label))
    ends = label[a], label[b]
    while True:
        low = np.minimum(root[ends[0]], root[ends[1]])
        merged = root.copy()
        np.minimum.at(merged, ends[0], low)
        np.minimum.at(merged, ends[1], low)
        merged = merged[merged]
        if np.array_equal(merged, root):
            return root[label]
        root = merged


def _close_pairs(points: np.ndarray, members: tuple[np.ndarray, np.ndarray, np.ndarray],
                 first: np.ndarray, second: np.ndarray, limit: float,
                 sample: bool) -> np.ndarray:
    """Which voxel pairs have a point pair at most ``sqrt(limit)`` m apart: among all their
    point pairs, or (``sample``) between the second voxel's first point and the first's."""
    order, bounds, sizes = members
    counts = sizes[first] * (1 if sample else sizes[second])
    linked = np.zeros(len(first), bool)
    edges = np.searchsorted(np.cumsum(counts), np.arange(_PAIR_CHUNK, int(counts.sum()),
                                                         _PAIR_CHUNK), side="right")
    for low, high in zip([0, *edges], [*edges, len(first)], strict=True):
        pair, within = _ranges(counts[low:high])
        pair += low
        other = 1 if sample else sizes[second[pair]]
        mine = order[bounds[first[pair]] + within // other]
        theirs = order[bounds[second[pair]] + within % other]
        close = np.sum((points[theirs] - points[mine]) ** 2, axis=-1) <= limit
        linked[pair[close]] = True
    return linked


def _linked_voxels(points: np.ndarray, voxel_of: np.ndarray, keys: np.ndarray, start: int,
                   radius: float) -> np.ndarray:
    """Mask of the voxels (rows of ``keys``, unique; ``voxel_of`` maps points to rows) of
    edge ``radius / 2`` reachable from voxel ``start`` through point pairs at most ``radius``
    apart. Points of one voxel are closer than that, so they are linked; linked pairs of
    points lie at most two voxels apart along each axis.

    Neighbouring voxels are linked shell by shell, nearest offsets first, and a pair already
    in one component is not tested again: in a dense cloud the first shell joins nearly
    everything."""
    count = len(keys)
    order = np.argsort(voxel_of, kind="stable")
    sizes = np.bincount(voxel_of, minlength=count)
    members = (order, np.concatenate([[0], np.cumsum(sizes)]), sizes)
    flat = flat_keys(keys)
    sorter = np.argsort(flat)
    sorted_flat = flat[sorter]
    base = flat_keys(np.zeros((1, 3), np.int64))
    label = np.arange(count)
    limit = radius * radius
    for shell in _LINK_SHELLS:
        # a flat key is linear in the voxel indices: a neighbour's is the key plus a constant
        wanted = (flat[:, None] + (flat_keys(shell) - base)).ravel()
        slot = np.minimum(np.searchsorted(sorted_flat, wanted), count - 1)
        found = sorted_flat[slot] == wanted
        first = np.repeat(np.arange(count), len(shell))[found]
        second = sorter[slot[found]]
        for sample in (True, False):
            apart = label[first] != label[second]
            first, second = first[apart], second[apart]
            linked = _close_pairs(points, members, first, second, limit, sample)
            label = _merge(label, first[linked], second[linked])
    return label == label[start]


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
                 box_xyxy: Sequence[float] | None = None, *, table_z: float | None = None,
                 radius: float = 0.01) -> PointCloud:
    """The cloud of the object at a pointed pixel and/or inside a detection box.

    Crops the box (or, with only a point, a square of half size
    ``POINT_WINDOW_FRACTION * image height`` around it), removes the table (at ``table_z``
    m; ``None``: where the camera sees it, :func:`seen_table_height`), then
    keeps the Euclidean cluster (``radius``, see :func:`cluster_near`) nearest to the lifted
    point (the pointed pixel, else the box centre; if that pixel has no depth above the
    table, the crop's point nearest in the image to it). When that cluster holds a
    horizontal support surface below the point (the object lies in a bin or on a shelf, see
    :func:`remove_support_plane`), the surface is removed and the cluster taken again; when
    the object rests on an object of another colour, that one is cut away
    (:func:`split_stack`).

    Returns:
        The target's points (base frame); empty when the crop has no point above the table.

    Raises:
        InvalidConfigError: neither ``point_uv`` nor ``box_xyxy`` given, or unknown camera.
    """
    check_camera(obs, camera)
    if point_uv is None and box_xyxy is None:
        raise InvalidConfigError("target_cloud needs point_uv=(u, v) or box_xyxy=(u0, v0, u1, v1)")
    if box_xyxy is not None:
        u0, v0, u1, v1 = (float(x) for x in box_xyxy)
        centre = np.array([(u0 + u1) / 2, (v0 + v1) / 2]) if point_uv is None else point_uv
    else:
        half = POINT_WINDOW_FRACTION * np.asarray(obs[f"{camera}_depth"]).shape[0]
        u, v = float(point_uv[0]), float(point_uv[1])
        box_xyxy, centre = (u - half, v - half, u + half, v + half), point_uv
    if table_z is None:
        table_z = seen_table_height(obs, camera)
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
    if len(cut) != len(cluster):
        cluster = cluster_near(cut, seed, radius)
    return split_stack(cluster, seed, radius)


def split_stack(cloud: PointCloud, seed: np.ndarray, radius: float = 0.01) -> PointCloud:
    """The object at ``seed`` (3,) alone when it rests on an object of another colour.

    Objects stacked on each other touch, so they form one Euclidean cluster. The points whose
    chromaticity (colour over brightness, so shading does not matter) differs from the seed's
    by more than ``STACK_CHROMA`` are set apart; if they hold at least ``STACK_FRACTION`` of
    the cloud and lie wholly below the seed-coloured points (by ``STACK_OVERLAP`` at most),
    and the seed-coloured points are saturated (not grey) and at least ``STACK_MIN_HEIGHT``
    tall, the seed-coloured cluster is returned. Otherwise (a duck's beak, a screwdriver's
    shaft beside the handle, a can's lid) the cloud is returned unchanged.
    """
    if len(cloud) < 10:
        return cloud
    colours = cloud.colors.astype(float) + 1.0
    chroma = colours / colours.sum(axis=1, keepdims=True)
    near_seed = np.linalg.norm(cloud.points - seed, axis=1) < radius
    if not near_seed.any():
        return cloud
    reference = np.median(chroma[near_seed], axis=0)
    if np.linalg.norm(reference - 1.0 / 3.0) < STACK_CHROMA:
        return cloud  # grey, white or black: chromaticity does not tell such objects apart
    other = np.linalg.norm(chroma - reference, axis=1) > STACK_CHROMA
    if other.mean() < STACK_FRACTION or other.all():
        return cloud
    same = cloud.select(~other)
    if cloud.points[other, 2].max() > same.points[:, 2].min() + STACK_OVERLAP:
        return cloud
    if np.ptp(same.points[:, 2]) < STACK_MIN_HEIGHT:
        return cloud  # a coloured lid or label on top of the object, not an object on it
    return cluster_near(same, seed, radius)
