"""``agentic-env calibrate``: guided ChArUco hand-eye calibration of one camera.

Collecting (needs the robot and the camera)::

    agentic-env calibrate --camera wrist --robot-host 192.168.1.10 --session runs/calib_wrist
    agentic-env calibrate --camera shoulder --robot-host 192.168.1.10 --session runs/calib_sh

For ``wrist`` lay the board flat on the table; for ``shoulder`` fix it to the flange. The
command asks the operator to move the arm (freedrive on the pendant) to a new pose for each
view, captures a frame and the joint angles, says whether the board was found, then solves,
prints the residuals and writes (or updates) the calibration file ``--out``. Every view is
saved under ``--session`` (PNG images and ``session.json``) so the solve can be repeated
offline with ``--replay DIR``; each view records the joint angles and the flange pose
computed from them with the package's arm model (the one the env uses). Aim for 10-20
views that rotate the flange about different axes by 20-40 degrees; residuals of a few
millimetres and under a degree are good.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
from PIL import Image

from agentic_env.real.calibration import Calibration, FlangeKinematics
from agentic_env.real.handeye import (
    BoardDetection,
    CalibrationError,
    CharucoBoardSpec,
    detect_board,
    solve_eye_in_hand,
    solve_eye_to_hand,
)
from agentic_env.robot.kinematics import ArmKinematics

logger = logging.getLogger(__name__)
SESSION_FILE = "session.json"


def collect(camera: str, robot_host: str, spec: CharucoBoardSpec, session: Path,
            views: int) -> None:
    """Guide the operator through ``views`` poses; save images and joints to ``session``."""
    from agentic_env.real.drivers.kinect import AzureKinectCamera
    from agentic_env.real.drivers.realsense import RealSenseCamera
    from agentic_env.real.drivers.ur_rtde import URRtdeArm

    session.mkdir(parents=True, exist_ok=True)
    device = AzureKinectCamera() if camera == "shoulder" else RealSenseCamera()
    where = "fixed to the flange" if camera == "shoulder" else "lying flat on the table"
    print(f"Calibrating the {camera} camera with the ChArUco board {where}.")
    records = []
    intrinsics = None
    flange = FlangeKinematics(ArmKinematics())
    with URRtdeArm(robot_host) as arm, device:
        while len(records) < views:
            answer = input(f"[{len(records) + 1}/{views}] move the arm (freedrive) to a new pose "
                           "with the whole board in view, release it, press Enter (q = done): ")
            if answer.strip().lower() == "q":
                break
            frame = device.capture(1.0)
            joints = arm.read_state().joint_positions
            rgb = _to_rgb(frame.color, frame.color_format)
            intrinsics = frame.intrinsics
            if detect_board(rgb, intrinsics, spec) is None:
                print("  board not found: show more of it, closer or less tilted")
                continue
            name = f"view_{len(records):02d}.png"
            Image.fromarray(rgb).save(session / name)
            records.append({"image": name, "joints": np.asarray(joints).tolist(),
                            "flange_to_base": flange.pose(joints).tolist()})
            print(f"  saved {name}")
    if intrinsics is None:
        raise CalibrationError("no views collected")
    (session / SESSION_FILE).write_text(json.dumps(
        {"camera": camera, "intrinsics": np.asarray(intrinsics).tolist(), "views": records},
        indent=2) + "\n")


def _to_rgb(color: np.ndarray, color_format: str) -> np.ndarray:
    return np.ascontiguousarray(color[..., :3] if color_format == "rgb8" else color[..., 2::-1])


def solve_session(session: Path, spec: CharucoBoardSpec) -> tuple[np.ndarray, dict[str, float]]:
    """Detect the board in every saved view and solve the session's camera.

    Raises:
        CalibrationError: with too few usable views.
    """
    data = json.loads((session / SESSION_FILE).read_text())
    intrinsics = np.array(data["intrinsics"])
    poses, detections = [], []
    for view in data["views"]:
        rgb = np.asarray(Image.open(session / view["image"]).convert("RGB"))
        detection: BoardDetection | None = detect_board(rgb, intrinsics, spec)
        if detection is None:
            logger.warning("board not found in %s; skipped", view["image"])
            continue
        poses.append(np.array(view["flange_to_base"]))
        detections.append(detection)
    solve = solve_eye_in_hand if data["camera"] == "wrist" else solve_eye_to_hand
    return solve(poses, detections)


def write_calibration(path: Path, camera: str, transform: np.ndarray,
                      residuals: dict[str, float]) -> Path:
    """Write ``camera``'s transform into the calibration file at ``path`` (created with the
    other camera as identity, marked uncalibrated, when missing)."""
    if path.exists():
        calibration = Calibration.load(path)
    else:
        calibration = Calibration(np.eye(4), np.eye(4),
                                  {"shoulder": {"views": 0.0}, "wrist": {"views": 0.0}})
        print(f"{path} is new: calibrate the other camera too before using it")
    return calibration.with_camera(camera, transform, residuals).save(path)
