"""Eval videos that stream to the encoder as they are rendered.

``lerobot-eval`` keeps every frame an env's ``render()`` returns until the episode (the whole
batch) ends and only then writes the MP4 (``lerobot/scripts/lerobot_eval.py``: ``render_frame``
appends to ``ep_frames``; ``write_video`` runs after the rollout), so a 360 x 960 frame costs
about 1 MB of memory per control period: ~2.5 GB for one 2,400-period episode. An env plugin
cannot change that loop; what it controls is what ``render()`` returns. With
``render="stream"`` the plugin's env encodes each frame into its own MP4 at once
(:class:`EpisodeVideo`) and hands LeRobot a :func:`placeholder_frame`, so LeRobot's buffer
grows by 768 bytes per period and LeRobot's own ``eval_episode_<n>.mp4`` is a black 16 x 16
clip; the real video is the plugin's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agentic_env.sim.video import VideoConfig, VideoWriter

#: How the env answers ``render()`` (see
#: :class:`~agentic_env.envs.lerobot.env.LeRobotBenchmarkEnv`).
RENDER_MODES: tuple[str, ...] = ("stream", "frames")
#: Side of the placeholder frame handed to the caller in ``stream`` mode, pixels (even, for
#: yuv420p; large enough for libx264).
PLACEHOLDER_SIDE = 16
#: Encoder settings of the eval videos: H.264, a keyframe every 2 s at 20 fps (they are
#: watched, not seeked frame by frame like a dataset's).
EVAL_VIDEO = VideoConfig(codec="h264", crf=23, gop=40)

_PLACEHOLDER = np.zeros((PLACEHOLDER_SIDE, PLACEHOLDER_SIDE, 3), np.uint8)
_PLACEHOLDER.flags.writeable = False


def placeholder_frame() -> np.ndarray:
    """A black (16, 16, 3) uint8 frame, read-only: what ``render()`` returns when the video
    streams elsewhere (LeRobot copies it when it stacks a batch's frames)."""
    return _PLACEHOLDER


class EpisodeVideo:
    """One episode's MP4, written frame by frame (nothing is kept in memory).

    Args:
        path: the ``.mp4`` to write (its folder is created).
        width / height: frame size, pixels (even).
        fps: frames per second (the control rate: one frame per control period).
    """

    def __init__(self, path: Path, width: int, height: int, fps: float) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._writer = VideoWriter(path, width, height, fps, EVAL_VIDEO)
        #: The frame after the episode's last step was written (later calls add nothing).
        self.final = False

    @property
    def frames(self) -> int:
        """Frames encoded so far."""
        return self._writer.frames

    def append(self, frame: np.ndarray, final: bool = False) -> None:
        """Encode ``frame`` (H, W, 3) uint8; ``final``: it shows the episode's end."""
        self._writer.append(frame)
        self.final = final

    def close(self) -> None:
        """Finish the file (safe to call twice)."""
        self._writer.close()
