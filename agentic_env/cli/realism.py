"""The ``--realism`` option every command that builds a simulated world shares."""

from __future__ import annotations

import argparse

from agentic_env.sim.realism import BENCHMARK_REALISM, REALISM_LEVELS


def add_realism_argument(parser: argparse.ArgumentParser, default: str | None = BENCHMARK_REALISM
                         ) -> None:
    """Add ``--realism {ideal,realistic}`` to ``parser`` (``default=None``: the command's
    inputs decide, e.g. a sweep file's ``realism`` axis)."""
    shown = default or "as the inputs say"
    parser.add_argument(
        "--realism", default=default, choices=REALISM_LEVELS,
        help="the simulated world: 'realistic' (camera device models, measured hand-eye "
             "calibration error, contact drawn per object) or 'ideal' (exact sensors and "
             f"calibration, nominal contact; for debugging) (default: {shown})")
