"""The project's ChArUco hand-eye calibration run in simulation, to measure its error.

A session does what ``agentic-env calibrate`` (:mod:`agentic_env.real.calibrate`) does on the
robot, in the MuJoCo workcell (:class:`~agentic_env.sim.scene.SceneBuilder`, nominal
dressing):

* ``wrist`` (eye-in-hand): the board lies flat on the table (a textured plane at a random
  place and yaw per session); the arm shows it to the wrist camera from ``views`` poses.
* ``shoulder`` (eye-to-hand): the board is fixed to the flange, 16 cm out along the flange's
  z axis (in front of the fingertips, facing away from the flange; a mocap body moved with
  the flange, since MuJoCo planes must be static); the arm shows it to the still shoulder
  camera, the board's centre in the upper half of its image.

Each view: a camera-to-board pose is drawn (tilted up to 35 degrees from facing the board,
rolled up to +-40 degrees, so consecutive views rotate the flange by tens of degrees about
different axes), the arm is put there with the package's IK (:class:`ArmKinematics`) and
``mj_forward``, rejected if the whole board would not be in the image or the arm would go
below the table, rendered with :class:`CameraRenderer` and, when the realistic sensor model
exists (:mod:`agentic_env.sim.realism.sensors`), passed through it (the arm is still). The
board is detected with :func:`detect_board`; as on the robot, a view where it is not found is
replaced by a new pose. The joint angles are recorded with the UR5e's repeatability as noise
and the flange poses computed from them with :class:`FlangeKinematics`; the session is solved
with :func:`solve_eye_in_hand` / :func:`solve_eye_to_hand` and compared to the model's true
camera pose: :func:`agentic_env.sim.realism.calibration.extrinsic_error`.

Frames: base = robot base frame (metres); the wrist truth is camera (OpenCV) -> flange, the
shoulder truth camera (OpenCV) -> base.

The measured error is a floor of a real session's (:data:`NOT_MODELLED`): the cameras'
intrinsics are exact, the arm's kinematics are the model's and the board is printed to scale.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import util
from typing import Protocol

import cv2
import mujoco
import numpy as np

from agentic_env.contract.workcell import ROBOT_PREFIX, SceneConfig
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import (
    CameraConfig,
    azure_kinect_color,
    project_points,
    realsense_d405,
)
from agentic_env.geometry.rotations import axis_rotation, unit
from agentic_env.real.calibration import FLANGE_SITE, FlangeKinematics
from agentic_env.real.handeye import (
    BoardDetection,
    CharucoBoardSpec,
    detect_board,
    solve_eye_in_hand,
    solve_eye_to_hand,
)
from agentic_env.robot.constants import GRIPPER_PREFIX, HOME_JOINT_POSITIONS
from agentic_env.robot.kinematics import ArmKinematics
from agentic_env.robot.model import RobotIndices
from agentic_env.sim.cameras import CameraRenderer, camera_pose_in_world
from agentic_env.sim.realism.calibration import extrinsic_error
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.textures import add_texture

#: White quiet zone printed around the board, metres.
BOARD_MARGIN = 0.02
#: Mocap body carrying the table board.
BOARD_MOUNT = "calibration_board_mount"
#: Resolution of the board's texture, pixels per metre (0.25 mm texels).
TEXTURE_PPM = 4000.0
#: Height of the table board's plane above the table top, metres (no depth fighting).
TABLE_BOARD_LIFT = 5e-4
#: Distance of the flange board's plane from the flange face, metres (past the fingertips).
FLANGE_BOARD_OFFSET = 0.16
#: UR5e pose repeatability, metres: +-0.03 mm (Universal Robots, UR5e technical
#: specifications, "Pose repeatability per ISO 9283").
UR5E_REPEATABILITY = 3e-5
#: UR5e reach, metres (same datasheet, "Reach": 850 mm).
UR5E_REACH = 0.85
#: Noise of each recorded joint angle, rad: the repeatability read as 3 standard deviations
#: of the flange position (ISO 9283 RP = mean + 3 sigma) over a lever arm of the reach.
JOINT_NOISE_STD = UR5E_REPEATABILITY / 3.0 / UR5E_REACH
#: What the simulated sessions leave out, no source giving a number for it (written into
#: ``world.toml`` with each measurement).
NOT_MODELLED = (
    "a floor of a real session's error: not modelled are the factory intrinsics' error (no "
    "published figure for the Azure Kinect's or the D405's colour intrinsics; the sessions and "
    "the agents get the exact ones), the arm's absolute (kinematic) accuracy (Universal Robots "
    "publishes only the UR5e's pose repeatability, +-0.03 mm per ISO 9283: a repeatability, "
    "not an accuracy; it is the only arm error added, as joint noise) and the printed board's "
    "scale error")
#: Camera distance from the board centre: wrist (D405 range 7-50 cm), shoulder, metres.
WRIST_DISTANCE = (0.26, 0.40)
SHOULDER_DISTANCE = (0.5, 0.75)
#: Image rows (fractions of the height) of the shoulder views' board centres: the camera looks
#: down at the table, so only in the upper half is the arm behind the board above the table.
SHOULDER_ROWS = (0.15, 0.5)
#: Image columns (fractions of the width) of the shoulder views' board centres.
SHOULDER_COLUMNS = (0.3, 0.7)
#: Largest tilt from facing the board, and roll about the line of sight, radians.
MAX_TILT = np.radians(35.0)
MAX_ROLL = np.radians(40.0)
#: Pixels the board's outer corners must stay inside the image.
IMAGE_MARGIN = 8.0
#: Lowest allowed robot point or board corner above the table top, metres.
TABLE_CLEARANCE = 0.01
#: Poses drawn per view before a session gives up.
MAX_TRIES_PER_VIEW = 60


class RgbSensor(Protocol):
    """The RGB part of a camera model: ``apply(rgb, depth, rng) -> (rgb, depth)``."""

    def apply(self, rgb: np.ndarray, depth: np.ndarray, rng: np.random.Generator,
              camera_velocity: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Turn an exact render into what the device delivers (undistorted)."""


