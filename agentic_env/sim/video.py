"""MP4 streams of rendered RGB frames, encoded by the ffmpeg binary of ``imageio-ffmpeg``.

Frames are piped to ffmpeg as they are rendered (a full pipe blocks the caller), so a video
never sits in memory, however long the episode: what the dataset exporter
(:mod:`agentic_env.datasets.video` re-exports these), and the LeRobot env plugin's eval
videos write with. Two codecs are offered:

* ``h264`` (``libx264``, default): fast to encode on a CPU and decoded by every LeRobot video
  backend (torchcodec, PyAV);
* ``av1`` (``libsvtav1``): LeRobot's own default codec, smaller files, slower to encode.

Both use a short keyframe interval (``gop`` frames, default 2, LeRobot's setting) so that a
data loader can seek to any frame cheaply. Encoding is lossy: decoded frames differ from the
rendered ones by a few grey levels.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import imageio_ffmpeg
import numpy as np

from agentic_env.errors import InvalidConfigError

#: Codec name -> ffmpeg encoder.
CODECS: dict[str, str] = {"h264": "libx264", "av1": "libsvtav1"}


@dataclass(frozen=True)
class VideoConfig:
    """Encoder settings.

    Attributes:
        codec: ``h264`` or ``av1`` (see :data:`CODECS`).
        crf: constant rate factor; lower is better quality and larger files (h264: 0-51,
            av1: 0-63).
        gop: keyframe interval, frames (>= 1).
        preset: encoder speed preset (``libx264``: ultrafast..veryslow; ``libsvtav1``: 0-13).
    """

    codec: str = "h264"
    crf: int = 18
    gop: int = 2
    preset: str = "veryfast"

    def __post_init__(self) -> None:
        if self.codec not in CODECS:
            raise InvalidConfigError(
                f"unknown video codec {self.codec!r}; valid: {', '.join(CODECS)}"
            )
        if self.gop < 1:
            raise InvalidConfigError(f"video gop must be >= 1 frame, got {self.gop}")

    @property
    def encoder(self) -> str:
        """The ffmpeg encoder name."""
        return CODECS[self.codec]

    def output_params(self) -> list[str]:
        """ffmpeg output options (rate control, keyframes, preset)."""
        preset = self.preset
        if self.codec == "av1" and not preset.isdigit():
            preset = "8"
        return ["-crf", str(self.crf), "-g", str(self.gop), "-preset", preset]


class VideoWriter:
    """Streams RGB frames (H, W, 3 uint8) into one MP4 file.

    Use as a context manager; frames are piped to ffmpeg as they come, so an episode never
    sits in memory. Width and height must be even (``yuv420p``).
    """

    def __init__(self, path: Path, width: int, height: int, fps: float,
                 config: VideoConfig | None = None) -> None:
        if width % 2 or height % 2:
            raise InvalidConfigError(
                f"video frames must have even width and height for yuv420p; got {width}x{height}"
            )
        self.path = Path(path)
        self.config = config or VideoConfig()
        self._size = (width, height)
        self.frames = 0
        self._gen: Generator[Any, Any, None] = imageio_ffmpeg.write_frames(
            str(self.path), self._size, fps=fps, codec=self.config.encoder,
            pix_fmt_in="rgb24", pix_fmt_out="yuv420p", macro_block_size=1,
            output_params=self.config.output_params(), ffmpeg_log_level="error",
        )
        self._gen.send(None)

    def append(self, frame: np.ndarray) -> None:
        """Encode one frame (H, W, 3) uint8 with the writer's size."""
        width, height = self._size
        if frame.shape != (height, width, 3) or frame.dtype != np.uint8:
            raise InvalidConfigError(
                f"frame has shape {frame.shape} {frame.dtype}; expected ({height}, {width}, 3) "
                "uint8"
            )
        self._gen.send(np.ascontiguousarray(frame))
        self.frames += 1

    def close(self) -> None:
        """Flush and close the file (safe to call twice)."""
        if self._gen is not None:
            self._gen.close()
            self._gen = None  # type: ignore[assignment]

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
