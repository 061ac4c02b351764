"""Offscreen rendering of the workcell's cameras with MuJoCo (EGL or OSMesa, headless).

The camera conventions (OpenCV frame, extrinsics camera -> base, depth in metres along the
optical axis, 0 = no return) are those of :mod:`agentic_env.geometry.camera`.
"""

from __future__ import annotations

import atexit
import sys
import threading
import weakref
from typing import Protocol

import mujoco
import numpy as np

from agentic_env.errors import InvalidConfigError, RenderingUnavailableError
from agentic_env.geometry.camera import (
    MUJOCO_TO_OPENCV,
    SKYBOX_DEPTH_FRACTION,
    CameraConfig,
)

#: OpenGL contexts of this thread by (width, height), shared by its camera renderers: the
#: first MuJoCo render context made in an OpenGL context costs ~0.13 s of CPU with a software
#: rasteriser, each later one ~0.01 s. All of them are also listed, to be freed at exit.
_THREAD_GL = threading.local()
_ALL_GL: list[object] = []




def camera_pose_in_world(data: mujoco.MjData, camera_id: int) -> np.ndarray:
    """Pose (4x4) of the OpenCV frame of MuJoCo camera ``camera_id`` in the world frame."""
    pose = np.eye(4)
    pose[:3, :3] = data.cam_xmat[camera_id].reshape(3, 3) @ MUJOCO_TO_OPENCV
    pose[:3, 3] = data.cam_xpos[camera_id]
    return pose


class GLOwner(Protocol):
    """Anything holding an OpenGL context that ``close()`` releases (safe to call twice)."""

    def close(self) -> None:
        """Release the context."""


#: Owners of live GL contexts, closed at exit by :func:`_close_live_gl_owners`.
_LIVE_GL_OWNERS: weakref.WeakSet[GLOwner] = weakref.WeakSet()
_exit_hook_registered = False


def close_at_exit(owner: GLOwner) -> None:
    """Close ``owner`` at interpreter exit if it is still open then.

    Call it right after ``owner`` created its GL context. MuJoCo's EGL backend registers
    ``eglTerminate`` with :mod:`atexit` when the process's first context is made; the hook
    registered here comes later, so it runs first (exit hooks run last in, first out) and
    frees every context left open while the display is still valid. Otherwise the owners'
    finalizers run after ``eglTerminate`` and print ``EGL_NOT_INITIALIZED`` tracebacks.
    The set holds weak references: owners that are garbage-collected drop out of it.
    """
    global _exit_hook_registered
    _LIVE_GL_OWNERS.add(owner)
    if not _exit_hook_registered:
        atexit.register(_close_live_gl_owners)
        _exit_hook_registered = True


def _close_live_gl_owners() -> None:
    for owner in list(_LIVE_GL_OWNERS):
        owner.close()
    _LIVE_GL_OWNERS.clear()


def thread_gl_context(width: int, height: int) -> object:
    """This thread's shared OpenGL context for offscreen images up to ``width`` x ``height``
    pixels (MuJoCo's ``gl_context.GLContext``, made current), created on first use.

    Renderers keep their own MuJoCo render context (``MjrContext``) in it and bind its
    offscreen buffer before each render; they never free the shared context.

    Raises:
        RenderingUnavailableError: no OpenGL backend (``MUJOCO_GL``) is available.
    """
    from mujoco import gl_context

    if gl_context.GLContext is None:
        raise RenderingUnavailableError(
            "no OpenGL backend for offscreen rendering: set MUJOCO_GL=egl (Debian packages "
            "libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1) or MUJOCO_GL=osmesa (libosmesa6)"
        )
    contexts = _THREAD_GL.__dict__.setdefault("contexts", {})
    if (width, height) not in contexts:
        contexts[width, height] = gl_context.GLContext(width, height)
        if not _ALL_GL:  # before the GL library's exit handler, registered with its context
            atexit.register(_free_gl_contexts)
        _ALL_GL.append(contexts[width, height])
    context = contexts[width, height]
    context.make_current()
    return context


def _free_gl_contexts() -> None:
    """Free every thread's shared OpenGL contexts (at exit, while the GL library is up)."""
    for context in _ALL_GL:
        context.free()  # type: ignore[attr-defined]


