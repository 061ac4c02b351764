"""One observation seen as a scene: base-frame clouds per camera, computed once, with the
robot's own points removed, and questions such as "what stands near here".

Base frame throughout: z up, the table top is z = 0, metres.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np

from agentic_env.agents.perception import (
    PointCloud,
    box_cloud,
    camera_cloud,
    camera_depth,
    camera_profile,
    height_noise,
    project_to_image,
)
from agentic_env.robot.constants import HOME_JOINT_POSITIONS
from agentic_env.robot.kinematics import ArmKinematics

#: Radius (m) of the column around the TCP whose points count as the hand and what it holds.
HAND_COLUMN = 0.07
#: Depth (m) below the TCP down to which that column counts as the hand.
HAND_DEPTH = 0.12
#: Largest joint distance (rad) from the home configuration that still counts as home.
HOME_TOLERANCE = 0.05
#: Height (m) above the TCP from which :meth:`SceneView.arm_clear` tests obstacles against
#: the arm's links, and the margin (m) that grows the links' boxes there.
ARM_ABOVE_TCP = 0.05
ARM_MARGIN = 0.015
#: A point counts as seen free when its camera ray reaches at least this far (m) beyond it.
SEEN_THROUGH = 0.01
#: Half size (pixels) of the square around a pixel without return whose nearest return
#: stands in for it in :meth:`SceneView.seen_free` (the speckle of a far, dim surface).
SEEN_AROUND = 2


@functools.cache
def kinematics() -> ArmKinematics:
    """The arm's kinematic model (one per process)."""
    return ArmKinematics()


def at_home(obs: Mapping[str, np.ndarray]) -> bool:
    """Whether the arm of ``obs`` is in its home configuration."""
    q = np.asarray(obs["joint_positions"], float)
    return bool(np.max(np.abs(q - HOME_JOINT_POSITIONS)) < HOME_TOLERANCE)


def without_robot(cloud: PointCloud, obs: Mapping[str, np.ndarray],
                  radius: float = HAND_COLUMN) -> PointCloud:
    """``cloud`` without the robot's own points: its links at the observed joint positions
    (self-filtering with the arm's model), and a column of ``radius`` m around the TCP where
    the gripper holds an object (``radius`` 0: no column)."""
    tcp = np.asarray(obs["tcp_pose"][:3], float)
    in_hand = ((np.linalg.norm(cloud.points[:, :2] - tcp[:2], axis=1) < radius)
               & (cloud.points[:, 2] > tcp[2] - HAND_DEPTH))
    on_robot = kinematics().robot_points(cloud.points, obs["joint_positions"])
    return cloud.select(~in_hand & ~on_robot)


def near_box(scene: PointCloud, cloud: PointCloud, radius: float = 0.01) -> np.ndarray:
    """Mask of the ``scene`` points within ``radius`` m of the bounding box of ``cloud``."""
    low, high = cloud.points.min(axis=0) - radius, cloud.points.max(axis=0) + radius
    return np.all((scene.points >= low) & (scene.points <= high), axis=1)


