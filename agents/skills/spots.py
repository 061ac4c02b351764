"""Where to set the held object down: on top of a target, at the emptiest spot inside a
container, or on a free patch of the table.

Observations only (point clouds in the robot base frame, the TCP pose from proprioception);
nothing reads the simulator. Base frame z up, table top z = 0, top-down TCP poses from
:func:`agentic_env.contract.actions.top_down_pose`; metres and radians.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agentic_env.agents.perception import PointCloud, neighbour_counts, table_height
from agentic_env.agents.skills.clearance import (
    approach_over,
    column_seen_free,
    lifted,
    path_blocked,
)
from agentic_env.agents.skills.holding import HeldObject, tcp_yaw, yaw_frame
from agentic_env.contract.actions import top_down_pose
from agentic_env.contract.spaces import Workspace
from agentic_env.geometry.rotations import wrap_angle

#: Gap (m) between a placed object's bottom and the surface under it at release.
RELEASE_GAP = 0.008
#: Gap (m) at release above a container's floor or contents: a short drop into a bin is
#: harmless, and a floor seen through noisy depth may lie a little higher than measured.
CONTAINER_RELEASE_GAP = 0.015
#: Horizontal radius (m) around the TCP that the gripper's servo housing and wrist camera
#: sweep, and the height (m) above the TCP where they (and the finger carriages) begin.
HAND_RADIUS = 0.06
HAND_CLEARANCE = 0.05
#: Room (m) beyond a held object's radius that the opened fingers need at release (they open
#: 1.5 cm beyond it along the closing axis only; a light touch of the contents is harmless).
FINGER_CLEARANCE = 0.01
#: How far (m) the closed fin-ray fingers reach beyond a held object's side along the closing
#: axis, their half length (m) along the hand's yaw, the margin (m) kept from a container's
#: walls, and the penalty (m of support height) of a spot where they would meet a wall.
FINGER_OUTSIDE = 0.02
FINGER_HALF_LENGTH = 0.012
WALL_MARGIN = 0.004
FINGERS_AT_WALL = 0.02
#: Spacing (m) of the grid of table spots :func:`table_spot` considers.
SPOT_STEP = 0.025
#: Smallest height (m) above the table's seen level of what a set-down avoids: the table's
#: own depth noise and the calibration's tilt stay below it (a sheet may be set on).
OBSTACLE_HEIGHT = 0.006
#: Height (m) above the table's seen level up to which its points are the table.
TABLE_BAND = 0.004
#: Depth (m) below the table's seen level down to which its points are the table: a
#: time-of-flight camera sees the table beside objects deeper than it is (multipath).
TABLE_BELOW = 0.02
#: Standard deviations of a point's height error that widen those margins where the
#: camera's noise is larger than they allow (far away, or a stereo camera's).
HEIGHT_SIGMAS = 4.0
#: Edge (m) of the cells, and the fewest points in a point's cell and the 26 around it, that
#: make what stands on the table an obstacle (a lone outlier, a pair of flying pixels: none).
OBSTACLE_CELL = 0.01
OBSTACLE_POINTS = 3
#: Most grid-node distances :func:`_nodes_near` computes at once (bounds its memory).
_NODE_CHUNK = 1 << 20
#: Height (m) above a container's floor above which its points count as walls.
WALL_HEIGHT = 0.05
#: Spots (m) within this of a release that failed in the same container are passed over.
FAILED_SPOT_RADIUS = 0.03


def face_yaw(points_xy: np.ndarray) -> float:
    """Yaw (rad, in [-pi/4, pi/4)) of the smallest-area rectangle around ``points_xy``:
    the direction of a box's faces seen from above."""
    centred = points_xy - points_xy.mean(axis=0)
    best, best_area = 0.0, np.inf
    for yaw in np.radians(np.arange(-45.0, 45.0, 2.0)):
        c, s = np.cos(yaw), np.sin(yaw)
        rotated = centred @ np.array([[c, -s], [s, c]])
        area = float(np.ptp(rotated[:, 0]) * np.ptp(rotated[:, 1]))
        if area < best_area:
            best, best_area = float(yaw), area
    return best


def nearest_equivalent_yaw(yaw: float, reference: float, period: float) -> float:
    """The angle ``yaw + k * period`` closest to ``reference`` (rad)."""
    return float(yaw + period * np.round((reference - yaw) / period))


def top_of(cloud: PointCloud) -> tuple[np.ndarray, float]:
    """Centre (x, y) of the top surface of ``cloud`` and its height z (m)."""
    z = cloud.points[:, 2]
    top = float(np.percentile(z, 95))
    upper = cloud.points[z > top - 0.006]
    low, high = upper[:, :2].min(axis=0), upper[:, :2].max(axis=0)
    return (low + high) / 2, top


