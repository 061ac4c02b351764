"""An episode function that returns at once (the sweep runner's signature and result type):
the harness's own cost, with no simulation, for the tests that run a sweep to measure it."""

from __future__ import annotations

import pathlib
from collections.abc import Callable

from agentic_env.harness.episode import EpisodeResult, EpisodeSpec

#: The ``module:function`` a sweep file names it by (``tests/`` is on the import path).
INSTANT_EPISODE = "support.instant_episode:instant_episode"


def instant_episode(spec: EpisodeSpec, *, trace_root: pathlib.Path | None = None,
                    on_event: Callable[[str], None] | None = None) -> EpisodeResult:
    """A successful episode of ``spec``, 0.01 s of (claimed) wall time, no trace."""
    return EpisodeResult(spec=spec, success=True, progress=1.0, score=1.0, actions=1,
                         wall_s=0.01)
