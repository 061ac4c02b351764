"""Contact sheet of every named object: each rendered alone with its PDDL name and its words.

:class:`PropRenderer` builds one task's scene (as the env does), hides every geom but those of
one body and its children, and renders that body from a fixed oblique viewpoint (for a
person) and from straight above (for measuring: its silhouette and a height map from the
depth image). :func:`render_catalogue_sheet` lays every
:func:`~agentic_env.tasks.appearance.appearances` entry out in one grid, each tile cropped to
its object, with the name, the words and the colour word under it. ``agentic-env
catalogue-sheet`` writes it; a test reads the same views to check colours and shapes.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import mujoco
import numpy as np
from PIL import Image, ImageDraw

from agentic_env.contract.workcell import SceneConfig
from agentic_env.harness.setup_sheet import label_font
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import geoms_box
from agentic_env.tasks import make_task
from agentic_env.tasks.appearance import Appearance, appearances

#: Oblique viewpoint of the sheet: azimuth and elevation (degrees, MuJoCo free camera), from
#: the robot's side of the table (it looks along +x, away from the robot, like the cameras).
VIEW_AZIMUTH, VIEW_ELEVATION = 25.0, -32.0
#: Geom group the hidden geoms are moved to (off in the renderer's options).
_HIDDEN_GROUP = 5
#: Sheet background and the fill behind each object (RGB).
_PAPER, _BACKDROP = (255, 255, 255), (236, 236, 232)


@dataclass(frozen=True)
class PropView:
    """One body rendered alone.

    Attributes:
        oblique: (H, W, 3) uint8 view from the sheet's viewpoint, backdrop behind it.
        oblique_mask: (H, W) bool, the object's pixels in ``oblique``.
        top: (H, W, 3) uint8 view from straight above.
        top_mask: (H, W) bool, the object's pixels in ``top``.
        heights: (H, W) float, metres above the object's lowest point in ``top`` (NaN off it).
        extents: (3,) size of its axis-aligned bounding box (x, y, z), metres.
    """

    oblique: np.ndarray
    oblique_mask: np.ndarray
    top: np.ndarray
    top_mask: np.ndarray
    heights: np.ndarray
    extents: np.ndarray


def _subtree(model: mujoco.MjModel, body: int) -> np.ndarray:
    """Ids of ``body`` and its descendants."""
    ids = [body]
    for child in range(body + 1, model.nbody):
        if model.body_parentid[child] in ids:
            ids.append(child)
    return np.array(ids)


class PropRenderer:
    """Renders the bodies of one task's scene alone, ``size`` x ``size`` pixels each view."""

    def __init__(self, task: str, size: int = 192) -> None:
        builder = SceneBuilder(SceneConfig())
        make_task(task).build(builder)
        builder.spec.visual.global_.offwidth = max(size, builder.spec.visual.global_.offwidth)
        builder.spec.visual.global_.offheight = max(size,
                                                    builder.spec.visual.global_.offheight)
        self.model = builder.compile()
        self.data = mujoco.MjData(self.model)
        self._groups = self.model.geom_group.copy()
        self._renderer = mujoco.Renderer(self.model, size, size)
        self._option = mujoco.MjvOption()
        self._option.geomgroup[:] = 1
        self._option.geomgroup[_HIDDEN_GROUP] = 0
        self._option.sitegroup[:] = 0

    def close(self) -> None:
        """Free the renderer's GL context."""
        self._renderer.close()

    def _isolate(self, appearance: Appearance) -> tuple[np.ndarray, np.ndarray]:
        """Hide every geom but the body's; pose a free body; (low, high) world corners."""
        model, data = self.model, self.data
        body = model.body(appearance.body).id
        mujoco.mj_resetData(model, data)
        free = mujoco.mjtJoint.mjJNT_FREE
        if model.body_jntnum[body] and model.jnt_type[model.body_jntadr[body]] == free:
            adr = model.jnt_qposadr[model.body_jntadr[body]]
            data.qpos[adr:adr + 3] = 0.0
            data.qpos[adr + 3:adr + 7] = appearance.quat
        mujoco.mj_forward(model, data)
        shown = np.isin(model.geom_bodyid, _subtree(model, body))
        model.geom_group[:] = np.where(shown, self._groups, _HIDDEN_GROUP)
        return geoms_box(model, data, np.flatnonzero(shown & (self._groups < 3)))  # drawn

    def _render(self, lookat: np.ndarray, distance: float, azimuth: float,
                elevation: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rgb, mask, depth) from a free camera."""
        camera = mujoco.MjvCamera()
        camera.lookat[:] = lookat
        camera.distance, camera.azimuth, camera.elevation = distance, azimuth, elevation
        renderer = self._renderer
        renderer.update_scene(self.data, camera, self._option)
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SKYBOX] = 0
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
        rgb = renderer.render().copy()
        renderer.enable_segmentation_rendering()
        mask = renderer.render()[..., 0] >= 0
        renderer.disable_segmentation_rendering()
        renderer.enable_depth_rendering()
        depth = renderer.render().copy()
        renderer.disable_depth_rendering()
        return rgb, mask, depth

    def view(self, appearance: Appearance) -> PropView:
        """Render ``appearance``'s body alone (oblique and from above)."""
        low, high = self._isolate(appearance)
        try:
            centre, radius = (low + high) / 2, float(np.linalg.norm(high - low)) / 2
            fovy = np.deg2rad(self.model.vis.global_.fovy)
            distance = 1.1 * radius / np.sin(fovy / 2)
            oblique, oblique_mask, _ = self._render(centre, distance, VIEW_AZIMUTH,
                                                    VIEW_ELEVATION)
            top, top_mask, depth = self._render(centre, distance, 90.0, -90.0)
        finally:
            self.model.geom_group[:] = self._groups
        camera_height = centre[2] + distance
        heights = np.where(top_mask, camera_height - depth - low[2], np.nan)
        oblique[~oblique_mask] = _BACKDROP
        top[~top_mask] = _BACKDROP
        return PropView(oblique, oblique_mask, top, top_mask, heights, high - low)


