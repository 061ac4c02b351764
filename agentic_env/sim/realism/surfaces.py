"""What the surfaces a camera sees reflect of its own illumination: per-pixel linear albedo
from the scene's materials, never from the lit render (a shadow does not darken a surface
for a camera that lights its own scene).

A surface's albedo is the mean over red, green and blue of its material colour (the geom's
material ``rgba``, else the geom's ``rgba``) times the mean colour of the material's texture,
all linear as MuJoCo shades them. No source gives the near-infrared albedo of the simulated
materials, so the visible albedo stands for it (a stated assumption, ``world.toml``
``[kinect.depth]``).

For a camera fixed to the world (the Azure Kinect on its shoulder mount) the world's static
part (bodies welded to the world: the table, the bins on it, the dressing) is rendered once per
episode as geom ids with its depth (:meth:`SurfaceMap.of`); a pixel of an observation lies on
that static surface where its depth reaches the static depth, and on a moving body (the arm,
an object) where it lies nearer. Moving bodies take the median albedo of the scene's moving
geoms: an approximation per pixel (a dark object reads as the median), exact for the static
scene, where a misread shadow used to raise false obstacles on the table.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import cv2
import mujoco
import numpy as np

from agentic_env.geometry.camera import depth_to_points

#: Nearer than the static scene by more than this, m, a pixel sees a moving body.
_MOVING_MARGIN = 0.01
#: Albedo of a surface no geom explains (the sky, a hole in the static render).
_UNKNOWN_ALBEDO = 0.5


def geom_albedo(model: mujoco.MjModel) -> np.ndarray:
    """Linear albedo (ngeom,) float32, 0..1, of every geom: the mean over red, green, blue of
    its material's (else its own) ``rgba`` colour times its material's texture mean colour."""
    rgba = model.geom_rgba[:, :3].astype(np.float64).copy()
    has_material = model.geom_matid >= 0
    rgba[has_material] = model.mat_rgba[model.geom_matid[has_material], :3]
    texture = np.ones((model.ngeom, 3))
    if model.ntex:
        role = int(mujoco.mjtTextureRole.mjTEXROLE_RGB)
        tex_of_mat = model.mat_texid[:, role] if model.mat_texid.ndim == 2 else model.mat_texid
        means = _texture_means(model)
        for geom in np.flatnonzero(has_material):
            tex = int(tex_of_mat[model.geom_matid[geom]])
            if tex >= 0:
                texture[geom] = means[tex]
    return np.clip((rgba * texture).mean(axis=1), 0.0, 1.0).astype(np.float32)


def _texture_means(model: mujoco.MjModel) -> np.ndarray:
    """Mean colour (ntex, 3) of every texture, 0..1."""
    means = np.ones((model.ntex, 3))
    for tex in range(model.ntex):
        size = int(model.tex_height[tex] * model.tex_width[tex])
        channels = int(model.tex_nchannel[tex])
        start = int(model.tex_adr[tex])
        texels = model.tex_data[start:start + size * channels].reshape(size, channels)
        means[tex, :min(3, channels)] = texels[:, :3].mean(axis=0) / 255.0
    return means


@dataclass(frozen=True, eq=False)
class SurfaceMap:
    """Albedo per pixel of a camera fixed to the world, for one episode (module docstring).

    Attributes:
        static_albedo: (H, W) float32 albedo of the static scene at each pixel.
        static_depth: (H, W) float32 metres, the static scene's depth (0 where none).
        moving_albedo: albedo given to pixels on moving bodies.
    """

    static_albedo: np.ndarray
    static_depth: np.ndarray
    moving_albedo: float

    @classmethod
    def of(cls, model: mujoco.MjModel, geoms: np.ndarray, depth: np.ndarray) -> SurfaceMap:
        """The map of a static render: geom ids (H, W) (-1 = none) and their depth (H, W),
        as :meth:`agentic_env.sim.cameras.CameraRenderer.render_static` gives them."""
        albedo = geom_albedo(model)
        static = np.where(geoms >= 0, albedo[np.maximum(geoms, 0)], _UNKNOWN_ALBEDO)
        welded = model.body_weldid[model.geom_bodyid] == 0
        visible = (model.geom_group < 3) & (model.geom_rgba[:, 3] > 0)
        moving = albedo[~welded & visible]
        return cls(static.astype(np.float32), depth.astype(np.float32),
                   float(np.median(moving)) if moving.size else _UNKNOWN_ALBEDO)

    def albedo(self, depth: np.ndarray, window: tuple[slice, slice] | None = None
               ) -> np.ndarray:
        """(H, W) float32 albedo of what each pixel of an exact ``depth`` render (m, 0 = none)
        sees: the static scene's where the depth reaches it, else the moving bodies'.
        ``window`` (rows, columns): ``depth`` is that window of the image."""
        nearer = self._moving_below if window is None else self._moving_below[window]
        static_albedo = self.static_albedo if window is None else self.static_albedo[window]
        albedo = static_albedo.copy()
        np.copyto(albedo, np.float32(self.moving_albedo), where=depth < nearer)  # ~3x np.where
        return albedo

    def __post_init__(self) -> None:
        # per pixel, the depth (m) below which a pixel sees a moving body: the static depth
        # less the margin, +inf where no static surface is (every return is a moving body)
        below = self.static_depth - np.float32(_MOVING_MARGIN)
        below[self.static_depth <= 0] = np.inf
        object.__setattr__(self, "_moving_below", below)


@dataclass(frozen=True, eq=False)
class SurfaceSample:
    """What the world knows of the surfaces each pixel of one view sees, beyond its depth and
    its lit image (privileged: the device models only).

    Attributes:
        albedo: (H, W) float32 linear albedo, 0..1 (an active camera's return follows it);
            ``None``: the device's default.
        patch: (H, W) float32 in [0, 1): one value per surface patch fixed in the world
            (:func:`surface_patches`), so that what a device assumes of a patch (a stereo
            matcher finding texture the render lacks) stays with the surface as the camera
            moves; ``None``: patches fixed in the image (synthetic frames).
    """

    albedo: np.ndarray | None = None
    patch: np.ndarray | None = None


#: Edge of a world-fixed surface patch, m.
PATCH_SIZE = 0.02
#: Pixels per patch sample along each image axis (the patch field is sampled coarsely and
#: spread to whole pixel blocks: a patch spans tens of pixels at the wrist camera's range).
_PATCH_STEP = 4
#: Large odd multipliers of the spatial hash (one per axis).
_HASH = np.array([73856093, 19349663, 83492791], np.int64)
#: Stream of the episode seed's generator that shifts the patch grid.
_GRID_STREAM = 11


def surface_patches(depth: np.ndarray, intrinsics: np.ndarray, camera_to_base: np.ndarray,
                    seed: int) -> np.ndarray:
    """A value in [0, 1) per :data:`PATCH_SIZE` cube of the robot base frame, the same for
    every view of the episode (``seed``), at each pixel of an exact ``depth`` render (H, W, m
    along the optical axis; 0 = nothing) of a camera with ``intrinsics`` (3, 3) at pose
    ``camera_to_base`` (4, 4, OpenCV camera frame). Pixels with no depth get 0. (H, W)
    float32.

    The field is sampled every :data:`_PATCH_STEP` pixels (a patch spans tens of pixels at
    the wrist camera's range) and spread to whole blocks; each sample's point is its depth
    times its pixel's ray turned into the base frame, plus the camera's position (float64).
    The cubes' grid is shifted by a fraction of a cube drawn from ``seed`` (per axis,
    uniform): a surface built at a round height (the table top at z = 0) would otherwise lie
    on a face of the grid, where rounding, not the surface, picks the cube of each sample."""
    height, width = depth.shape
    start = _PATCH_STEP // 2
    sampled = np.ascontiguousarray(depth[start::_PATCH_STEP, start::_PATCH_STEP]).reshape(-1)
    rays = _coarse_rays(np.asarray(intrinsics, dtype=np.float64), depth.shape)
    # (3, N): each axis a contiguous row
    points = np.asarray(camera_to_base[:3, :3], dtype=np.float64) @ rays
    points *= sampled
    points += np.asarray(camera_to_base[:3, 3], dtype=np.float64)[:, None]
    points *= 1.0 / PATCH_SIZE
    points += _grid_offset(int(seed))[:, None]
    cells = np.floor(points, out=points).astype(np.int64)
    cells *= _HASH[:, None]
    hashed = cells[0]
    hashed ^= cells[1]
    hashed ^= cells[2]
    hashed ^= np.int64(seed)
    # a 64-bit mix (splitmix64's finaliser) so neighbouring cells get unrelated values
    mixed = hashed.view(np.uint64)
    mixed ^= mixed >> np.uint64(30)
    mixed *= np.uint64(0xBF58476D1CE4E5B9)
    mixed ^= mixed >> np.uint64(27)
    mixed *= np.uint64(0x94D049BB133111EB)
    mixed ^= mixed >> np.uint64(31)
    mixed >>= np.uint64(40)
    coarse = mixed.astype(np.float32)
    coarse *= np.float32(2.0**-24)
    coarse[sampled <= 0] = 0.0
    coarse = coarse.reshape(-(-(height - start) // _PATCH_STEP), -1)
    if coarse.shape[0] * _PATCH_STEP == height and coarse.shape[1] * _PATCH_STEP == width:
        # whole blocks: OpenCV's integer-scale path (~2x the general one's speed)
        return cv2.resize(coarse, None, fx=_PATCH_STEP, fy=_PATCH_STEP,
                          interpolation=cv2.INTER_NEAREST)
    return cv2.resize(coarse, (width, height), interpolation=cv2.INTER_NEAREST)


@functools.lru_cache(maxsize=64)
def _grid_offset(seed: int) -> np.ndarray:
    """(3,) float64 shift, in cubes, in [0, 1), of the patch grid of episode ``seed``."""
    offset = np.random.default_rng([seed, _GRID_STREAM]).random(3)
    offset.setflags(write=False)
    return offset


@functools.lru_cache(maxsize=8)
def _rays_of(intrinsics: bytes, shape: tuple[int, int]) -> np.ndarray:
    """:func:`_coarse_rays` of the (3, 3) float64 ``intrinsics``' bytes (cached)."""
    coarse_k = np.frombuffer(intrinsics, dtype=np.float64).reshape(3, 3).copy()
    # the samples' own pinhole matrix: sample j sits at full-resolution pixel STEP * j + STEP/2
    coarse_k[:2] /= _PATCH_STEP
    coarse_k[:2, 2] -= 0.5 / _PATCH_STEP
    samples = (-(-(shape[0] - _PATCH_STEP // 2) // _PATCH_STEP),
               -(-(shape[1] - _PATCH_STEP // 2) // _PATCH_STEP))
    rays = depth_to_points(np.ones(samples, np.float32), coarse_k).reshape(-1, 3)
    rays = np.ascontiguousarray(rays.T, dtype=np.float64)
    rays.setflags(write=False)
    return rays


def _coarse_rays(intrinsics: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """(3, N) float64 rays (x/z, y/z, 1) in the camera frame of the patch samples of an
    image of ``shape`` (H, W), in row-major order of the samples (read-only, shared)."""
    return _rays_of(np.ascontiguousarray(intrinsics).tobytes(), shape)
