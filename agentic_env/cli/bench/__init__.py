"""The ``agentic-env bench*`` commands, one module per benchmark: argument parsing and
printing only; the measurements are :mod:`agentic_env.bench`'s.

The benchmarks that run episodes record each into a results database (``--db``, default
``runs/<command>.db``; :mod:`agentic_env.bench.store`): :func:`add_db_argument` adds the
option and :func:`print_report_command` ends their output with the command that reports it.
The measurement benchmarks (``bench``, ``bench-grasp``, ``bench-calibration``,
``bench-collect``, ``bench-robosuite``, ``bench-sweep``, ``bench-real``, ``soak``) record their
figures into one the same way, as measurements (``what="measurement"``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentic_env.bench.store import report_command


def add_db_argument(parser: argparse.ArgumentParser, name: str,
                    what: str = "episode") -> None:
    """Add ``--db PATH`` (default ``runs/<name>.db``): the results database the command
    records every ``what`` (``episode`` or ``measurement``) it makes in."""
    default = Path("runs") / f"{name}.db"
    again = ("an episode run again replaces its stored run" if what == "episode" else
             f"a {what} made again, with the same parameters, replaces the stored one")
    parser.add_argument("--db", type=Path, default=default,
                        help=f"results database every {what} is recorded in (default "
                             f"{default}; {again}); 'agentic-env report DB' shows them")


def print_report_command(db: Path, what: str = "episodes") -> None:
    """The last line of a benchmark's output: where its ``what`` (``episodes`` or
    ``measurements``) are and how to see them."""
    print(f"\n{what} recorded in {db}; report: {report_command(db)}")
