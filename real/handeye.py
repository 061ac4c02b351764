"""ChArUco board detection and hand-eye calibration with OpenCV (``opencv-contrib``, in the
``real`` extra; imported lazily).

* Eye-in-hand (wrist camera): the board lies still on the table; the arm shows it to the
  camera from many poses. :func:`solve_eye_in_hand` returns the camera pose in the flange
  frame.
* Eye-to-hand (shoulder camera): the board is fixed to the flange; the arm shows it to the
  still camera. :func:`solve_eye_to_hand` returns the camera pose in the base frame.

Both take the flange poses (base frame, from the joint angles) and the board poses seen by
the camera (:func:`detect_board`), solve with ``cv2.calibrateHandEye`` and report how well
the views agree: the spread of the solved fixed transform (board in base, or board in
flange) over the views, as RMS translation (mm) and rotation (deg), next to the detection's
RMS reprojection error (px). Intrinsics follow :mod:`agentic_env.sim.cameras` (pixel centres at
integer + 0.5); they are shifted to OpenCV's convention internally.

ChArUco corners are refined once more with ``cv2.cornerSubPix`` after OpenCV's
``CharucoDetector``: up to at least 4.13 (the pinned wheel) the detector returns its
sub-pixel corners shifted by +0.5 px in x and y (it moves its initial guesses by -0.5 px,
refines, then adds the 0.5 px back to the converged corner: opencv issue #25539, fixed by
pull request #28380). ``cornerSubPix`` converges to the corner's saddle point from a guess
half a pixel off, so the second refinement removes the shift where the detector has it and
changes nothing where it does not: no version check is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.real.drivers.base import require

_INSTALL = "install the 'real' extra: pip install 'agentic-env[real]' (opencv-contrib)"
#: Fewest ChArUco corners accepted for a pose.
MIN_CORNERS = 6
#: Fewest views accepted by the solvers.
MIN_VIEWS = 3
#: Half side of a corner's refinement window, pixels: the distance to the nearest detected
#: marker corner less this margin, kept within :data:`REFINE_WINDOW` (OpenCV's own rule in
#: ``CharucoDetector``, so a window never reaches a marker's corner).
REFINE_MARGIN = 2.0
REFINE_WINDOW = (1, 10)
#: ``cornerSubPix`` stops after this many iterations or a move below this many pixels.
REFINE_ITERATIONS = 30
REFINE_EPSILON = 0.01


class CalibrationError(AgenticEnvError, RuntimeError):
    """Too few or degenerate views to solve a calibration."""


def _cv2() -> object:
    return require("cv2", "ChArUco calibration", _INSTALL)


@dataclass(frozen=True)
class CharucoBoardSpec:
    """A printed ChArUco board.

    Attributes:
        squares_x: squares along the board's x axis.
        squares_y: squares along its y axis.
        square_length: chessboard square side, metres (measure the print).
        marker_length: ArUco marker side, metres.
        dictionary: OpenCV ArUco dictionary name.
    """

    squares_x: int = 7
    squares_y: int = 5
    square_length: float = 0.04
    marker_length: float = 0.03
    dictionary: str = "DICT_5X5_100"

    def board(self) -> object:
        """The ``cv2.aruco.CharucoBoard``."""
        cv2 = _cv2()
        if not hasattr(cv2.aruco, self.dictionary):
            raise InvalidConfigError(f"unknown ArUco dictionary {self.dictionary!r}; e.g. "
                                     "DICT_4X4_50, DICT_5X5_100, DICT_6X6_250")
        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
        return cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), self.square_length,
                                      self.marker_length, dictionary)

    def image(self, pixels_per_metre: float) -> np.ndarray:
        """The board as a greyscale image (uint8): pixel ``(r, c)`` covers board
        coordinates ``[c, c + 1) / ppm`` x ``[r, r + 1) / ppm`` metres."""
        size = (round(self.squares_x * self.square_length * pixels_per_metre),
                round(self.squares_y * self.square_length * pixels_per_metre))
        return self.board().generateImage(size, marginSize=0)


@dataclass(frozen=True)
class BoardDetection:
    """A board pose seen by a camera.

    Attributes:
        board_to_camera: (4, 4) board frame -> OpenCV camera frame.
        corners: ChArUco corners used.
        reprojection_px: RMS reprojection error of those corners, pixels.
    """

    board_to_camera: np.ndarray
    corners: int
    reprojection_px: float


def _opencv_intrinsics(intrinsics: np.ndarray) -> np.ndarray:
    matrix = np.asarray(intrinsics, dtype=float).copy()
    matrix[:2, 2] -= 0.5
    return matrix


def _matrix(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = np.ravel(translation)
    return pose


def _refine_corners(grey: np.ndarray, corners: np.ndarray,
                    marker_corners: Sequence[np.ndarray]) -> np.ndarray:
    """``corners`` (N, 1, 2) float32, OpenCV pixels, refined by ``cv2.cornerSubPix`` in
    ``grey``, each in a window limited by its distance to the nearest of ``marker_corners``
    (see the module docstring)."""
    cv2 = _cv2()
    points = corners.reshape(-1, 2).astype(np.float32)
    markers = np.concatenate([np.reshape(m, (-1, 2)) for m in marker_corners])
    nearest = np.linalg.norm(points[:, None] - markers[None], axis=-1).min(axis=1)
    half = np.clip((nearest - REFINE_MARGIN).astype(int), *REFINE_WINDOW)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, REFINE_ITERATIONS,
                REFINE_EPSILON)
    for size in np.unique(half):
        rows = half == size
        points[rows] = cv2.cornerSubPix(grey, points[rows].reshape(-1, 1, 2).copy(),
                                        (int(size), int(size)), (-1, -1),
                                        criteria).reshape(-1, 2)
    return points.reshape(-1, 1, 2)


def detect_corners(image: np.ndarray, spec: CharucoBoardSpec
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """The board's ChArUco corners in an RGB (H, W, 3) or grey (H, W) uint8 image: their ids
    (N,) and image positions (N, 2), OpenCV pixels (pixel centres at integers), refined
    without the detector's half-pixel shift; ``None`` if fewer than :data:`MIN_CORNERS`
    are visible."""
    cv2 = _cv2()
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    corners, ids, marker_corners, _ = cv2.aruco.CharucoDetector(spec.board()).detectBoard(grey)
    if ids is None or len(ids) < MIN_CORNERS:
        return None
    return ids.ravel(), _refine_corners(grey, corners, marker_corners).reshape(-1, 2)


def detect_board(image: np.ndarray, intrinsics: np.ndarray, spec: CharucoBoardSpec,
                 distortion: np.ndarray | None = None) -> BoardDetection | None:
    """Find the board in an RGB (H, W, 3) or grey (H, W) uint8 image; ``None`` if fewer than
    :data:`MIN_CORNERS` corners are visible."""
    cv2 = _cv2()
    found = detect_corners(image, spec)
    if found is None:
        return None
    ids, corners = found
    object_points, image_points = spec.board().matchImagePoints(
        corners.reshape(-1, 1, 2), ids.reshape(-1, 1))
    camera = _opencv_intrinsics(intrinsics)
    coefficients = np.zeros(5) if distortion is None else np.asarray(distortion, float)
    ok, rvec, tvec = cv2.solvePnP(object_points, image_points, camera, coefficients)
    if not ok:
        return None
    projected, _ = cv2.projectPoints(object_points, rvec, tvec, camera, coefficients)
    error = np.sqrt(np.mean(np.sum((projected - image_points) ** 2, axis=-1)))
    return BoardDetection(_matrix(cv2.Rodrigues(rvec)[0], tvec), len(ids), float(error))


def _spread(poses: Sequence[np.ndarray]) -> dict[str, float]:
    """RMS translation (mm) and rotation (deg) deviation of ``poses`` from their mean."""
    translations = np.array([p[:3, 3] for p in poses])
    mean_t = translations.mean(axis=0)
    u, _, vt = np.linalg.svd(sum(p[:3, :3] for p in poses))
    mean_r = u @ np.diag([1, 1, np.linalg.det(u @ vt)]) @ vt
    angles = [np.arccos(np.clip((np.trace(mean_r.T @ p[:3, :3]) - 1) / 2, -1, 1))
              for p in poses]
    return {
        "translation_mm": float(np.sqrt(np.mean(np.sum((translations - mean_t) ** 2, 1))) * 1e3),
        "rotation_deg": float(np.degrees(np.sqrt(np.mean(np.square(angles))))),
    }


def _hand_eye(gripper_to_base: Sequence[np.ndarray], board_to_camera: Sequence[np.ndarray]
              ) -> np.ndarray:
    cv2 = _cv2()
    if len(gripper_to_base) != len(board_to_camera):
        raise CalibrationError("need one flange pose per board view")
    if len(board_to_camera) < MIN_VIEWS:
        raise CalibrationError(f"need at least {MIN_VIEWS} views with the board found; got "
                               f"{len(board_to_camera)} (aim for 10-20 varied poses)")
    rotation, translation = cv2.calibrateHandEye(
        [g[:3, :3] for g in gripper_to_base], [g[:3, 3] for g in gripper_to_base],
        [b[:3, :3] for b in board_to_camera], [b[:3, 3] for b in board_to_camera],
        method=cv2.CALIB_HAND_EYE_PARK)
    result = _matrix(rotation, translation)
    if not np.all(np.isfinite(result)):
        raise CalibrationError("the hand-eye solver failed: the poses are degenerate; rotate "
                               "the flange about at least two different axes between views")
    return result


def solve_eye_in_hand(flange_to_base: Sequence[np.ndarray],
                      detections: Sequence[BoardDetection]) -> tuple[np.ndarray, dict[str, float]]:
    """Wrist camera -> flange (4, 4) and residuals, from a still board on the table."""
    views = [d.board_to_camera for d in detections]
    camera_to_flange = _hand_eye(flange_to_base, views)
    board_in_base = [f @ camera_to_flange @ b for f, b in zip(flange_to_base, views, strict=True)]
    return camera_to_flange, _residuals(board_in_base, detections)


def solve_eye_to_hand(flange_to_base: Sequence[np.ndarray],
                      detections: Sequence[BoardDetection]) -> tuple[np.ndarray, dict[str, float]]:
    """Shoulder camera -> base (4, 4) and residuals, from a board fixed to the flange."""
    views = [d.board_to_camera for d in detections]
    base_to_flange = [np.linalg.inv(f) for f in flange_to_base]
    camera_to_base = _hand_eye(base_to_flange, views)
    board_in_flange = [f_inv @ camera_to_base @ b
                       for f_inv, b in zip(base_to_flange, views, strict=True)]
    return camera_to_base, _residuals(board_in_flange, detections)


def _residuals(fixed: Sequence[np.ndarray], detections: Sequence[BoardDetection]
               ) -> dict[str, float]:
    reprojection = float(np.sqrt(np.mean([d.reprojection_px ** 2 for d in detections])))
    return {**_spread(fixed), "reprojection_px": reprojection, "views": float(len(fixed))}
