"""The trace's ``video.mp4``, made beside the episode rather than in its control loop.

A frame is the scene's ``overview`` camera (:data:`OVERVIEW_SIZE`, no shadows or
reflections, coarser spheres and cylinders) beside the shoulder and wrist images of the
agent's last observation (reused, not rendered again). Frames are sampled every ``1 / fps`` s
of simulated time: the control loop only copies the joint positions and the few model fields
a disturbance may change (microseconds); a worker thread renders them with its own copy of the
model, MuJoCo data and OpenGL context, and streams them to an ffmpeg process (H.264).
MuJoCo releases the GIL while it renders, so where a core is free the video costs the
episode little wall time.
"""

from __future__ import annotations

import copy
import queue
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from agentic_env.visualize import resize_nearest

#: Overview image (width, height), pixels; each camera image beside it is half of it.
OVERVIEW_SIZE = (384, 216)
#: Frames per second of simulated time (the video plays in real time).
VIDEO_FPS = 5
#: Slices and stacks of the overview's spheres, capsules and cylinders (MuJoCo's: 28, 16).
_TESSELLATION = (12, 6)
#: Model fields that disturbances change during an episode (fixtures moved, lights changed).
_MOVABLE_FIELDS = ("body_pos", "body_quat", "geom_rgba", "light_pos", "light_dir",
                   "light_diffuse")


@dataclass(frozen=True)
class _Frame:
    qpos: np.ndarray
    mocap: tuple[np.ndarray, np.ndarray]
    fields: tuple[np.ndarray, ...]
    cameras: tuple[np.ndarray | None, ...]


class TraceVideo:
    """Writes an episode's video to ``path`` while the episode runs.

    Args:
        path: the ``.mp4`` to write.
        model: the simulated model (copied; never changed).
        cameras: names of the observation cameras shown beside the overview, top first.
        fps: frames per second of simulated time (and of the video).
    """

    def __init__(self, path: str | Path, model: mujoco.MjModel,
                 cameras: tuple[str, ...] = ("shoulder", "wrist"), fps: int = VIDEO_FPS) -> None:
        self.path = Path(path)
        self.fps = fps
        self.frames = 0
        self.error: str | None = None
        self._live = model
        self._model = copy.copy(model)
        self._model.vis.quality.numslices, self._model.vis.quality.numstacks = _TESSELLATION
        self._cameras = cameras
        self._images: dict[str, np.ndarray] = {}
        self._next_time = -np.inf
        self._closed = False
        self._queue: queue.SimpleQueue[_Frame | None] = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._encode, name="trace-video", daemon=True)
        self._worker.start()

    def observe(self, observation: dict[str, np.ndarray]) -> None:
        """Keep the camera images of the agent's latest observation for the next frames."""
        for name in self._cameras:
            if f"{name}_rgb" in observation:
                self._images[name] = observation[f"{name}_rgb"]

    def sample(self, data: mujoco.MjData) -> None:
        """Take a frame of the simulation's state if ``1 / fps`` s of it passed since the
        last one (call after every control period)."""
        if data.time < self._next_time - 1e-6:
            return
        period = 1.0 / self.fps
        self._next_time += period
        if self._next_time <= data.time:  # the first frame, or the samples stopped a while
            self._next_time = data.time + period
        self.frames += 1
        self._queue.put(_Frame(
            data.qpos.copy(), (data.mocap_pos.copy(), data.mocap_quat.copy()),
            tuple(getattr(self._live, name).copy() for name in _MOVABLE_FIELDS),
            tuple(self._images.get(name) for name in self._cameras)))

    def close(self) -> None:
        """Wait for the frames still being rendered and finish the file; sets :attr:`error`
        (and leaves no video) if rendering or encoding failed. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._worker.join()
        if self.error is not None:
            self.path.unlink(missing_ok=True)

    def _encode(self) -> None:
        width, height = OVERVIEW_SIZE
        model, renderer, ffmpeg = self._model, None, None
        try:
            renderer = _OverviewRenderer(model, width, height)
            data = mujoco.MjData(model)
            ffmpeg = _start_ffmpeg(self.path, (width * 3 // 2, height), self.fps)
            while (frame := self._queue.get()) is not None:
                data.qpos[:] = frame.qpos
                data.mocap_pos[:], data.mocap_quat[:] = frame.mocap
                for name, value in zip(_MOVABLE_FIELDS, frame.fields, strict=True):
                    getattr(model, name)[:] = value
                mujoco.mj_fwdPosition(model, data)
                side = [resize_nearest(image, width // 2, height // len(frame.cameras))
                        for image in frame.cameras]
                image = np.concatenate([renderer.render(data), np.concatenate(side)], axis=1)
                ffmpeg.stdin.write(image.tobytes())  # type: ignore[union-attr]
        except Exception as exc:  # the episode goes on; the trace says why it has no video
            self.error = f"{type(exc).__name__}: {exc}"
            while self._queue.get() is not None:  # let close() finish
                pass
        finally:
            if renderer is not None:
                renderer.close()
            if ffmpeg is not None:
                _, errors = ffmpeg.communicate()
                if ffmpeg.returncode != 0 and self.error is None:
                    self.error = f"ffmpeg failed: {errors.decode(errors='replace').strip()}"


def _start_ffmpeg(path: Path, size: tuple[int, int], fps: int) -> subprocess.Popen[bytes]:
    """ffmpeg (imageio-ffmpeg's binary) encoding raw RGB frames of ``size`` (width, height)
    from its stdin to H.264 in ``path``. Started without running Python in the child (a
    ``preexec_fn`` can hang a fork from a process whose other threads hold locks)."""
    import imageio_ffmpeg

    command = [imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-loglevel", "error",
               "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{size[0]}x{size[1]}",
               "-r", str(fps), "-i", "-", "-an", "-c:v", "libx264", "-preset", "veryfast",
               "-pix_fmt", "yuv420p", "-movflags", "+faststart", str(path)]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


class _OverviewRenderer:
    """The ``overview`` camera of a model, rendered offscreen without shadows or
    reflections (an OpenGL context of its own, current in the thread that made it)."""

    def __init__(self, model: mujoco.MjModel, width: int, height: int) -> None:
        from mujoco import gl_context

        self._model = model
        self._gl = gl_context.GLContext(width, height)
        self._gl.make_current()
        self._context = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_50)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._context)
        self._scene = mujoco.MjvScene(model, maxgeom=2_000)
        self._scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = False
        self._scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = False
        self._option = mujoco.MjvOption()
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._camera.fixedcamid = model.camera("overview").id
        self._rect = mujoco.MjrRect(0, 0, width, height)
        self._rgb = np.empty((height, width, 3), np.uint8)

    def render(self, data: mujoco.MjData) -> np.ndarray:
        """The overview (H, W, 3) uint8 of ``data``'s state."""
        mujoco.mjv_updateScene(self._model, data, self._option, None, self._camera,
                               mujoco.mjtCatBit.mjCAT_ALL, self._scene)
        mujoco.mjr_render(self._rect, self._scene, self._context)
        mujoco.mjr_readPixels(self._rgb, None, self._rect, self._context)
        return np.flipud(self._rgb)

    def close(self) -> None:
        """Release the OpenGL context."""
        self._context.free()
        self._gl.free()
