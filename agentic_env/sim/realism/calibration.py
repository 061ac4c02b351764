"""Hand-eye calibration error of the realistic world: the truth/belief split of the cameras.

The world renders from the true camera poses; agents get the calibration as a real session
would solve it. The error of a solved calibration is measured by running the project's own
ChArUco hand-eye calibration in simulation (``agentic-env bench-calibration``,
:mod:`agentic_env.bench.handeye`); its distribution (written to the file ``--out`` names) is
copied into ``world.toml``'s ``[calibration]`` in a reviewed change, and
:func:`draw_extrinsic_error` draws one error per camera from it.

Error convention (the same for measuring and drawing). Each camera's calibrated transform
lives in a *parent* frame: the wrist camera's in the tool flange frame (camera -> flange,
eye-in-hand), the shoulder camera's in the robot base frame (camera -> base, eye-to-hand).
An error is a (4, 4) matrix ``E`` holding

* ``E[:3, :3] = dR``: the rotation taking the true camera orientation to the solved one,
  about the camera's optical centre, axes of the parent frame (``R_solved = dR @ R_true``);
* ``E[:3, 3] = dt``: the solved minus the true camera position, parent frame, metres.

So ``solved = [[dR @ R_true, t_true + dt], [0, 0, 0, 1]]`` (:func:`apply_extrinsic_error`);
``E`` is a rigid transform but is applied about the camera centre, not by a plain product.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.rotations import exp_rotation, log_rotation
from agentic_env.sim.realism import section

#: Calibrated cameras and the frame their calibration lives in.
PARENT_FRAME = {"wrist": "flange", "shoulder": "base"}


def calibration_params() -> dict[str, Any]:
    """The ``calibration`` table of ``world.toml``: the measured distribution, measured by
    ``agentic-env bench-calibration --out FILE`` and copied in."""
    return section("calibration")


def _check_camera(camera: str) -> None:
    if camera not in PARENT_FRAME:
        raise InvalidConfigError(f"camera {camera!r}; valid: {', '.join(PARENT_FRAME)}")


def extrinsic_error(true_in_parent: np.ndarray, solved_in_parent: np.ndarray) -> np.ndarray:
    """The error ``E`` (4, 4) of a solved camera pose against the truth, both (4, 4) camera
    -> parent frame (see the module's convention)."""
    error = np.eye(4)
    error[:3, :3] = solved_in_parent[:3, :3] @ true_in_parent[:3, :3].T
    error[:3, 3] = solved_in_parent[:3, 3] - true_in_parent[:3, 3]
    return error


def apply_extrinsic_error(true_in_parent: np.ndarray, error: np.ndarray) -> np.ndarray:
    """The camera pose (4, 4, camera -> parent) a calibration with ``error`` believes."""
    believed = np.eye(4)
    believed[:3, :3] = error[:3, :3] @ true_in_parent[:3, :3]
    believed[:3, 3] = true_in_parent[:3, 3] + error[:3, 3]
    return believed


def error_components(error: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Translation (3,) mm and rotation vector (3,) deg of an error, parent-frame axes."""
    return error[:3, 3] * 1e3, np.degrees(log_rotation(error[:3, :3]))


def draw_extrinsic_error(camera: str, rng: np.random.Generator) -> np.ndarray:
    """One calibration error ``E`` (4, 4) of ``camera`` (``wrist`` or ``shoulder``).

    Translation (mm) and rotation vector (deg), per parent-frame axis, are independent
    Gaussians with the measured session-to-session bias (mean) and standard deviation.
    Deterministic for a given generator state; draws six normals from ``rng``.

    Raises:
        InvalidConfigError: for an unknown camera.
    """
    _check_camera(camera)
    table = calibration_params()[camera]
    translation_mm = rng.normal(table["translation_bias_mm"], table["translation_std_mm"])
    rotation_deg = rng.normal(table["rotation_bias_deg"], table["rotation_std_deg"])
    error = np.eye(4)
    error[:3, :3] = exp_rotation(np.radians(rotation_deg))
    error[:3, 3] = translation_mm * 1e-3
    return error


def believed_extrinsics(true_extrinsics_cam_to_base: np.ndarray, error: np.ndarray,
                        camera: str, flange_to_base: np.ndarray | None = None) -> np.ndarray:
    """The extrinsics (4, 4, camera -> base) an agent gets from a calibration with ``error``.

    * ``shoulder``: the error is in camera -> base: ``apply_extrinsic_error(true, error)``.
    * ``wrist``: the error is in camera -> flange, solved once and carried by the arm:
      ``flange_to_base @ apply_extrinsic_error(inv(flange_to_base) @ true, error)``, with
      ``flange_to_base`` (4, 4) the flange pose of the same observation (from the joints).

    Raises:
        InvalidConfigError: for an unknown camera, or ``wrist`` without ``flange_to_base``.
    """
    _check_camera(camera)
    if camera == "shoulder":
        return apply_extrinsic_error(true_extrinsics_cam_to_base, error)
    if flange_to_base is None:
        raise InvalidConfigError("the wrist camera's believed extrinsics need flange_to_base")
    camera_to_flange = np.linalg.inv(flange_to_base) @ true_extrinsics_cam_to_base
    return flange_to_base @ apply_extrinsic_error(camera_to_flange, error)
