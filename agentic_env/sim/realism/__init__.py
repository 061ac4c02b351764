"""The world's realism: ``ideal`` or ``realistic``, behind one switch.

* ``ideal``: exact depth, perfect calibration, nominal contact; bit-identical run to run and
  to the simulator before the switch existed (for debugging).
* ``realistic``: device models of both cameras (depth error, holes, flying pixels, RGB noise,
  exposure, white balance, motion blur, lens distortion undistorted as the real env does),
  hand-eye calibration error measured by running the project's own ChArUco calibration in
  simulation, and contact drawn per object from its material class. The default world of
  benchmark sweeps, the paper suite and data collection.

Every parameter lives in ``world.toml`` beside this module, each table with a ``source``
naming where its numbers come from (datasheet, vendor documentation, peer-reviewed
measurement, or the project's own measurement). Nothing in it is fitted to an end-to-end
result of a paper.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any, Literal

from agentic_env.errors import InvalidConfigError

Realism = Literal["ideal", "realistic"]
#: The worlds, in order of realism.
REALISM_LEVELS: tuple[str, ...] = ("ideal", "realistic")
#: The world of benchmark sweeps, the paper suite and data collection.
BENCHMARK_REALISM: Realism = "realistic"
#: The data file of every realistic-world parameter.
WORLD_FILE = Path(__file__).with_name("world.toml")


def check_realism(name: str) -> Realism:
    """``name`` if it is a world (``ideal`` or ``realistic``).

    Raises:
        InvalidConfigError: naming the valid worlds otherwise.
    """
    if name not in REALISM_LEVELS:
        raise InvalidConfigError(
            f"unknown realism {name!r}; valid: {', '.join(REALISM_LEVELS)}")
    return name  # type: ignore[return-value]


@cache
def world_params() -> dict[str, Any]:
    """Every realistic-world parameter (``world.toml``), by section; read once per process.

    Do not mutate the returned mapping.
    """
    with WORLD_FILE.open("rb") as stream:
        return tomllib.load(stream)


def section(name: str) -> dict[str, Any]:
    """The table ``name`` of ``world.toml`` (dotted for nested tables, e.g. ``"kinect.depth"``).

    Raises:
        InvalidConfigError: naming the file's top-level sections when there is no such table.
    """
    table: Any = world_params()
    for part in name.split("."):
        if not isinstance(table, dict) or part not in table:
            raise InvalidConfigError(
                f"no table {name!r} in {WORLD_FILE.name}; top-level sections: "
                f"{', '.join(sorted(world_params()))}")
        table = table[part]
    return table