class SceneView:
    """Clouds of one observation, each computed once.

    Args:
        obs: an observation (see :mod:`agentic_env.contract.spaces`).
        stride: pixel stride of the clouds (every ``stride``-th row and column).
    """

    def __init__(self, obs: Mapping[str, np.ndarray], stride: int = 2) -> None:
        self.obs = obs
        self.stride = stride
        self._clouds: dict[tuple[str, bool], PointCloud] = {}
        self._obstacles: dict[str, PointCloud] = {}
        self._without_links: PointCloud | None = None

    def cloud(self, camera: str, keep_gripper: bool = False) -> PointCloud:
        """Every point ``camera`` sees (the gripper's own points removed unless asked)."""
        key = (camera, keep_gripper)
        if key not in self._clouds:
            self._clouds[key] = camera_cloud(self.obs, camera, stride=self.stride,
                                             keep_gripper=keep_gripper)
        return self._clouds[key]

    def obstacles(self, camera: str = "shoulder") -> PointCloud:
        """What ``camera`` sees without the robot and the hand's column (see
        :func:`without_robot`): the things a motion must clear."""
        if camera not in self._obstacles:
            self._obstacles[camera] = without_robot(self.cloud(camera), self.obs)
        return self._obstacles[camera]

    def hides(self, point: np.ndarray, radius: float, camera: str = "shoulder",
              height: float = 0.015) -> bool:
        """Whether something standing more than ``height`` m above ``point`` (3,) hides
        part of the flat mark within ``radius`` m of it from ``camera``: the camera's ray
        through one of its points (the camera's obstacles, seen) meets the horizontal plane
        of ``point`` within ``radius`` of it. A neighbour that hides the mark's near part
        moves the visible part's middle away from itself, so a test by distance from the
        visible middle misses the worst cases; the ray's shadow does not."""
        points = self.obstacles(camera).points
        tall = points[points[:, 2] > point[2] + height]
        if not len(tall):
            return False
        origin = np.asarray(self.obs[f"{camera}_extrinsics"], float)[:3, 3]
        if origin[2] <= tall[:, 2].max():  # a ray that does not come down to the plane
            return True
        reach = (origin[2] - point[2]) / (origin[2] - tall[:, 2])
        shadow = origin[:2] + (tall[:, :2] - origin[:2]) * reach[:, None]
        return bool(np.any(np.linalg.norm(shadow - point[:2], axis=1) < radius))

    def arm_clear(self, pose: np.ndarray, held_radius: float = 0.0,
                  above: float = ARM_ABOVE_TCP, margin: float = ARM_MARGIN) -> bool:
        """Whether the arm can hold its TCP at ``pose`` (4x4, base frame) without its links
        meeting what the shoulder camera sees: the joint positions come from the arm's model
        (inverse kinematics from the observed ones), and only obstacles higher than
        ``above`` m over the TCP are tested (lower ones are the hand's business: approach
        heights and clearances); ``margin`` (m) grows each link's box. The scene is the
        shoulder cloud without the arm's own links and without what hangs in the hand now
        (within ``held_radius`` + 1 cm of the TCP's axis, up to :data:`HAND_DEPTH` below
        it) — unlike :meth:`obstacles`, nothing above the hand is dropped, so a drawer
        front beside the hand at home still counts. ``False`` when the pose is out of
        reach."""
        solution = kinematics().solve(np.asarray(pose, float), self.obs["joint_positions"])
        if not solution.converged:
            return False
        if self._without_links is None:  # once per view: many poses may be asked about
            self._without_links = without_robot(self.cloud("shoulder"), self.obs, radius=0.0)
        points, tcp = self._without_links.points, np.asarray(self.obs["tcp_pose"][:3], float)
        in_hand = ((np.linalg.norm(points[:, :2] - tcp[:2], axis=1) < held_radius + 0.01)
                   & (points[:, 2] > tcp[2] - HAND_DEPTH) & (points[:, 2] <= tcp[2]))
        points = points[~in_hand & (points[:, 2] > pose[2, 3] + above)]
        return not bool(np.any(kinematics().robot_points(points, solution.q, margin)))

    def height_noise(self, points: np.ndarray, camera: str = "shoulder") -> np.ndarray:
        """Std (m, (N,)) of the random error of the heights of the base-frame ``points``
        (N, 3) as ``camera`` measured them: its depth noise model
        (:func:`~agentic_env.agents.perception.depth_filter.height_noise`)."""
        profile = camera_profile(camera, self.obs[f"{camera}_intrinsics"])
        return height_noise(points, self.obs[f"{camera}_extrinsics"], profile.noise)

    def _depths(self, points: np.ndarray, camera: str, around: int = 0
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For base-frame ``points`` (N, 3): whether each projects inside ``camera``'s image,
        the (post-processed) depth (m) measured at its pixel (0 outside; for a pixel
        without return, the nearest return within ``around`` pixels of it, if any) and its
        own depth along the camera's axis (m)."""
        depth = camera_depth(self.obs, camera)
        extrinsics = np.asarray(self.obs[f"{camera}_extrinsics"], float)
        uv = project_to_image(points, self.obs[f"{camera}_intrinsics"], extrinsics)
        height, width = depth.shape
        inside = np.all(np.isfinite(uv), axis=1)
        cols = np.floor(np.where(inside, uv[:, 0], -1)).astype(int)
        rows = np.floor(np.where(inside, uv[:, 1], -1)).astype(int)
        inside &= (cols >= 0) & (cols < width) & (rows >= 0) & (rows < height)
        seen = np.zeros(len(points))
        seen[inside] = depth[rows[inside], cols[inside]]
        blank = np.flatnonzero(inside & (seen <= 0)) if around else np.zeros(0, int)
        if len(blank):
            offsets = np.arange(-around, around + 1)
            window = depth[np.clip(rows[blank, None, None] + offsets[:, None], 0, height - 1),
                           np.clip(cols[blank, None, None] + offsets, 0, width - 1)]
            window = np.where(window > 0, window, np.inf).reshape(len(blank), -1)
            nearest = window.min(axis=1)
            seen[blank] = np.where(np.isfinite(nearest), nearest, 0.0)
        along = (points - extrinsics[:3, 3]) @ extrinsics[:3, 2]
        return inside, np.nan_to_num(seen), along

    def seen_free(self, points: np.ndarray, camera: str = "shoulder") -> np.ndarray:
        """Mask (N,) of the base-frame ``points`` (N, 3) that ``camera`` saw through: the
        depth along each point's pixel lies more than :data:`SEEN_THROUGH` beyond it, so
        nothing stood there. A pixel without return stands for the nearest return within
        :data:`SEEN_AROUND` pixels of it (the speckle of a far, dim surface: the returns
        around it saw past the point; a hole with none around stays unseen). Points
        behind something nearer (the arm included), on a surface, outside the image or
        where no pixel around has depth are not seen free."""
        inside, seen, along = self._depths(np.asarray(points, float).reshape(-1, 3), camera,
                                           SEEN_AROUND)
        return inside & (seen > along + SEEN_THROUGH)

    def unseen(self, points: np.ndarray, camera: str = "shoulder") -> np.ndarray:
        """Mask (N,) of the base-frame ``points`` (N, 3) that ``camera`` could not see:
        behind something nearer than them by more than :data:`SEEN_THROUGH` (the arm, a
        tall object, a container's wall, a drawer), outside the image or where the pixel
        has no depth."""
        inside, seen, along = self._depths(np.asarray(points, float).reshape(-1, 3), camera)
        return ~inside | (seen <= 0.0) | (seen < along - SEEN_THROUGH)

    def robot_share(self, camera: str, region: Sequence[int]) -> float:
        """Share (0..1) of the pixels of ``region`` = (u0, v0, u1, v1) of ``camera`` that are
        the arm: its own points (its kinematic model) or pixels with no depth return, which
        near the table are the arm closer to the camera than its minimum range."""
        depth = camera_depth(self.obs, camera)
        height, width = depth.shape
        pixels = depth[max(region[1], 0):min(region[3], height),
                       max(region[0], 0):min(region[2], width)]
        if pixels.size == 0:
            return 0.0
        around = box_cloud(self.obs, camera, region)
        on_robot = kinematics().robot_points(around.points, self.obs["joint_positions"])
        blind = pixels.size - len(around)
        return (blind + int(np.count_nonzero(on_robot))) / pixels.size
