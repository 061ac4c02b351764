"""Hand-eye calibration error measured in simulation (``agentic-env bench-calibration``).

Runs ``--sessions`` simulated ChArUco calibration sessions of ``--views`` views for each camera
(:mod:`agentic_env.bench.calibration`, on :mod:`agentic_env.bench.handeye`: the ``calibrate``
command's board, detection and solvers on realistic renders), prints each session's error
against the true camera pose and the solver's residuals, then the bias (mean) and spread
(standard deviation) per axis, and writes that distribution to ``--out`` (default
``runs/bench_calibration.toml``, under the current directory) as the ``[calibration]`` tables
of ``agentic_env/sim/realism/world.toml``, which
:func:`agentic_env.sim.realism.calibration.draw_extrinsic_error` draws from. It never writes
package data: the realistic world reads the packaged ``world.toml`` only, and adopting a
measurement means copying its tables there (between the ``begin: calibration`` and ``end:
calibration`` lines) in a reviewed change. Each camera's figures (and whether the images
were the realistic sensor models) are also recorded into the results database ``--db``
(default ``runs/bench_calibration.db``) as one measurement keyed by camera, sessions, views
and seed; ``agentic-env report DB`` shows them.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from agentic_env.bench.calibration import (
    CAMERAS,
    command_line,
    fragment,
    measure,
)
from agentic_env.bench.handeye import JOINT_NOISE_STD, HandEyeSimConfig, SessionResult
from agentic_env.bench.store import measurement, record_measurements
from agentic_env.cli.bench import add_db_argument, print_report_command
from agentic_env.sim.realism.calibration import PARENT_FRAME, error_components


def _row(index: int, result: SessionResult) -> str:
    translation, rotation = error_components(result.error)
    residuals = result.residuals
    return (f"{result.camera:<9}{index:>4}  "
            + " ".join(f"{v:+6.2f}" for v in translation)
            + "  " + " ".join(f"{v:+6.3f}" for v in rotation)
            + f"  {np.linalg.norm(translation):5.2f} {np.linalg.norm(rotation):5.3f}"
            + f"  {residuals['translation_mm']:5.2f} {residuals['rotation_deg']:5.3f} "
            f"{residuals['reprojection_px']:5.3f} {result.poses_shown:>3}")


def main(argv: list[str] | None = None) -> int:
    """Run the sessions, print the table and summary, write the measurement to ``--out``."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-calibration",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10, help="sessions per camera")
    parser.add_argument("--views", type=int, default=12, help="views with the board per session")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first session")
    parser.add_argument("--out", type=Path, default=Path("runs/bench_calibration.toml"),
                        help="file the measurement is written to, as the [calibration] tables "
                        "of world.toml (parent folders are created; default: %(default)s); "
                        "the packaged world.toml is never written")
    add_db_argument(parser, "bench_calibration", "measurement")
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.views < 3:
        parser.error("need --sessions >= 1 and --views >= 3")
    start = time.perf_counter()
    config = HandEyeSimConfig(views=args.views)
    print(f"{command_line(args.sessions, args.views, args.seed)}: board "
          f"{config.board.squares_x}x{config.board.squares_y} x "
          f"{config.board.square_length * 1e3:g}"
          f" mm; wrist {config.wrist_camera.width}x{config.wrist_camera.height}, shoulder "
          f"{config.shoulder_camera.width}x{config.shoulder_camera.height}; joint noise "
          f"{JOINT_NOISE_STD:.2e} rad")
    print("error = solved - true (wrist in the flange frame, shoulder in the base frame); "
          "residuals = the solver's own")
    print(f"{'camera':<9}{'run':>4}  {'dx mm':>6} {'dy mm':>6} {'dz mm':>6}  {'rx deg':>6} "
          f"{'ry deg':>6} {'rz deg':>6}  {'|t|':>5} {'angle':>5}  {'r_mm':>5} {'r_deg':>5} "
          f"{'r_px':>5} {'shown':>3}")
    measured = measure(config, args.sessions, args.seed,
                       lambda index, result: print(_row(index, result)))
    summaries, sensors = measured.summaries, measured.sensors
    print(f"images: {'realistic sensor models' if sensors else 'exact renders'}")
    for camera in CAMERAS:
        s = summaries[camera]
        print(f"{camera} (camera -> {PARENT_FRAME[camera]}): translation bias "
              f"{s['translation_bias_mm']} mm, std {s['translation_std_mm']} mm; rotation bias "
              f"{s['rotation_bias_deg']} deg, std {s['rotation_std_deg']} deg; mean residuals "
              f"{s['mean_residual_translation_mm']} mm, {s['mean_residual_rotation_deg']} deg, "
              f"{s['mean_residual_reprojection_px']} px")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(fragment(summaries, config, args.sessions, args.seed, sensors))
    print(f"wrote the measurement to {args.out} (the [calibration] tables of world.toml)")
    wall = time.perf_counter() - start
    record_measurements(args.db, [
        measurement("bench-calibration", {"camera": camera, "sessions": args.sessions,
                                          "views": args.views, "seed": args.seed},
                    {**summaries[camera], "frame": PARENT_FRAME[camera], "sensors": sensors},
                    wall)
        for camera in CAMERAS])
    print(f"wall time {wall:.0f} s")
    print_report_command(args.db, "measurements")
    return 0