@dataclass(frozen=True)
class HandEyeSimConfig:
    """A simulated calibration setup.

    Attributes:
        board: the printed board (the ``calibrate`` command's default).
        wrist_camera: the wrist camera at the D405's colour resolution (848 x 480, the real
            driver's default stream).
        shoulder_camera: the shoulder camera at the Azure Kinect's colour resolution
            (1280 x 720, 720p as the real driver streams it).
        views: views with the board found per session (the real guide asks 10-20).
        setting: the scene dressing (nominal, not randomised).
        joint_noise_std: noise of each recorded joint angle, rad.
        sensors: pass every view through the realistic sensor model when it exists.
    """

    board: CharucoBoardSpec = field(default_factory=CharucoBoardSpec)
    wrist_camera: CameraConfig = field(default_factory=lambda: realsense_d405(848, 480))
    shoulder_camera: CameraConfig = field(default_factory=lambda: azure_kinect_color(1280, 720))
    views: int = 12
    setting: str = "lab"
    joint_noise_std: float = JOINT_NOISE_STD
    sensors: bool = True


@dataclass(frozen=True)
class SessionResult:
    """One simulated calibration session.

    Attributes:
        camera: ``wrist`` or ``shoulder``.
        error: (4, 4) solved against true pose, :mod:`agentic_env.sim.realism.calibration`'s
            convention (parent frame: flange for the wrist, base for the shoulder).
        residuals: the solver's own residuals (``translation_mm``, ``rotation_deg``,
            ``reprojection_px``, ``views``).
        poses_shown: poses rendered, including those where the board was not found.
    """

    camera: str
    error: np.ndarray
    residuals: dict[str, float]
    poses_shown: int


def board_texture(board: CharucoBoardSpec) -> np.ndarray:
    """The printed board with its white margin, (H, W, 3) uint8 at :data:`TEXTURE_PPM`."""
    margin = round(BOARD_MARGIN * TEXTURE_PPM)
    grey = cv2.copyMakeBorder(board.image(TEXTURE_PPM), margin, margin, margin, margin,
                              cv2.BORDER_CONSTANT, value=255)
    return np.repeat(grey[..., None], 3, axis=-1)


def board_in_plane(board: CharucoBoardSpec) -> np.ndarray:
    """Board frame (OpenCV's: origin at the first square's outer corner, x along the
    squares, z into the print) in the frame of the textured plane geom (z out of the
    print), (4, 4). MuJoCo maps the texture's first row to the plane's +y edge."""
    pose = np.eye(4)
    pose[:3, :3] = np.diag([1.0, -1.0, -1.0])
    pose[:3, 3] = [-board.squares_x * board.square_length / 2,
                   board.squares_y * board.square_length / 2, 0.0]
    return pose


