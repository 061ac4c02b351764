"""A small collected dataset shared by the dataset tests (collected once per process)."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any

from agentic_env.datasets.collect import CollectConfig, collect
from agentic_env.datasets.recording import RecordedEpisode

#: Two reorientation episodes (the shortest expert task) at 128 x 96 with depth.
CONFIG = CollectConfig(task="reorientation", setting="lab", width=128, height=96, depth=True)
EPISODES = 2


@functools.cache
def collected_dataset() -> tuple[Path, dict[int, RecordedEpisode], dict[str, Any]]:
    """(dataset folder, seed -> episode as recorded with raw frames, collection summary)."""
    scratch = Path(tempfile.mkdtemp(prefix="agentic-env-dataset-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    recordings: dict[int, RecordedEpisode] = {}
    summary = collect(scratch / "dataset", CONFIG, EPISODES, progress=False,
                      recordings=recordings)
    return scratch / "dataset", recordings, summary
