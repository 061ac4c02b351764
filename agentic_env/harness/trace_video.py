"""The trace's ``video.mp4``, made beside the episode rather than in its control loop.

A frame is the scene's ``overview`` camera (:data:`OVERVIEW_SIZE`, no shadows or
reflections, coarser spheres and cylinders) beside the shoulder and wrist images of the
agent's last observation (reused, not rendered again). A frame is sampled every
:data:`FRAME_PERIOD` s of simulated time and the video plays at :data:`VIDEO_FPS`, twice real
time: the control loop only copies the joint positions and the few model fields
a disturbance may change (microseconds); a worker thread renders them with its own copy of the
model and MuJoCo data, and streams them to an ffmpeg process (H.264).
MuJoCo releases the GIL while it renders, so where a core is free the video costs the
episode little wall time. At most :data:`MAX_QUEUED_FRAMES` frames wait for the worker: when
it falls that far behind, :meth:`TraceVideo.sample` waits for it, so memory stays bounded
however long the episode.
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

from agentic_env.sim.cameras import thread_gl_context
from agentic_env.visualize import resize_nearest

#: Overview image (width, height), pixels; each camera image beside it is half of it.
OVERVIEW_SIZE = (384, 216)
#: Simulated seconds between frames, and frames per second of the video (so it plays at
#: twice the speed of the episode: each frame costs ~7-11 ms of CPU to render).
FRAME_PERIOD = 0.4
VIDEO_FPS = 5
#: Frames that may wait for the worker before :meth:`TraceVideo.sample` blocks (each holds
#: the joint positions, a few model fields and references to the last camera images).
MAX_QUEUED_FRAMES = 32
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
        period: simulated seconds between frames.
        fps: frames per second of the video.
    """

    def __init__(self, path: str | Path, model: mujoco.MjModel,
                 cameras: tuple[str, ...] = ("shoulder", "wrist"),
                 period: float = FRAME_PERIOD, fps: int = VIDEO_FPS) -> None:
        self.path = Path(path)
        self.period = period
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
        self._done = threading.Event()
        self._queue: queue.Queue[_Frame | None] = queue.Queue(MAX_QUEUED_FRAMES)
        _JOBS.put(self)
        _start_worker()

    def observe(self, observation: dict[str, np.ndarray]) -> None:
        """Keep the camera images of the agent's latest observation for the next frames."""
        for name in self._cameras:
            if f"{name}_rgb" in observation:
                self._images[name] = observation[f"{name}_rgb"]

    def sample(self, data: mujoco.MjData) -> None:
        """Take a frame of the simulation's state if :attr:`period` s of it passed since the
        last one (call after every control period); waits while :data:`MAX_QUEUED_FRAMES`
        frames are still to be rendered."""
        if data.time < self._next_time - 1e-6:
            return
        self._next_time += self.period
        if self._next_time <= data.time:  # the first frame, or the samples stopped a while
            self._next_time = data.time + self.period
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
        self._done.wait()
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


#: Videos waiting for the worker thread, which makes them one after another. It lives as long
#: as the process, so its OpenGL context is made once (0.13 s of CPU), not once per episode.
_JOBS: queue.SimpleQueue[TraceVideo] = queue.SimpleQueue()
_WORKER_LOCK = threading.Lock()
_worker: threading.Thread | None = None


def _start_worker() -> None:
    """Start the worker thread unless it runs (a forked child has none running)."""
    global _worker
    with _WORKER_LOCK:
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_work, name="trace-video", daemon=True)
            _worker.start()


def _work() -> None:
    while True:
        video = _JOBS.get()
        try:
            video._encode()
        except Exception as exc:  # e.g. ffmpeg gone at the end: the next video still runs
            video.error = video.error or f"{type(exc).__name__}: {exc}"
        finally:
            video._done.set()


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
    reflections (in the thread's shared OpenGL context)."""

    def __init__(self, model: mujoco.MjModel, width: int, height: int) -> None:
        self._model = model
        self._gl = thread_gl_context(width, height)
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
        self._gl.make_current()  # type: ignore[attr-defined]
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._context)
        mujoco.mjv_updateScene(self._model, data, self._option, None, self._camera,
                               mujoco.mjtCatBit.mjCAT_ALL, self._scene)
        mujoco.mjr_render(self._rect, self._scene, self._context)
        mujoco.mjr_readPixels(self._rgb, None, self._rect, self._context)
        return np.flipud(self._rgb)

    def close(self) -> None:
        """Release the MuJoCo render context (the thread's OpenGL context stays)."""
        self._gl.make_current()  # type: ignore[attr-defined]
        self._context.free()
