"""MP4 files of RGB frame streams: encoding (:mod:`agentic_env.sim.video`, re-exported here)
and decoding, with the ffmpeg binary of ``imageio-ffmpeg``.

Videos are what LeRobot reads (``video_path`` in ``meta/info.json``): ``yuv420p`` pixels in an
MP4 container, one file per episode and camera, written by :class:`VideoWriter` frame by
frame as the episode is recorded (see :mod:`agentic_env.sim.video` for the codecs).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import imageio_ffmpeg
import numpy as np

from agentic_env.sim.video import CODECS, VideoConfig, VideoWriter

__all__ = ["CODECS", "VideoConfig", "VideoWriter", "psnr", "read_video", "video_info"]


def read_video(path: Path, width: int, height: int) -> Iterator[np.ndarray]:
    """Decode an MP4 of ``width`` x ``height`` into RGB frames (H, W, 3) uint8, in order."""
    command = [imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(path),
               "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    size = width * height * 3
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdout is not None
        while len(buffer := proc.stdout.read(size)) == size:
            yield np.frombuffer(buffer, np.uint8).reshape(height, width, 3)
        proc.stdout.close()


def video_info(path: Path) -> dict[str, Any]:
    """Container facts from ffmpeg: ``size`` (w, h), ``fps``, ``codec``, ``frames`` (counted)."""
    frames, meta = imageio_ffmpeg.count_frames_and_secs(str(path))
    reader = imageio_ffmpeg.read_frames(str(path))
    header = next(reader)
    reader.close()
    return {"size": tuple(header["size"]), "fps": float(header["fps"]),
            "codec": header.get("codec", ""), "frames": int(frames), "duration": float(meta)}


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Peak signal-to-noise ratio of two uint8 images, dB (inf when identical)."""
    error = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if error == 0 else float(10.0 * np.log10(255.0**2 / error))
