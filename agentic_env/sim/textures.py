"""Deterministic procedural textures for the setting dressings (numpy only, no image files).

Every generator returns a tileable ``(size, size, 3)`` uint8 RGB image that depends only on its
arguments (``seed`` included), so a scene compiles to the same model on every machine. Colours
are RGB in 0..1. Sizes are capped at :data:`MAX_TEXTURE_SIZE` so models compile fast.

Kinds (see :func:`make_texture`):

* ``wood``: planks along x with growth rings, fine grain streaks and dark seams.
* ``stone``: a marble-like counter: cloudy base, turbulent veins, optional speckles (granite).
* ``grass``: blades stretched along y, lush and dry patches, dark gaps.
* ``gravel``: rounded pebbles (a tileable Voronoi diagram) from a palette on dirt.
* ``tiles``: square wall tiles with grout lines and per-tile shade.

:func:`add_texture` puts one into an ``MjSpec`` as a buffer texture.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import mujoco
import numpy as np

from agentic_env.errors import InvalidConfigError

#: Largest allowed texture side, pixels.
MAX_TEXTURE_SIZE = 256

Rgb = Sequence[float]


def _smooth(t: np.ndarray) -> np.ndarray:
    return t * t * (3.0 - 2.0 * t)


def value_noise(size: int, cells: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """Tileable value noise (size, size) in 0..1 over a ``cells`` (rows, cols) random lattice."""
    rows, cols = cells
    lattice = rng.random((rows, cols))
    y = np.arange(size) * rows / size
    x = np.arange(size) * cols / size
    y0, x0 = np.floor(y).astype(int), np.floor(x).astype(int)
    fy, fx = _smooth(y - y0)[:, None], _smooth(x - x0)[None, :]
    y1, x1 = (y0 + 1) % rows, (x0 + 1) % cols
    top = lattice[y0[:, None], x0] * (1 - fx) + lattice[y0[:, None], x1] * fx
    bottom = lattice[y1[:, None], x0] * (1 - fx) + lattice[y1[:, None], x1] * fx
    return top * (1 - fy) + bottom * fy


def fractal_noise(
    size: int, cells: tuple[int, int], octaves: int, rng: np.random.Generator,
    persistence: float = 0.5,
) -> np.ndarray:
    """Sum of ``octaves`` value-noise layers doubling in frequency, normalised to 0..1."""
    total = np.zeros((size, size))
    amplitude, rows, cols = 1.0, cells[0], cells[1]
    for _ in range(octaves):
        total += amplitude * value_noise(size, (min(rows, size), min(cols, size)), rng)
        amplitude *= persistence
        rows, cols = rows * 2, cols * 2
    total -= total.min()
    return total / max(total.max(), 1e-12)


def _mix(a: Rgb, b: Rgb, t: np.ndarray) -> np.ndarray:
    a_, b_ = np.asarray(a, float), np.asarray(b, float)
    return a_ + (b_ - a_) * t[..., None]


def _to_uint8(rgb: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(rgb * 255.0), 0, 255).astype(np.uint8)


def wood(
    size: int = 256, seed: int = 0, dark: Rgb = (0.42, 0.25, 0.12),
    light: Rgb = (0.72, 0.52, 0.31), planks: int = 4, rings: int = 9,
    seam: Rgb = (0.22, 0.13, 0.07),
) -> np.ndarray:
    """Planks along x: growth rings, grain streaks, per-plank shade and dark seams."""
    rng = np.random.default_rng(seed)
    y = np.arange(size)[:, None] / size
    warp = fractal_noise(size, (2, 2), 3, rng)
    streaks = fractal_noise(size, (max(size // 4, 1), 2), 2, rng, persistence=0.6)
    plank_h = size // planks
    plank = np.minimum(np.arange(size) // plank_h, planks - 1)
    phase = rng.random(planks)[plank][:, None]
    shade = rng.uniform(0.85, 1.1, planks)[plank][:, None]
    ring = (y * rings + 1.8 * warp + phase) % 1.0
    ring = ring**2.5  # sharp late-wood edge, slow early-wood ramp
    grain = 0.55 * ring + 0.45 * streaks
    rgb = _mix(dark, light, 1.0 - grain) * shade[..., None]
    seams = (np.arange(size) % plank_h < 1) | (np.arange(size) % plank_h == plank_h - 1)
    rgb[seams] = np.asarray(seam, float)
    # butt joints: one per plank at a random x
    for index, joint in enumerate(rng.integers(0, size, planks)):
        rgb[plank == index, joint] = np.asarray(seam, float)
    return _to_uint8(rgb)


def stone(
    size: int = 256, seed: int = 0, base: Rgb = (0.86, 0.85, 0.82),
    vein: Rgb = (0.45, 0.45, 0.47), veins: float = 1.0, speckle: float = 0.0,
    speckle_rgb: Rgb = (0.2, 0.2, 0.2), fade: float = 0.3,
) -> np.ndarray:
    """Marble-like stone: cloudy base, two families of thin turbulent veins of strength
    ``veins`` (0..1) that fade in and out (``fade`` 0..1: share of the area without veins),
    optional granite ``speckle`` (0..1)."""
    rng = np.random.default_rng(seed)
    clouds = fractal_noise(size, (3, 3), 5, rng)
    turbulence = fractal_noise(size, (2, 2), 4, rng)
    cross = fractal_noise(size, (3, 3), 4, rng)
    presence = fractal_noise(size, (2, 2), 3, rng)
    y, x = np.mgrid[0:size, 0:size] / size
    main = (1.0 - np.abs(np.sin(np.pi * (x + y + 2.0 * turbulence)))) ** 20
    minor = (1.0 - np.abs(np.sin(np.pi * (2 * x - 3 * y + 2.6 * cross)))) ** 30
    visible = np.clip((presence - fade) / max(1.0 - fade, 1e-6) * 2.0, 0.0, 1.0)
    vein_strength = veins * np.maximum(main, 0.6 * minor) * visible
    rgb = np.asarray(base, float) * (0.92 + 0.12 * clouds)[..., None]
    rgb = rgb + (np.asarray(vein, float) - rgb) * vein_strength[..., None]
    if speckle > 0.0:
        spots = (rng.random((size, size)) < 0.08 * speckle) & (
            fractal_noise(size, (16, 16), 2, rng) > 0.4)
        rgb[spots] = rgb[spots] * 0.4 + np.asarray(speckle_rgb, float) * 0.6
    return _to_uint8(rgb)


def grass(
    size: int = 256, seed: int = 0, dark: Rgb = (0.10, 0.26, 0.06),
    light: Rgb = (0.32, 0.55, 0.16), dry: Rgb = (0.55, 0.52, 0.25), dryness: float = 0.35,
) -> np.ndarray:
    """Grass: blade streaks along y, lush and dry patches, dark gaps between blades."""
    rng = np.random.default_rng(seed)
    blades = value_noise(size, (max(size // 16, 1), max(size // 2, 1)), rng)
    fine = rng.random((size, size))
    patches = fractal_noise(size, (3, 3), 4, rng)
    t = np.clip(0.65 * blades + 0.35 * fine, 0.0, 1.0)
    rgb = _mix(dark, light, t)
    dry_t = np.clip((patches - (1.0 - dryness)) / max(dryness, 1e-6), 0.0, 1.0) * 0.8
    rgb = rgb + (np.asarray(dry, float) - rgb) * dry_t[..., None]
    gaps = fine < 0.06
    rgb[gaps] *= 0.5
    return _to_uint8(rgb)


def gravel(
    size: int = 256, seed: int = 0,
    palette: Sequence[Rgb] = ((0.55, 0.53, 0.50), (0.66, 0.63, 0.58), (0.45, 0.43, 0.41),
                              (0.62, 0.56, 0.48)),
    dirt: Rgb = (0.30, 0.27, 0.22), stones: int = 20,
) -> np.ndarray:
    """Rounded pebbles from ``palette`` on ``dirt``: a tileable jittered-grid Voronoi diagram."""
    rng = np.random.default_rng(seed)
    cell = size / stones
    points = (np.indices((stones, stones)).transpose(1, 2, 0) + rng.uniform(0.15, 0.85,
                                                                          (stones, stones, 2)))
    colours = np.asarray(palette, float)[rng.integers(0, len(palette), (stones, stones))]
    colours *= rng.uniform(0.8, 1.15, (stones, stones, 1))
    pix = (np.indices((size, size)).transpose(1, 2, 0) + 0.5) / cell  # in cell units
    base = np.floor(pix).astype(int)
    best = np.full((size, size), np.inf)
    second = np.full((size, size), np.inf)
    owner = np.zeros((size, size, 2), int)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            neighbour = base + [dy, dx]
            wrapped = neighbour % stones
            point = points[wrapped[..., 0], wrapped[..., 1]] + (neighbour - wrapped)
            dist = np.linalg.norm(pix - point, axis=-1)
            closer = dist < best
            second = np.where(closer, best, np.minimum(second, dist))
            owner = np.where(closer[..., None], wrapped, owner)
            best = np.where(closer, dist, best)
    rgb = colours[owner[..., 0], owner[..., 1]]
    rgb = rgb * np.clip(1.15 - 0.9 * best**2, 0.35, 1.15)[..., None]  # rounded shading
    edge = np.clip((second - best - 0.06) / 0.15, 0.0, 1.0)
    rgb = np.asarray(dirt, float) * (1 - edge[..., None]) + rgb * edge[..., None]
    return _to_uint8(rgb)


def tiles(
    size: int = 256, seed: int = 0, rgb: Rgb = (0.86, 0.87, 0.85),
    grout: Rgb = (0.6, 0.6, 0.58), count: int = 4, shade: float = 0.06,
) -> np.ndarray:
    """``count`` x ``count`` square tiles with grout lines and a per-tile shade jitter."""
    rng = np.random.default_rng(seed)
    step = size // count
    index = np.minimum(np.arange(size) // step, count - 1)
    factor = rng.uniform(1 - shade, 1 + shade, (count, count))[index[:, None], index[None, :]]
    image = np.asarray(rgb, float) * factor[..., None]
    line = np.arange(size) % step < max(size // 64, 1)
    image[line, :] = grout
    image[:, line] = grout
    return _to_uint8(image)


_GENERATORS: dict[str, Callable[..., np.ndarray]] = {
    "wood": wood, "stone": stone, "grass": grass, "gravel": gravel, "tiles": tiles,
}


def texture_kinds() -> list[str]:
    """Names of the procedural texture kinds."""
    return sorted(_GENERATORS)


def _freeze(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


@lru_cache(maxsize=64)
def _cached(kind: str, frozen: tuple[tuple[str, Any], ...]) -> np.ndarray:
    image = _GENERATORS[kind](**dict(frozen))
    image.setflags(write=False)
    return image


def make_texture(kind: str, **params: Any) -> np.ndarray:
    """Generate texture ``kind`` with generator keyword ``params`` (cached, read-only array).

    Raises:
        InvalidConfigError: unknown kind or parameter, or a size outside 8..256.
    """
    if kind not in _GENERATORS:
        raise InvalidConfigError(
            f"unknown texture kind {kind!r}; valid: {', '.join(texture_kinds())}")
    size = params.get("size", 256)
    if not isinstance(size, int) or not 8 <= size <= MAX_TEXTURE_SIZE:
        raise InvalidConfigError(f"texture size {size!r} is outside 8..{MAX_TEXTURE_SIZE} pixels")
    try:
        return _cached(kind, tuple(sorted((k, _freeze(v)) for k, v in params.items())))
    except TypeError as error:  # unexpected keyword
        raise InvalidConfigError(f"texture kind {kind!r}: {error}") from error


def add_texture(spec: mujoco.MjSpec, name: str, image: np.ndarray) -> mujoco.MjsTexture:
    """Add ``image`` (H, W, 3 uint8) to ``spec`` as a 2D buffer texture called ``name``."""
    height, width, channels = image.shape
    texture = spec.add_texture(name=name, type=mujoco.mjtTexture.mjTEXTURE_2D, width=width,
                               height=height, nchannel=channels)
    texture.data = np.ascontiguousarray(image, dtype=np.uint8).tobytes()
    return texture
