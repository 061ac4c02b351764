"""The calibration file the real env loads: where the cameras are.

* ``shoulder_to_base`` (4x4): pose of the shoulder camera's OpenCV frame in the robot base
  frame (eye-to-hand).
* ``wrist_to_flange`` (4x4): pose of the wrist camera's OpenCV frame in the tool flange frame
  (eye-in-hand); the wrist extrinsics of an observation are ``flange(q) @ wrist_to_flange``.

The flange frame is the UR tool flange (the arm's ``attachment_site``: origin at the flange
face centre, z out of the flange). The file is JSON; :mod:`agentic_env.real.handeye` solves
it from ChArUco views and ``agentic-env calibrate`` writes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.robot.kinematics import ArmKinematics

#: Site of the tool flange in the robot model.
FLANGE_SITE = "attachment_site"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Calibration:
    """Camera poses of the workcell (metres, rotation matrices).

    Attributes:
        shoulder_to_base: (4, 4) shoulder camera (OpenCV frame) -> robot base frame.
        wrist_to_flange: (4, 4) wrist camera (OpenCV frame) -> tool flange frame.
        residuals: per camera, the solver's residuals (``translation_mm``,
            ``rotation_deg``, ``reprojection_px``, ``views``) for the record.
    """

    shoulder_to_base: np.ndarray
    wrist_to_flange: np.ndarray
    residuals: dict[str, dict[str, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("shoulder_to_base", "wrist_to_flange"):
            _check_rigid(name, getattr(self, name))

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"version": FORMAT_VERSION,
                "shoulder_to_base": np.asarray(self.shoulder_to_base).tolist(),
                "wrist_to_flange": np.asarray(self.wrist_to_flange).tolist(),
                "residuals": self.residuals}

    def save(self, path: str | Path) -> Path:
        """Write the JSON file; returns its path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        """Read a file written by :meth:`save`.

        Raises:
            InvalidConfigError: if it is missing, of another version or not rigid transforms.
        """
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise InvalidConfigError(f"cannot read calibration {path}: {error}; run "
                                     "`agentic-env calibrate` to make one") from None
        if data.get("version") != FORMAT_VERSION:
            raise InvalidConfigError(f"calibration {path} has version {data.get('version')}; "
                                     f"this package reads version {FORMAT_VERSION}")
        return cls(np.array(data["shoulder_to_base"]), np.array(data["wrist_to_flange"]),
                   data.get("residuals", {}))

    def with_camera(self, camera: str, transform: np.ndarray,
                    residuals: dict[str, float]) -> Calibration:
        """A copy with ``camera``'s (``shoulder`` or ``wrist``) transform replaced."""
        if camera not in ("shoulder", "wrist"):
            raise InvalidConfigError(f"camera {camera!r}; valid: shoulder, wrist")
        shoulder = transform if camera == "shoulder" else self.shoulder_to_base
        wrist = transform if camera == "wrist" else self.wrist_to_flange
        return Calibration(shoulder, wrist, {**self.residuals, camera: residuals})


def _check_rigid(name: str, matrix: np.ndarray) -> None:
    matrix = np.asarray(matrix, dtype=float)
    rotation = matrix[:3, :3] if matrix.shape == (4, 4) else None
    if (rotation is None or not np.allclose(matrix[3], (0, 0, 0, 1))
            or not np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-5)
            or np.linalg.det(rotation) < 0):
        raise InvalidConfigError(f"calibration {name} must be a 4x4 rigid transform; got "
                                 f"{np.round(matrix, 4).tolist()}")


class FlangeKinematics:
    """Tool flange pose (4x4, base frame) from joint angles, on the arm's kinematic model."""

    def __init__(self, kinematics: ArmKinematics) -> None:
        self._model = kinematics.model
        self._data = mujoco.MjData(self._model)
        self._site = self._model.site(FLANGE_SITE).id

    def pose(self, q: np.ndarray) -> np.ndarray:
        """Flange pose for joints ``q`` (6,) rad."""
        self._data.qpos[:] = q
        mujoco.mj_kinematics(self._model, self._data)
        pose = np.eye(4)
        pose[:3, :3] = self._data.site_xmat[self._site].reshape(3, 3)
        pose[:3, 3] = self._data.site_xpos[self._site]
        return pose