def prop_views(entries: Sequence[Appearance], size: int = 192,
               step: Callable[[Appearance], None] | None = None) -> list[PropView]:
    """Render each of ``entries`` alone (one scene per task), calling ``step`` after each."""
    views: list[PropView] = []
    renderers: dict[str, PropRenderer] = {}
    try:
        for entry in entries:
            if entry.task not in renderers:
                for old in renderers.values():
                    old.close()
                renderers = {entry.task: PropRenderer(entry.task, size)}
            views.append(renderers[entry.task].view(entry))
            if step is not None:
                step(entry)
    finally:
        for renderer in renderers.values():
            renderer.close()
    return views


def _crop(view: PropView, margin: int = 6) -> Image.Image:
    """The oblique view cut to the object plus ``margin`` pixels."""
    rows, cols = np.nonzero(view.oblique_mask)
    if rows.size == 0:
        return Image.fromarray(view.oblique)
    h, w = view.oblique_mask.shape
    top, bottom = max(rows.min() - margin, 0), min(rows.max() + margin + 1, h)
    left, right = max(cols.min() - margin, 0), min(cols.max() + margin + 1, w)
    return Image.fromarray(view.oblique[top:bottom, left:right])


def _caption(entry: Appearance, view: PropView, width: int) -> list[str]:
    """Name, colour and noun, size, then the other words (wrapped to ``width`` characters)."""
    size = " x ".join(f"{100 * v:.0f}" for v in view.extents)
    head = f"{entry.colour} {entry.noun}" if entry.colour else entry.noun
    lines = [entry.name, head, f"{size} cm"]
    return lines + textwrap.wrap(", ".join(entry.words), width)[:2]


def render_catalogue_sheet(entries: Sequence[Appearance] | None = None, tile: int = 150,
                           columns: int = 8,
                           step: Callable[[Appearance], None] | None = None) -> np.ndarray:
    """The contact sheet (H, W, 3) uint8 of ``entries`` (default: every
    :func:`~agentic_env.tasks.appearance.appearances` entry): ``columns`` tiles a row, each
    object scaled to fit ``tile`` pixels, its caption under it and its task above each
    task's first tile. ``step`` is called after each object is rendered."""
    entries = list(entries) if entries is not None else appearances()
    views = prop_views(entries, size=2 * tile, step=step)
    caption_height, header = 72, 16
    rows = -(-len(entries) // columns)
    cell_w, cell_h = tile + 12, header + tile + caption_height
    sheet = Image.new("RGB", (columns * cell_w + 12, rows * cell_h + 12), _PAPER)
    draw = ImageDraw.Draw(sheet)
    small, bold = label_font(11), label_font(12)
    previous = None
    for index, (entry, view) in enumerate(zip(entries, views, strict=True)):
        x = 12 + (index % columns) * cell_w
        y = 6 + (index // columns) * cell_h
        if entry.task != previous:
            draw.text((x, y), entry.task.upper(), fill=(150, 40, 40), font=bold)
            previous = entry.task
        image = _crop(view)
        image.thumbnail((tile, tile), Image.Resampling.LANCZOS)
        box = Image.new("RGB", (tile, tile), _BACKDROP)
        box.paste(image, ((tile - image.width) // 2, (tile - image.height) // 2))
        sheet.paste(box, (x, y + header))
        for line_index, line in enumerate(_caption(entry, view, tile // 6)):
            draw.text((x, y + header + tile + 2 + 13 * line_index), line,
                      fill=(0, 0, 0) if line_index == 0 else (70, 70, 70),
                      font=bold if line_index == 0 else small)
    return np.asarray(sheet)
