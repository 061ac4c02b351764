"""Hand-eye calibration error of the realistic world: the project's ChArUco calibration run in
simulation recovers the true camera poses; errors drawn from the measured distribution are
deterministic and spread as measured; a known error moves projected points as geometry says."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cv2")

from agentic_env.bench.handeye import HandEyeRig, HandEyeSimConfig  # noqa: E402
from agentic_env.contract.workcell import SceneConfig  # noqa: E402
from agentic_env.errors import InvalidConfigError  # noqa: E402
from agentic_env.geometry.camera import (  # noqa: E402
    MUJOCO_TO_OPENCV,
    project_points,
    realsense_d405,
)
from agentic_env.geometry.rotations import axis_rotation, exp_rotation  # noqa: E402
from agentic_env.sim.realism.calibration import (  # noqa: E402
    apply_extrinsic_error,
    believed_extrinsics,
    calibration_params,
    draw_extrinsic_error,
    error_components,
    extrinsic_error,
)
from agentic_env.sim.scene import look_at_xyaxes  # noqa: E402


def within_truth(error: np.ndarray, millimetres: float, degrees: float) -> bool:
    translation, rotation = error_components(error)
    return bool(np.linalg.norm(translation) < millimetres
                and np.linalg.norm(rotation) < degrees)


def test_a_small_wrist_session_solves_near_the_truth() -> None:
    config = HandEyeSimConfig(views=5, wrist_camera=realsense_d405(424, 240))
    result = HandEyeRig("wrist", config).session(np.random.default_rng(7))
    # five views at half resolution: looser than a full session's 3 mm (tested below)
    assert within_truth(result.error, 5.0, 1.0)
    assert result.residuals["views"] == 5
    assert result.residuals["reprojection_px"] < 1.0


@pytest.mark.parametrize("camera", ["wrist", "shoulder"])
def test_a_realistic_session_solves_within_millimetres(camera: str) -> None:
    rig = HandEyeRig(camera)
    result = rig.session(np.random.default_rng(11))
    assert within_truth(result.error, 3.0, 1.0)
    assert result.residuals["views"] == 12


def test_errors_compose_about_the_camera_centre() -> None:
    truth = np.eye(4)
    truth[:3, :3] = exp_rotation(np.array([0.3, -1.2, 2.0]))
    truth[:3, 3] = [0.4, -0.5, 0.6]
    error = np.eye(4)
    error[:3, :3] = exp_rotation(np.radians([0.2, -0.1, 0.3]))
    error[:3, 3] = [0.002, -0.001, 0.003]
    believed = apply_extrinsic_error(truth, error)
    np.testing.assert_allclose(believed[:3, 3] - truth[:3, 3], error[:3, 3])
    np.testing.assert_allclose(extrinsic_error(truth, believed), error, atol=1e-12)
    translation, rotation = error_components(error)
    np.testing.assert_allclose(translation, [2.0, -1.0, 3.0])
    np.testing.assert_allclose(rotation, [0.2, -0.1, 0.3], atol=1e-9)


def test_draws_are_deterministic_per_seed_and_spread_as_measured() -> None:
    first = draw_extrinsic_error("shoulder", np.random.default_rng(3))
    np.testing.assert_array_equal(first, draw_extrinsic_error("shoulder",
                                                              np.random.default_rng(3)))
    assert not np.allclose(first, draw_extrinsic_error("shoulder", np.random.default_rng(4)))
    np.testing.assert_allclose(first[:3, :3] @ first[:3, :3].T, np.eye(3), atol=1e-12)
    rng = np.random.default_rng(0)
    for camera in ("wrist", "shoulder"):
        table = calibration_params()[camera]
        draws = [error_components(draw_extrinsic_error(camera, rng)) for _ in range(4000)]
        translation = np.array([t for t, _ in draws])
        rotation = np.array([r for _, r in draws])
        for values, bias, std in ((translation, "translation_bias_mm", "translation_std_mm"),
                                  (rotation, "rotation_bias_deg", "rotation_std_deg")):
            spread = np.asarray(table[std])
            np.testing.assert_allclose(values.mean(0), table[bias], atol=0.1 * spread.max())
            np.testing.assert_allclose(values.std(0), spread, rtol=0.1, atol=1e-4)
    with pytest.raises(InvalidConfigError, match="wrist, shoulder"):
        draw_extrinsic_error("overview", rng)


def shoulder_truth() -> np.ndarray:
    config = SceneConfig()
    eye, target = np.array(config.shoulder_camera_pos), np.array(config.shoulder_camera_target)
    xyaxes = look_at_xyaxes(eye, target)
    pose = np.eye(4)
    mujoco_axes = np.column_stack([xyaxes[:3], xyaxes[3:], np.cross(xyaxes[:3], xyaxes[3:])])
    pose[:3, :3] = mujoco_axes @ MUJOCO_TO_OPENCV
    pose[:3, 3] = eye
    return pose


def pixel_of(point_base: np.ndarray, extrinsics: np.ndarray, intrinsics: np.ndarray
             ) -> np.ndarray:
    camera = np.linalg.inv(extrinsics) @ np.append(point_base, 1.0)
    return project_points(camera[None, :3], intrinsics)[0]


def test_a_known_error_moves_a_projected_point_by_the_expected_pixels() -> None:
    truth = shoulder_truth()
    intrinsics = SceneConfig().shoulder_camera.intrinsics
    focal, distance = intrinsics[0, 0], 0.8
    point = truth[:3, 3] + distance * truth[:3, 2]  # on the optical axis
    np.testing.assert_allclose(pixel_of(point, truth, intrinsics), intrinsics[:2, 2])
    shift = np.eye(4)
    shift[:3, 3] = 0.006 * truth[:3, 0]  # the camera believed 6 mm to its right
    moved = pixel_of(point, believed_extrinsics(truth, shift, "shoulder", None), intrinsics)
    np.testing.assert_allclose(moved - intrinsics[:2, 2], [-focal * 0.006 / distance, 0.0],
                               atol=1e-9)
    angle = np.radians(0.5)
    turn = np.eye(4)
    turn[:3, :3] = axis_rotation(truth[:3, 1], angle)  # believed turned about its own y axis
    moved = pixel_of(point, believed_extrinsics(truth, turn, "shoulder", None), intrinsics)
    np.testing.assert_allclose(moved - intrinsics[:2, 2], [-focal * np.tan(angle), 0.0],
                               atol=1e-9)


def test_the_wrist_error_lives_in_the_flange_frame() -> None:
    flange = np.eye(4)
    flange[:3, :3] = exp_rotation(np.array([np.pi, 0.0, 0.4]))
    flange[:3, 3] = [0.45, 0.05, 0.3]
    camera_in_flange = np.eye(4)
    camera_in_flange[:3, 3] = [0.05, 0.0, 0.06]
    truth = flange @ camera_in_flange
    error = np.eye(4)
    error[:3, :3] = exp_rotation(np.radians([0.0, 0.0, 1.0]))
    error[:3, 3] = [0.0, 0.0, 0.002]
    believed = believed_extrinsics(truth, error, "wrist", flange)
    np.testing.assert_allclose(believed[:3, 3] - truth[:3, 3], flange[:3, :3] @ error[:3, 3],
                               atol=1e-12)
    np.testing.assert_allclose(np.linalg.inv(flange) @ believed,
                               apply_extrinsic_error(camera_in_flange, error), atol=1e-12)
    with pytest.raises(InvalidConfigError, match="flange_to_base"):
        believed_extrinsics(truth, error, "wrist", None)