def place_on(target: PointCloud, scene: PointCloud, held: HeldObject,
             tcp_pose: np.ndarray, align_faces: bool,
             centre: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Place pose (4x4) and approach (m) that set the held object centred on top of
    ``target`` (a cube, a plate, a board slot).

    Args:
        align_faces: turn the wrist so the held box's faces line up with the target's (the
            held box was grasped across its faces, so its faces follow the closing axis).
        centre: (x, y) to place at instead of the target's top centre, e.g. a slot seen in
            the image on a board whose depth shows no slot.
    """
    top_centre, top = top_of(target)
    if centre is None:
        centre = top_centre
    else:
        near = np.linalg.norm(target.points[:, :2] - centre, axis=1) < 0.03
        if np.count_nonzero(near) >= 3:
            top = float(np.percentile(target.points[near, 2], 95))
    yaw = tcp_yaw(tcp_pose)
    if align_faces:
        level = target.points[np.abs(target.points[:, 2] - top) < 0.004, :2]
        yaw = nearest_equivalent_yaw(face_yaw(level), yaw, np.pi / 2)
    position = np.array([*centre, top + held.below_tcp + RELEASE_GAP])
    return top_down_pose(position, yaw), approach_over(scene, centre, position[2],
                                                       hanging=held.below_tcp)


def place_in(container: PointCloud, scene: PointCloud, held: HeldObject,
             tcp_pose: np.ndarray, pack: bool = True,
             avoid: np.ndarray | None = None) -> tuple[np.ndarray, float] | None:
    """Place pose (4x4) and approach (m) that drop the held object into ``container`` (a bin,
    bowl, pot, the floor of an open drawer) at its emptiest spot, away from the walls.

    ``container`` is every point seen inside the detection box: its floor is the low part,
    what rises more than :data:`WALL_HEIGHT` above the floor counts as walls (kept at least
    the held object's radius away), anything lower as contents to avoid stacking on. Points
    of ``scene`` beside the hand at release (a carcass above a drawer's back) are kept clear
    of it: of the opened fingers (``FINGER_CLEARANCE`` beyond the object's radius) up to
    ``HAND_CLEARANCE`` above the TCP, of the housing (``HAND_RADIUS``) above that; where no
    spot keeps both, the fingers' clearance is given up first, then the housing's. With
    ``pack``, spots nearest the middles of the container's quarters are preferred (room is
    left for what comes next; a bin takes several objects), else its middle (an open
    drawer's visible part). A held object whose round footprint fits nowhere is tried with
    its measured footprint (``held.extents``), the hand along or across. Spots within
    :data:`FAILED_SPOT_RADIUS` of ``avoid`` (x, y of releases that failed here, (M, 2)) are
    passed over while any other spot qualifies. ``None`` when ``container`` has no point
    (nothing of it was seen: it has no floor to aim at).
    """
    if len(container) == 0:
        return None
    points = container.points
    floor = lowest_layer(points[:, 2])
    walls = points[points[:, 2] > floor + WALL_HEIGHT, :2]
    inside = points[points[:, 2] <= floor + WALL_HEIGHT]
    # what would be beside the hand at release: a carcass over a drawer's back, a shelf;
    # the open fingers reach from the TCP up to the housing, which is wider
    tcp_level = floor + held.below_tcp + CONTAINER_RELEASE_GAP
    heights = scene.points[:, 2]
    beside = [(held.radius + FINGER_CLEARANCE, scene.points[
        (heights > tcp_level) & (heights <= tcp_level + HAND_CLEARANCE), :2]),
              (HAND_RADIUS, scene.points[heights > tcp_level + HAND_CLEARANCE, :2])]
    if avoid is not None and len(avoid):  # given up last: another spot is worth a try
        beside.append((FAILED_SPOT_RADIUS, np.asarray(avoid, float).reshape(-1, 2)))
    low, high = inside[:, :2].min(axis=0), inside[:, :2].max(axis=0)
    aims = _quarter_points(low, high) if pack else ((low + high) / 2)[None]
    yaw = tcp_yaw(tcp_pose)
    grip = held.radius if held.extents is None else held.extents[1]
    fingers = _Fingers(walls, grip, (yaw, wrap_angle(yaw + np.pi / 2)))
    spot = None
    while spot is None and beside:  # too tight for the fingers: fixtures high up first
        spot = _emptiest_spot(inside, walls, beside, held.radius, aims, fingers)
        beside = beside[1:]
    spot = spot or _emptiest_spot(inside, walls, [], held.radius, aims, fingers)
    if spot is None and held.extents is not None:
        # the round footprint fits nowhere (a long object beside a tall one): the held
        # object's own footprint, turned along or across, may fit a lane
        spot = _fitting_spot(inside, walls, held.extents, yaw, aims)
    if spot is not None:
        best, support, yaw = spot
    else:
        best, support = _above_middle(inside, points, held.radius)
    position = np.array([*best, support + held.below_tcp + CONTAINER_RELEASE_GAP])
    pose = top_down_pose(position, yaw)
    return pose, approach_over(scene, best, position[2], hanging=held.below_tcp)


def _quarter_points(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The middles (4, 2) of the four quarters of the box ``low``..``high`` (x, y): a
    container filled from its quarters keeps room for what comes next, where one set down in
    its middle leaves only slivers on either side."""
    middle, quarter = (low + high) / 2, (high - low) / 4
    return np.array([middle + quarter * np.array(sign) for sign in
                     ((-1, -1), (-1, 1), (1, -1), (1, 1))])


def _fitting_spot(inside: np.ndarray, walls: np.ndarray, extents: tuple[float, float],
                  yaw: float, aims: np.ndarray) -> tuple[np.ndarray, float, float] | None:
    """The (x, y), support height (m) and hand yaw (rad) of the lowest spot on a 9x9 grid
    over ``inside`` (N, 3) where the footprint of half ``extents`` (along, across the yaw)
    keeps 1 cm from ``walls`` (N, 2), with the hand at ``yaw`` or turned a quarter; nearest
    one of ``aims`` (M, 2) among equals. ``None`` when it fits nowhere."""
    room = np.asarray(extents, float) + 0.01
    best, best_score = None, np.inf
    for turn in (yaw, wrap_angle(yaw + np.pi / 2)):
        frame = yaw_frame(turn)
        for xy in _grid_spots(inside):
            if len(walls) and np.any(np.all(np.abs((walls - xy) @ frame.T) < room, axis=1)):
                continue
            under = np.all(np.abs((inside[:, :2] - xy) @ frame.T) < room - 0.005, axis=1)
            if np.count_nonzero(under) < 3:
                continue  # no floor seen there
            support = float(np.percentile(inside[under, 2], 95))
            score = _spot_score(support, xy, aims)
            if score < best_score:
                best, best_score = (xy, support, float(turn)), score
    return best


def _grid_spots(inside: np.ndarray) -> list[np.ndarray]:
    """The (x, y) points of a 9x9 grid over the horizontal extent of ``inside`` (N, 3)."""
    low, high = inside[:, :2].min(axis=0), inside[:, :2].max(axis=0)
    return [np.array([x, y]) for x in np.linspace(low[0], high[0], 9)
            for y in np.linspace(low[1], high[1], 9)]


def _spot_score(support: float, xy: np.ndarray, aims: np.ndarray) -> float:
    """A container spot's cost: its support height (m), plus 5 cm per metre from the
    nearest of ``aims`` (M, 2)."""
    return support + 0.05 * float(np.min(np.linalg.norm(aims - xy, axis=1)))


class _Fingers:
    """Where the closed fingers' outer sides are at a spot: beyond a held object gripped
    ``grip`` m either side of the TCP along the closing axis (the tool's y, across the
    hand's yaw), :data:`FINGER_OUTSIDE` m thick and :data:`FINGER_HALF_LENGTH` m either side
    along the yaw; ``yaws`` (rad) are the hand turns a place may take."""

    def __init__(self, walls: np.ndarray, grip: float, yaws: tuple[float, ...]) -> None:
        self.walls, self.grip, self.yaws = walls, grip, yaws

    def clear_yaw(self, xy: np.ndarray) -> float | None:
        """The first of the yaws (rad) at which no wall point lies in either finger's box
        at ``xy`` (grown by :data:`WALL_MARGIN`), ``None`` when every yaw meets one."""
        if len(self.walls) == 0:
            return self.yaws[0]
        half = np.array([FINGER_HALF_LENGTH, FINGER_OUTSIDE / 2]) + WALL_MARGIN
        for yaw in self.yaws:
            local = (self.walls - xy) @ yaw_frame(yaw).T  # (along, across)
            offset = self.grip + FINGER_OUTSIDE / 2
            if not any(np.any(np.all(np.abs(local - [0.0, side * offset]) < half, axis=1))
                       for side in (-1.0, 1.0)):
                return float(yaw)
        return None


def _emptiest_spot(inside: np.ndarray, walls: np.ndarray,
                   beside: list[tuple[float, np.ndarray]], radius: float,
                   aims: np.ndarray, fingers: _Fingers
                   ) -> tuple[np.ndarray, float, float] | None:
    """The (x, y) on a 9x9 grid over ``inside`` (a container's floor and contents, (N, 3))
    with the lowest support and nearest one of ``aims`` (M, 2), at least ``radius`` + 1 cm
    from ``walls`` (N, 2) and from each ``beside`` point set (N, 2) its distance (m); with
    its support height (m) and the hand's yaw (rad): the first of ``fingers``' yaws that
    keeps the fingers off the walls (a spot where none does counts
    :data:`FINGERS_AT_WALL` m higher). ``None`` when no spot qualifies."""
    best, best_score = None, np.inf
    for xy in _grid_spots(inside):
        if _near(walls, xy, radius + 0.01):
            continue
        if any(_near(points, xy, reach) for reach, points in beside):
            continue
        near = np.linalg.norm(inside[:, :2] - xy, axis=1) < radius + 0.005
        if np.count_nonzero(near) < 3:
            continue  # no floor seen there
        support = float(np.percentile(inside[near, 2], 95))
        score = _spot_score(support, xy, aims)
        yaw = fingers.clear_yaw(xy)
        if yaw is None:
            yaw, score = fingers.yaws[0], score + FINGERS_AT_WALL
        if score < best_score:
            best, best_score = (xy, support, yaw), score
    return best


def _above_middle(inside: np.ndarray, points: np.ndarray,
                  radius: float) -> tuple[np.ndarray, float]:
    """A full container's middle (x, y) (of the extent of ``inside``) and the height (m) of
    what fills it there: every one of ``points`` within ``radius`` counts."""
    middle = (inside[:, :2].min(axis=0) + inside[:, :2].max(axis=0)) / 2
    under = np.linalg.norm(points[:, :2] - middle, axis=1) < radius
    return middle, float(np.percentile(points[under, 2] if under.any() else inside[:, 2], 95))


def _near(points: np.ndarray, xy: np.ndarray, radius: float) -> bool:
    """Whether any of ``points`` (N, 2) lies within ``radius`` m of ``xy``."""
    return bool(len(points)) and float(np.min(np.linalg.norm(points - xy, axis=1))) < radius


def lowest_layer(heights: np.ndarray, band: float = 0.01, share: float = 0.03) -> float:
    """Height (m) of the lowest horizontal layer among ``heights``: the lowest ``band``-thick
    slab holding at least ``share`` of them (and 20), its median. A container's floor seen
    past its walls and rims is often a small part of the points inside its box."""
    ordered = np.sort(heights)
    needed = max(20, int(share * len(ordered)))
    if len(ordered) < needed:
        return float(np.median(ordered))
    counts = np.searchsorted(ordered, ordered + band) - np.arange(len(ordered))
    first = int(np.argmax(counts >= needed)) if np.any(counts >= needed) else 0
    layer = ordered[first:first + int(counts[first])]
    return float(np.median(layer))


def standing_mask(scene: PointCloud, level: float,
                  height_std: np.ndarray | None = None) -> np.ndarray:
    """Mask (N,) of the points of ``scene`` that stand on the table seen at ``level`` (m):
    higher above it than :data:`OBSTACLE_HEIGHT`, or than :data:`HEIGHT_SIGMAS` times
    their height's error ``height_std`` (N,) m where that is larger, and with at least
    :data:`OBSTACLE_POINTS` such points in their :data:`OBSTACLE_CELL` cell and the cells
    around it (an isolated outlier is no obstacle)."""
    spread = 0.0 if height_std is None else HEIGHT_SIGMAS * np.asarray(height_std, float)
    high = np.flatnonzero(scene.points[:, 2] > level + np.maximum(OBSTACLE_HEIGHT, spread))
    standing = np.zeros(len(scene), bool)
    standing[high] = neighbour_counts(scene.points[high], OBSTACLE_CELL) >= OBSTACLE_POINTS
    return standing


def table_mask(scene: PointCloud, level: float,
               height_std: np.ndarray | None = None) -> np.ndarray:
    """Mask (N,) of the points of ``scene`` on the table seen at ``level`` (m): at most
    :data:`TABLE_BAND` above it (or :data:`HEIGHT_SIGMAS` times their height's error
    ``height_std`` (N,) m, if larger) and at most :data:`TABLE_BELOW` below it."""
    spread = 0.0 if height_std is None else HEIGHT_SIGMAS * np.asarray(height_std, float)
    above = scene.points[:, 2] - level
    return (above > -TABLE_BELOW) & (above < np.maximum(TABLE_BAND, spread))


def _nodes_near(points: np.ndarray, xs: np.ndarray, ys: np.ndarray, step: float,
                radius: float) -> np.ndarray:
    """Mask (len(xs), len(ys)) of the nodes of the grid ``xs`` x ``ys`` (m, ``step`` m
    apart) with one of ``points`` (N, 2) closer than ``radius`` m."""
    marked = np.zeros((len(xs), len(ys)), bool)
    if len(points) == 0 or marked.size == 0:
        return marked
    reach = np.arange(-int(np.ceil(radius / step)) - 1, int(np.ceil(radius / step)) + 2)
    chunk = max(1, _NODE_CHUNK // len(reach) ** 2)  # bounds the memory of a wide reach
    for low in range(0, len(points), chunk):
        part = points[low:low + chunk]
        ix = np.rint((part[:, 0] - xs[0]) / step).astype(int)[:, None, None] + reach[:, None]
        iy = np.rint((part[:, 1] - ys[0]) / step).astype(int)[:, None, None] + reach[None]
        ix, iy = np.broadcast_arrays(ix, iy)
        gap = ((xs[0] + ix * step - part[:, 0, None, None]) ** 2
               + (ys[0] + iy * step - part[:, 1, None, None]) ** 2)
        hit = (gap < radius**2) & (ix >= 0) & (ix < len(xs)) & (iy >= 0) & (iy < len(ys))
        marked[ix[hit], iy[hit]] = True
    return marked


def table_spot(scene: PointCloud, held: HeldObject, tcp_pose: np.ndarray,
               workspace: Workspace,
               seen_free: Callable[[np.ndarray], np.ndarray] | None = None,
               arm_clear: Callable[[np.ndarray], bool] | None = None,
               height_std: np.ndarray | None = None
               ) -> tuple[np.ndarray, float] | None:
    """Place pose (4x4) and approach (m) on a free patch of the table, nearest to the
    workspace's middle band, reached from the hand's position without crossing tall
    fixtures (:func:`~agentic_env.agents.skills.clearance.path_blocked`); ``None`` when the
    observed table has no such patch.

    A patch is free when the table was seen within 1 cm of it (:func:`table_mask`) and
    nothing stands on the table within the held object's radius + 3 cm of it
    (:func:`standing_mask`), both measured from the table's seen level
    (:func:`~agentic_env.agents.perception.segmentation.table_height`) with margins that
    grow with ``height_std`` (N,) m, the error of each scene point's height (e.g.
    :meth:`SceneView.height_noise`; ``None``: the fixed margins only).

    ``seen_free`` (points (N, 3) -> mask (N,), e.g. :meth:`SceneView.seen_free`) also asks
    that the column the held object comes down through was seen empty: seeing the table
    there is not enough under an open drawer or a shelf, or where the arm hid what stands
    above it. ``arm_clear`` (TCP pose (4x4) -> bool, e.g. :meth:`SceneView.arm_clear`) asks
    that the arm's links stay clear of what stands around at the release pose and above it
    at the approach height (a drawer front, a tall object beside the spot)."""
    level = table_height(scene)
    standing = scene.points[standing_mask(scene, level, height_std), :2]
    table = scene.points[table_mask(scene, level, height_std), :2]
    x0, y0 = max(workspace.low[0], 0.3), max(workspace.low[1], -0.45)
    x1, y1 = min(workspace.high[0], 0.75), min(workspace.high[1], 0.45)
    xs, ys = np.arange(x0, x1, SPOT_STEP), np.arange(y0, y1, SPOT_STEP)
    # a spot needs the table seen there (not off its edge, nor occluded) and room around
    free = (_nodes_near(table, xs, ys, SPOT_STEP, 0.01)
            & ~_nodes_near(standing, xs, ys, SPOT_STEP, held.radius + 0.03))
    column, row = np.nonzero(free)
    spots = np.column_stack([xs[column], ys[row]])
    spots = spots[np.argsort(np.linalg.norm(spots - [0.5, 0.0], axis=1), kind="stable")]
    start = np.asarray(tcp_pose[:2], float)
    for xy in spots:
        if path_blocked(scene, start, xy):
            continue
        if seen_free is not None and not column_seen_free(seen_free, xy, held.radius):
            continue
        position = np.array([*xy, held.below_tcp + RELEASE_GAP])
        pose = top_down_pose(position, tcp_yaw(tcp_pose))
        approach = approach_over(scene, xy, position[2], hanging=held.below_tcp)
        if arm_clear is not None and not all(arm_clear(lifted(pose, rise))
                                             for rise in (0.0, approach)):
            continue
        return pose, approach
    return None