def _board_corners(board: CharucoBoardSpec) -> np.ndarray:
    """The chessboard area's four outer corners in the board frame, (4, 4) homogeneous."""
    width, height = board.squares_x * board.square_length, board.squares_y * board.square_length
    return np.array([[0, 0, 0, 1], [width, 0, 0, 1], [0, height, 0, 1], [width, height, 0, 1.0]])


def _board_centre(board: CharucoBoardSpec) -> np.ndarray:
    return np.array([board.squares_x * board.square_length / 2,
                     board.squares_y * board.square_length / 2, 0.0])


def _add_board_plane(builder: SceneBuilder, board: CharucoBoardSpec,
                     parent: mujoco.MjsBody) -> None:
    add_texture(builder.spec, "calibration_board", board_texture(board))
    material = builder.spec.add_material(name="calibration_board", texrepeat=[1, 1],
                                         texuniform=False, rgba=[1, 1, 1, 1], specular=0.0)
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "calibration_board"
    half = (np.array([board.squares_x, board.squares_y]) * board.square_length / 2
            + BOARD_MARGIN)
    parent.add_geom(name="calibration_board", type=mujoco.mjtGeom.mjGEOM_PLANE,
                    size=[*half, 0.01], material="calibration_board",
                    contype=0, conaffinity=0)


def _sensor(camera: CameraConfig, setting: str) -> RgbSensor | None:
    """The realistic camera model of ``camera``, or None while that module does not exist."""
    if util.find_spec("agentic_env.sim.realism.sensors") is None:
        return None
    from agentic_env.sim.realism.sensors import make_sensor

    return make_sensor(camera, setting)


def _look_rotation(forward: np.ndarray, reference: np.ndarray, roll: float) -> np.ndarray:
    """OpenCV camera rotation (3, 3) looking along ``forward`` with x near ``reference``
    turned by ``roll`` rad about the line of sight."""
    z = unit(forward)
    x = unit(reference - (reference @ z) * z)
    return axis_rotation(z, roll) @ np.column_stack([x, np.cross(z, x), z])


def _tilt(rng: np.random.Generator, axis: np.ndarray) -> np.ndarray:
    """A rotation by up to :data:`MAX_TILT` about a random axis perpendicular to ``axis``."""
    other = unit(np.cross(axis, rng.normal(size=3)))
    return axis_rotation(other, rng.uniform(0.0, MAX_TILT))


