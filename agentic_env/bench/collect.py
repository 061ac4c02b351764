"""Demonstration-collection benchmark (``agentic-env bench-collect``).

:func:`run_benchmark` collects scripted-expert episodes into a fresh dataset and measures
frames recorded per second of wall time (rendering both cameras every control period,
encoding, writing), the same per worker, and the dataset size per episode split into videos
and Parquet.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from agentic_env.datasets.collect import CollectConfig, collect

#: Bytes per MB.
_MB = 1024.0 * 1024.0


def _size_mb(folder: Path, pattern: str) -> float:
    return sum(p.stat().st_size for p in folder.glob(pattern) if p.is_file()) / _MB


def run_benchmark(config: CollectConfig, episodes: int, workers: int,
                  out: Path | None = None) -> dict[str, Any]:
    """Collect into ``out`` (a temporary folder when ``None``) and measure."""
    with tempfile.TemporaryDirectory(prefix="bench-collect-") as scratch:
        root = out or Path(scratch) / "dataset"
        start = time.perf_counter()
        summary = collect(root, config, episodes, workers, progress=False)
        wall = time.perf_counter() - start
        kept = max(summary["episodes_in_dataset"], 1)
        videos, data = _size_mb(root, "videos/**/*.mp4"), _size_mb(root, "data/**/*.parquet")
        frames = summary["frames_in_dataset"]
        return {
            "task": config.task, "setting": config.setting,
            "resolution": f"{config.width}x{config.height}", "depth": config.depth,
            "codec": config.codec, "crf": config.crf, "workers": workers,
            "episodes": summary["episodes_in_dataset"],
            "attempts": summary["episodes_attempted"], "frames": frames,
            "frames_per_episode": frames / kept, "wall_s": wall,
            "frames_per_s": frames / wall, "frames_per_s_per_worker": frames / wall / workers,
            "mb_per_episode": (videos + data) / kept, "video_mb_per_episode": videos / kept,
            "parquet_mb_per_episode": data / kept,
            "kb_per_frame": (videos + data) * 1024.0 / max(frames, 1),
        }