class CameraRenderer:
    """Offscreen RGB-D renderer of one camera: one render pass yields colour and depth.

    ``mujoco.Renderer`` renders the scene twice for RGB then depth; this renderer draws once
    and reads both buffers, halving the cost of an observation. Depth is converted from
    MuJoCo's reversed-Z buffer to metres along the optical axis. The OpenGL context is
    created on first use, so envs can be built, pickled and sent to workers first, and is
    shared with the thread's other renderers of the same image size (each keeps its own
    MuJoCo render context and offscreen buffer in it).
    """

    def __init__(
        self, model: mujoco.MjModel, config: CameraConfig, camera_name: str | None = None
    ) -> None:
        """Render ``config`` through MuJoCo camera ``camera_name`` (default ``config.name``)."""
        self._model = model
        self.config = config
        self._camera_id = model.camera(camera_name or config.name).id
        self._gl: object | None = None
        self._thread: int | None = None
        self._context: mujoco.MjrContext | None = None
        extent = model.stat.extent
        self._near = np.float32(model.vis.map.znear * extent)
        self._far = np.float32(model.vis.map.zfar * extent)
        if config.depth_max > SKYBOX_DEPTH_FRACTION * self._far:
            raise InvalidConfigError(
                f"camera {config.name!r}: depth_max {config.depth_max} m reaches the skybox "
                f"(drawn beyond {SKYBOX_DEPTH_FRACTION * self._far:.1f} m); raise the model's "
                "visual/map zfar"
            )

    @property
    def camera_id(self) -> int:
        """MuJoCo id of the rendered camera."""
        return self._camera_id

    def _ensure_context(self) -> None:
        if self._context is not None:
            self._gl.make_current()  # type: ignore[union-attr]
            # another renderer sharing the OpenGL context may have bound its own buffer
            mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._context)
            return
        cfg, model = self.config, self._model
        if cfg.width > model.vis.global_.offwidth or cfg.height > model.vis.global_.offheight:
            raise InvalidConfigError(
                f"camera {cfg.name!r}: {cfg.width}x{cfg.height} exceeds the model's offscreen "
                f"buffer {model.vis.global_.offwidth}x{model.vis.global_.offheight}"
            )
        self._gl = thread_gl_context(cfg.width, cfg.height)
        self._thread = threading.get_ident()
        self._context = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._context)
        self._context.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self._scene = mujoco.MjvScene(model, maxgeom=10_000)
        self._option = mujoco.MjvOption()
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._camera.fixedcamid = self._camera_id
        self._rect = mujoco.MjrRect(0, 0, cfg.width, cfg.height)
        self._rgb = np.empty((cfg.height, cfg.width, 3), np.uint8)
        self._zbuffer = np.empty((cfg.height, cfg.width), np.float32)

    def render(
        self, data: mujoco.MjData, rng: np.random.Generator | None, *, depth: bool = True
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Render the camera's RGB (H, W, 3 uint8) and, if asked, depth (H, W float32 metres).

        Depth outside ``[depth_min, depth_max]`` is set to 0; noise is drawn from ``rng`` when
        the config has ``depth_noise_std > 0`` (``rng`` must then be given).
        """
        self._ensure_context()
        mujoco.mjv_updateScene(self._model, data, self._option, None, self._camera,
                               mujoco.mjtCatBit.mjCAT_ALL, self._scene)
        mujoco.mjr_render(self._rect, self._scene, self._context)
        mujoco.mjr_readPixels(self._rgb, self._zbuffer if depth else None, self._rect,
                              self._context)
        rgb = np.flipud(self._rgb).copy()
        if not depth:
            return rgb, None
        return rgb, self._apply_range_and_noise(self._metric_depth(np.flipud(self._zbuffer)), rng)

    def render_segmentation(self, data: mujoco.MjData) -> np.ndarray:
        """The MuJoCo geom id seen at each pixel, (H, W) int64, -1 where no geom is.

        Privileged ground truth (for the sim-oracle and labels), never an observation.
        """
        return self._segment(data, mujoco.mjtCatBit.mjCAT_ALL, depth=False)[0]

    def render_static(self, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        """The scene without its moving bodies: geom id per pixel ((H, W) int64, -1 where no
        static geom is) and its depth ((H, W) float32 metres along the optical axis, 0 where
        no static geom is or beyond the configured range). Static geoms are those of bodies
        welded to the world (MuJoCo's ``mjCAT_STATIC``). Privileged (the realistic world's
        device models), never an observation."""
        geoms, zbuffer = self._segment(data, mujoco.mjtCatBit.mjCAT_STATIC, depth=True)
        depth = self._metric_depth(zbuffer)
        depth[(geoms < 0) | (depth < self.config.depth_min) | (depth > self.config.depth_max)] = 0
        return geoms, depth

    def _segment(self, data: mujoco.MjData, categories: int, depth: bool
                 ) -> tuple[np.ndarray, np.ndarray | None]:
        """Geom ids of the ``categories`` (``mjtCatBit``) seen at each pixel, and the flipped
        z-buffer when ``depth``."""
        self._ensure_context()
        mujoco.mjv_updateScene(self._model, data, self._option, None, self._camera,
                               categories, self._scene)
        flags = self._scene.flags
        original = flags.copy()
        flags[mujoco.mjtRndFlag.mjRND_SEGMENT] = flags[mujoco.mjtRndFlag.mjRND_IDCOLOR] = True
        try:
            mujoco.mjr_render(self._rect, self._scene, self._context)
        finally:
            np.copyto(flags, original)
        mujoco.mjr_readPixels(self._rgb, self._zbuffer if depth else None, self._rect,
                              self._context)
        colour = np.flipud(self._rgb).astype(np.int64)
        # the colour encodes the geom's segmentation id + 1; 0 is the background
        segment = colour[..., 0] + colour[..., 1] * 2**8 + colour[..., 2] * 2**16
        geom_of = np.full(self._scene.ngeom + 1, -1, np.int64)
        for geom in self._scene.geoms[: self._scene.ngeom]:
            if geom.segid != -1 and geom.objtype == mujoco.mjtObj.mjOBJ_GEOM:
                geom_of[geom.segid + 1] = geom.objid
        return geom_of[segment], (np.flipud(self._zbuffer).copy() if depth else None)

    def _metric_depth(self, zbuffer: np.ndarray) -> np.ndarray:
        """Invert the reversed-Z perspective depth buffer to metres along the optical axis:
        a new (H, W) float32 array. Computed in float32 (within one unit in the last place
        of the float64 quotient, 1.2e-7 relative: 0.1 um at 1 m), ~10x the float64 path."""
        near, far = self._near, self._far
        c_coef = -(far + near) / (far - near)
        d_coef = -(np.float32(2) * far * near) / (far - near)
        c_coef = np.float32(-0.5) * c_coef - np.float32(0.5)
        d_coef = np.float32(-0.5) * d_coef
        depth = np.add(zbuffer, np.float32(c_coef), dtype=np.float32)
        return np.divide(np.float32(d_coef), depth, out=depth)

    def _apply_range_and_noise(
        self, depth: np.ndarray, rng: np.random.Generator | None
    ) -> np.ndarray:
        cfg = self.config
        if cfg.depth_noise_std > 0.0:
            if rng is None:
                raise InvalidConfigError("depth noise needs a random generator")
            noise = rng.standard_normal(depth.shape, dtype=np.float32)
            depth = depth + noise * np.float32(cfg.depth_noise_std) * depth * depth
        depth[(depth < cfg.depth_min) | (depth > cfg.depth_max)] = 0.0
        return depth

    def close(self) -> None:
        """Release the MuJoCo render context (safe to call twice); the thread's shared
        OpenGL context stays for its other renderers. From another thread (the garbage
        collector's), the render context is left to the OpenGL context's end."""
        if self._context is not None and self._thread == threading.get_ident():
            self._gl.make_current()  # type: ignore[union-attr]
            self._context.free()
        self._context = None
        self._gl = None

    def __del__(self) -> None:
        if not sys.is_finalizing():  # the GL library may already be gone at exit
            self.close()