class HandEyeRig:
    """One camera's simulated calibration setup: the scene with the board, the renderer,
    the arm model and the true camera pose."""

    def __init__(self, camera: str, config: HandEyeSimConfig | None = None) -> None:
        """Build the workcell for ``camera`` (``wrist`` or ``shoulder``) with its board.

        Raises:
            InvalidConfigError: for another camera name.
        """
        self.camera = camera
        self.config = config = config or HandEyeSimConfig()
        scene = SceneConfig(shoulder_camera=config.shoulder_camera,
                            wrist_camera=config.wrist_camera, setting=config.setting,
                            randomize=False)
        builder = SceneBuilder(scene)
        self.base_pos = builder.base_pos
        if camera == "wrist":
            self.camera_config = config.wrist_camera
            mj_camera = ROBOT_PREFIX + GRIPPER_PREFIX + config.wrist_camera.name
        elif camera == "shoulder":
            self.camera_config = config.shoulder_camera
            mj_camera = config.shoulder_camera.name
        else:
            raise InvalidConfigError(f"camera {camera!r}; valid: wrist, shoulder")
        # a plane must be static, so the board is a mocap body moved with the flange
        board = builder.spec.worldbody.add_body(name=BOARD_MOUNT, mocap=True)
        _add_board_plane(builder, config.board, board)
        self.model = builder.compile()
        self.data = mujoco.MjData(self.model)
        mujoco.mj_resetDataKeyframe(self.model, self.data, self.model.key("robot/home").id)
        self._arm_qpos = RobotIndices.from_model(self.model, ROBOT_PREFIX).arm_qpos
        self.renderer = CameraRenderer(self.model, self.camera_config, mj_camera)
        self.kinematics = ArmKinematics()
        self.flange = FlangeKinematics(self.kinematics)
        home_flange = self.flange.pose(HOME_JOINT_POSITIONS)
        self._tcp_in_flange = np.linalg.inv(home_flange) @ self.kinematics.forward(
            HOME_JOINT_POSITIONS)
        self._intrinsics = self.camera_config.intrinsics
        self.truth = self._true_pose(HOME_JOINT_POSITIONS)
        self._seed = HOME_JOINT_POSITIONS.copy()
        self._plane_in_flange = np.eye(4)
        self._plane_in_flange[2, 3] = FLANGE_BOARD_OFFSET
        self._board_in_flange = self._plane_in_flange @ board_in_plane(config.board)
        self._sensor = _sensor(self.camera_config, config.setting) if config.sensors else None
        if camera == "shoulder":
            self._seed = self._shoulder_seed()

    @property
    def uses_sensor_model(self) -> bool:
        """Whether views pass through :mod:`agentic_env.sim.realism.sensors`."""
        return self._sensor is not None

    def _set_joints(self, q: np.ndarray) -> None:
        self.data.qpos[self._arm_qpos] = q
        mujoco.mj_forward(self.model, self.data)

    def _true_pose(self, q: np.ndarray) -> np.ndarray:
        """The camera's true pose in its parent frame (flange or base), (4, 4)."""
        self._set_joints(q)
        camera = camera_pose_in_world(self.data, self.renderer.camera_id)
        if self.camera == "shoulder":
            camera[:3, 3] -= self.base_pos
            return camera
        site = self.data.site(ROBOT_PREFIX + FLANGE_SITE)
        flange = np.eye(4)
        flange[:3, :3] = site.xmat.reshape(3, 3)
        flange[:3, 3] = site.xpos
        return np.linalg.inv(flange) @ camera

    def _reach(self, flange_target: np.ndarray) -> np.ndarray | None:
        """Joints putting the flange at ``flange_target`` (base frame), or None."""
        solution = self.kinematics.solve(flange_target @ self._tcp_in_flange, self._seed,
                                         max_iterations=100)
        return solution.q if solution.converged else None

    def _shoulder_seed(self) -> np.ndarray:
        """An arm pose holding the board square to the shoulder camera, nearest and mid-image."""
        cfg = self.camera_config
        pixel = [cfg.width * np.mean(SHOULDER_COLUMNS), cfg.height * np.mean(SHOULDER_ROWS)]
        ray = unit(np.linalg.solve(self._intrinsics, [*pixel, 1.0]))
        board_in_camera = np.eye(4)
        board_in_camera[:3, :3] = _look_rotation(ray, np.array([1.0, 0.0, 0.0]), 0.0)
        board_in_camera[:3, 3] = (SHOULDER_DISTANCE[0] * ray
                                  - board_in_camera[:3, :3] @ _board_centre(self.config.board))
        target = self.truth @ board_in_camera @ np.linalg.inv(self._board_in_flange)
        return self.kinematics.solve(target @ self._tcp_in_flange, HOME_JOINT_POSITIONS,
                                     max_iterations=500).q

    def _sees_whole_board(self, board_in_camera: np.ndarray, board_in_base: np.ndarray,
                          q: np.ndarray) -> bool:
        corners = _board_corners(self.config.board)
        in_camera = (board_in_camera @ corners.T)[:3].T
        cfg = self.camera_config
        if np.any(in_camera[:, 2] <= 0.0):
            return False
        pixels = project_points(in_camera, self._intrinsics)
        inside = np.all((pixels >= IMAGE_MARGIN)
                        & (pixels <= [cfg.width - IMAGE_MARGIN, cfg.height - IMAGE_MARGIN]))
        lying = self.camera == "wrist"  # on the table; else held above it
        above = lying or np.all((board_in_base @ corners.T)[2] > TABLE_CLEARANCE)
        return bool(inside and above and self.kinematics.lowest_geom_height(q) > TABLE_CLEARANCE)

    def _wrist_pose(self, rng: np.random.Generator, board_in_base: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Joints and board-in-camera of one random wrist view, or None if unreachable."""
        centre = board_in_base[:3, :3] @ _board_centre(self.config.board) + board_in_base[:3, 3]
        direction = _tilt(rng, np.array([0.0, 0.0, 1.0])) @ np.array([0.0, 0.0, 1.0])
        eye = centre + rng.uniform(*WRIST_DISTANCE) * direction
        aim = centre + np.append(rng.uniform(-0.03, 0.03, 2), 0.0)
        camera = np.eye(4)
        camera[:3, :3] = _look_rotation(aim - eye, board_in_base[:3, 0],
                                        rng.uniform(-MAX_ROLL, MAX_ROLL))
        camera[:3, 3] = eye
        q = self._reach(camera @ np.linalg.inv(self.truth))
        if q is None:
            return None
        actual = self.flange.pose(q) @ self.truth
        board_in_camera = np.linalg.inv(actual) @ board_in_base
        return (q, board_in_camera) if self._sees_whole_board(board_in_camera, board_in_base,
                                                               q) else None

    def _shoulder_pose(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
        """Joints and board-in-camera of one random shoulder view, or None if unreachable."""
        cfg = self.camera_config
        low, high = np.transpose([SHOULDER_COLUMNS, SHOULDER_ROWS])
        pixel = rng.uniform(low, high) * [cfg.width, cfg.height]
        ray = np.linalg.solve(self._intrinsics, [*pixel, 1.0])
        centre = rng.uniform(*SHOULDER_DISTANCE) * unit(ray)
        rotation = _look_rotation(_tilt(rng, unit(ray)) @ unit(ray), np.array([1.0, 0, 0]),
                                  rng.uniform(-MAX_ROLL, MAX_ROLL))
        board_in_camera = np.eye(4)
        board_in_camera[:3, :3] = rotation
        board_in_camera[:3, 3] = centre - rotation @ _board_centre(self.config.board)
        board_in_base = self.truth @ board_in_camera
        q = self._reach(board_in_base @ np.linalg.inv(self._board_in_flange))
        if q is None:
            return None
        board_in_base = self.flange.pose(q) @ self._board_in_flange
        board_in_camera = np.linalg.inv(self.truth) @ board_in_base
        return (q, board_in_camera) if self._sees_whole_board(board_in_camera, board_in_base,
                                                               q) else None

    def _place_board(self, plane_in_base: np.ndarray) -> None:
        """Move the board's plane to ``plane_in_base`` (4, 4)."""
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, plane_in_base[:3, :3].ravel())
        mocap = self.model.body(BOARD_MOUNT).mocapid[0]
        self.data.mocap_pos[mocap] = plane_in_base[:3, 3] + self.base_pos
        self.data.mocap_quat[mocap] = quat

    def _place_table_board(self, rng: np.random.Generator) -> np.ndarray:
        """Put the board on the table at a random place and yaw; its pose in the base."""
        plane = np.eye(4)
        plane[:3, :3] = axis_rotation(np.array([0.0, 0.0, 1.0]), rng.uniform(-0.25, 0.25) * np.pi)
        plane[:3, 3] = [rng.uniform(0.40, 0.52), rng.uniform(-0.12, 0.12), TABLE_BOARD_LIFT]
        self._place_board(plane)
        return plane @ board_in_plane(self.config.board)

    def _capture(self, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The camera's RGB with the arm still at ``q``, through the sensor model if any."""
        if self.camera == "shoulder":  # the board is fixed to the flange
            self._place_board(self.flange.pose(q) @ self._plane_in_flange)
        self._set_joints(q)
        rgb, depth = self.renderer.render(self.data, rng, depth=self._sensor is not None)
        if self._sensor is not None:
            rgb, _ = self._sensor.apply(rgb, depth, rng)
        return rgb

    def session(self, rng: np.random.Generator) -> SessionResult:
        """Run one calibration session of ``config.views`` views and solve it.

        Raises:
            agentic_env.real.handeye.CalibrationError: when the solver rejects the views.
            RuntimeError: when poses with the whole board in view cannot be found.
        """
        board_in_base = self._place_table_board(rng) if self.camera == "wrist" else None
        flanges: list[np.ndarray] = []
        detections: list[BoardDetection] = []
        shown = tries = 0
        while len(detections) < self.config.views:
            tries += 1
            if tries > MAX_TRIES_PER_VIEW * self.config.views:
                raise RuntimeError(f"{self.camera}: no reachable view with the whole board "
                                   f"after {tries - 1} tries")
            pose = (self._wrist_pose(rng, board_in_base) if board_in_base is not None
                    else self._shoulder_pose(rng))
            if pose is None:
                continue
            q = pose[0]
            shown += 1
            detection = detect_board(self._capture(q, rng), self._intrinsics, self.config.board)
            if detection is None:
                continue
            recorded = q + rng.normal(0.0, self.config.joint_noise_std, q.shape)
            flanges.append(self.flange.pose(recorded))
            detections.append(detection)
        solve = solve_eye_in_hand if self.camera == "wrist" else solve_eye_to_hand
        solved, residuals = solve(flanges, detections)
        return SessionResult(self.camera, extrinsic_error(self.truth, solved), residuals, shown)
