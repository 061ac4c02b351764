"""Real-robot tools: ``agentic-env calibrate`` and ``agentic-env trial-report``.

The command lines of :mod:`agentic_env.real.calibrate` and :mod:`agentic_env.reports.trial_report`;
each imports its library module when it runs (calibration needs OpenCV, the ``real`` extra).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentic_env.errors import AgenticEnvError


def calibrate_main(argv: list[str] | None = None) -> int:
    """``agentic-env calibrate``: collect (or replay) views, solve, write the calibration."""
    from agentic_env.real import calibrate
    from agentic_env.real.handeye import CharucoBoardSpec

    parser = argparse.ArgumentParser(prog="agentic-env calibrate", description=calibrate.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--camera", choices=("shoulder", "wrist"), required=True)
    parser.add_argument("--out", type=Path, default=Path("calibration.json"),
                        help="calibration file to write or update (default calibration.json)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--robot-host", help="UR controller address: collect new views")
    source.add_argument("--replay", type=Path, help="solve again from a saved session folder")
    parser.add_argument("--session", type=Path, default=Path("runs/calibration_session"),
                        help="where collected views are saved")
    parser.add_argument("--views", type=int, default=15, help="views to collect (default 15)")
    parser.add_argument("--squares", type=int, nargs=2, default=(7, 5), metavar=("X", "Y"))
    parser.add_argument("--square-length", type=float, default=0.04, help="metres")
    parser.add_argument("--marker-length", type=float, default=0.03, help="metres")
    parser.add_argument("--dictionary", default="DICT_5X5_100")
    args = parser.parse_args(argv)
    spec = CharucoBoardSpec(args.squares[0], args.squares[1], args.square_length,
                            args.marker_length, args.dictionary)
    try:
        if args.replay is not None:
            session = args.replay
        else:
            session = args.session
            calibrate.collect(args.camera, args.robot_host, spec, session, args.views)
        transform, residuals = calibrate.solve_session(session, spec)
        path = calibrate.write_calibration(args.out, args.camera, transform, residuals)
    except (AgenticEnvError, OSError) as error:
        print(f"calibration failed: {error}")
        return 1
    print(f"{args.camera}: {int(residuals['views'])} views, board pose spread "
          f"{residuals['translation_mm']:.2f} mm / {residuals['rotation_deg']:.3f} deg, "
          f"reprojection {residuals['reprojection_px']:.2f} px")
    print(f"wrote {path}")
    return 0


def trial_report_main(argv: list[str] | None = None) -> int:
    """``agentic-env trial-report``: print (and with ``--out`` write) the paired-trial report."""
    from agentic_env.harness.db import ResultStore
    from agentic_env.reports import trial_report

    parser = argparse.ArgumentParser(prog="agentic-env trial-report",
                                     description=trial_report.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", type=Path, nargs="?", default=Path("runs/trials.sqlite"),
                        help="results database (default runs/trials.sqlite)")
    parser.add_argument("--out", type=Path, help="also write the Markdown here")
    args = parser.parse_args(argv)
    if not args.db.exists():
        print(f"no results database at {args.db}; run `agentic-env trial` first")
        return 1
    with ResultStore(args.db) as store:
        text = trial_report.render_report(trial_report.pair_episodes(store.episodes()))
    print(text, end="")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


def add_real_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """The real-robot options shared by ``agentic-env trial`` and ``agentic-env serve``:
    ``--twin``, ``--robot-host``, ``--gripper-port``, ``--calibration``,
    ``--confirm-each-step``."""
    real = parser.add_argument_group("real backend")
    real.add_argument("--twin", action="store_true", help="MuJoCo twin drivers, no hardware")
    real.add_argument("--robot-host", help="UR controller address")
    real.add_argument("--gripper-port", default="/dev/ttyACM0")
    real.add_argument("--calibration", type=Path, default=Path("calibration.json"))
    real.add_argument("--confirm-each-step", action="store_true",
                      help="ask the operator (on the terminal) before every primitive")
