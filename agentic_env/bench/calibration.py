"""Hand-eye calibration error measured in simulation (``agentic-env bench-calibration``).

:func:`measure` runs simulated ChArUco calibration sessions for each camera
(:mod:`agentic_env.bench.handeye`: the ``calibrate`` command's board, detection and solvers
on realistic renders) and summarises each camera's error against the true camera pose and
the solver's residuals as a bias (mean) and spread (standard deviation) per axis
(:func:`summarize`). :func:`fragment` states the distribution as TOML, in the shape of the
``[calibration]`` tables of the packaged ``agentic_env/sim/realism/world.toml``, which
:func:`agentic_env.sim.realism.calibration.draw_extrinsic_error` draws from. A measurement
goes to a file its user names; the world reads the packaged file only, so adopting a
measurement is an edit of that file (its tables between the ``begin: calibration`` and
``end: calibration`` lines), reviewed like any other.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from agentic_env.bench.handeye import NOT_MODELLED, HandEyeRig, HandEyeSimConfig, SessionResult
from agentic_env.sim.realism.calibration import PARENT_FRAME, error_components

#: The calibrated cameras, in the order they are measured.
CAMERAS = ("wrist", "shoulder")
#: The solver's residuals each session reports.
RESIDUALS = ("translation_mm", "rotation_deg", "reprojection_px")


def command_line(sessions: int, views: int, seed: int) -> str:
    """The ``agentic-env bench-calibration`` command that measures this run."""
    return f"agentic-env bench-calibration --sessions {sessions} --views {views} --seed {seed}"


@dataclass(frozen=True)
class Calibration:
    """One run's measurement.

    Attributes:
        summaries: camera -> its :func:`summarize` figures.
        sensors: whether every session rendered with the realistic sensor models.
    """

    summaries: dict[str, dict[str, float | list[float]]]
    sensors: bool


def measure(config: HandEyeSimConfig, sessions: int, seed: int,
            on_session: Callable[[int, SessionResult], None] | None = None) -> Calibration:
    """``sessions`` sessions per camera of :data:`CAMERAS` (session ``i`` of camera ``c``
    seeded ``[seed + i, c]``), each passed to ``on_session(i, result)`` as it finishes."""
    summaries, sensors = {}, True
    for camera in CAMERAS:
        rig = HandEyeRig(camera, config)
        sensors = sensors and rig.uses_sensor_model
        results = []
        for index in range(sessions):
            result = rig.session(np.random.default_rng([seed + index, CAMERAS.index(camera)]))
            results.append(result)
            if on_session is not None:
                on_session(index, result)
        summaries[camera] = summarize(results)
    return Calibration(summaries, sensors)


def summarize(results: list[SessionResult]) -> dict[str, float | list[float]]:
    """Bias and standard deviation per axis (translation mm, rotation deg) and the mean
    residuals of one camera's sessions."""
    components = [error_components(r.error) for r in results]
    translation = np.array([t for t, _ in components])
    rotation = np.array([r for _, r in components])
    ddof = 1 if len(results) > 1 else 0
    return {
        "translation_bias_mm": np.round(translation.mean(0), 3).tolist(),
        "translation_std_mm": np.round(translation.std(0, ddof=ddof), 3).tolist(),
        "rotation_bias_deg": np.round(rotation.mean(0), 4).tolist(),
        "rotation_std_deg": np.round(rotation.std(0, ddof=ddof), 4).tolist(),
        **{f"mean_residual_{name}": round(float(np.mean([r.residuals[name] for r in results])),
                                          4) for name in RESIDUALS},
    }


def fragment(summaries: dict[str, dict], config: HandEyeSimConfig, sessions: int, seed: int,
             sensors: bool) -> str:
    """A run's measurement, dated today: the ``[calibration]`` tables of ``world.toml``."""
    command = command_line(sessions, config.views, seed)
    images = ("realistic sensor models (agentic_env.sim.realism.sensors: noise, exposure, "
              "white balance, lens distortion undistorted)" if sensors else "exact renders")
    lines = [
        f"# Measured by `{command}`.",
        "# Hand-eye calibration error of the realistic world: the project's ChArUco calibration",
        "# (agentic_env.real.handeye, as `agentic-env calibrate` runs it) solved in simulation",
        "# against the model's true camera poses. Error convention and use:",
        "# agentic_env.sim.realism.calibration (translation: solved - true position; rotation:",
        "# rotation vector of R_solved @ R_true^T; axes of the parent frame: the tool flange for",
        "# the wrist camera, the robot base for the shoulder camera).",
        "[calibration]",
        f'source = "project measurement: {command}"',
        f"sessions = {sessions}",
        f"views = {config.views}",
        f'board = "ChArUco {config.board.squares_x}x{config.board.squares_y}, squares '
        f"{config.board.square_length * 1e3:g} mm, markers {config.board.marker_length * 1e3:g} "
        f'mm, {config.board.dictionary} (the calibrate command\'s default)"',
        f'images = "{images}; wrist {config.wrist_camera.width}x{config.wrist_camera.height} '
        f"(D405 colour stream of the real driver), shoulder {config.shoulder_camera.width}x"
        f'{config.shoulder_camera.height} (Azure Kinect 720p colour of the real driver)"',
        f"joint_noise_std_rad = {config.joint_noise_std:.3e}",
        'joint_noise_source = "UR5e technical specifications (Universal Robots): pose '
        "repeatability +-0.03 mm per ISO 9283, read as 3 standard deviations, over the 850 mm "
        'reach; added to every recorded joint angle"',
        f'measured = "{datetime.date.today().isoformat()}"',
        f'corners = "OpenCV {cv2.__version__} CharucoDetector, refined again by cornerSubPix '
        "(agentic_env.real.handeye: without the detector's +0.5 px shift, opencv issue "
        '#25539)"',
        f'not_modelled = "{NOT_MODELLED}"',
    ]
    for camera in CAMERAS:
        lines += ["", f"[calibration.{camera}]",
                  f'source = "project measurement: {command} ({camera}: camera -> '
                  f'{PARENT_FRAME[camera]})"',
                  f'frame = "{PARENT_FRAME[camera]}"']
        lines += [f"{key} = {value}" for key, value in summaries[camera].items()]
    return "\n".join(lines) + "\n"

