"""The ``agentic-env bench*`` commands, one module per benchmark: argument parsing and
printing only; the measurements are :mod:`agentic_env.bench`'s.

The benchmarks that run episodes record each into a results database (``--db``, default
``runs/<command>.db``; :mod:`agentic_env.bench.store`): :func:`add_db_argument` adds the
option and :func:`print_report_command` ends their output with the command that reports it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentic_env.bench.store import report_command


def add_db_argument(parser: argparse.ArgumentParser, name: str) -> None:
    """Add ``--db PATH`` (default ``runs/<name>.db``): the results database the command
    records every episode it runs in."""
    default = Path("runs") / f"{name}.db"
    parser.add_argument("--db", type=Path, default=default,
                        help=f"results database every episode run is recorded in (default "
                             f"{default}; an episode run again replaces its stored run); "
                             "'agentic-env report DB' shows them")


def print_report_command(db: Path) -> None:
    """The last line of a benchmark's output: where its episodes are and how to see them."""
    print(f"\nepisodes recorded in {db}; report: {report_command(db)}")
