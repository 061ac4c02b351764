"""Setup sheets: a top-down diagram for a person laying out a sim trial on the real table.

The sheet shows the table in the robot base frame (x away from the robot, y to its left,
centimetres, a grid line every 10 cm), the robot base, every fixture and object with its name,
position (cm) and yaw (deg), and the instruction. It is drawn from a reset env, so it matches
the trial spec written beside it. The paired-trial runner (:mod:`agentic_env.harness.trial`)
and ``agentic-env setup-sheet`` draw it.
"""

from __future__ import annotations

import textwrap

import mujoco
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from agentic_env.envs.sim_env import SimEnv
from agentic_env.sim.state import Box, body_box, free_body_names

#: Drawing scale, pixels per metre (2 mm per pixel).
PIXELS_PER_METRE = 500
_MARGIN = 60
_SKIP_PREFIXES = ("robot/", "shoulder_camera", "occluder")


def label_font(size: int) -> ImageFont.ImageFont:
    """PIL's built-in scalable font at ``size`` pixels (no font files needed)."""
    return ImageFont.load_default(size=size)


def _rgb(rgba: np.ndarray) -> tuple[int, int, int]:
    return tuple(int(255 * c) for c in rgba[:3])


def _on_table(box: Box, extent: tuple[float, float, float, float]) -> bool:
    x0, x1, y0, y1 = extent
    centre = box.centre
    return x0 <= centre[0] <= x1 and y0 <= centre[1] <= y1 and box.high[2] > -0.01


def _drawable_bodies(env: SimEnv) -> list[tuple[str, Box, tuple[int, int, int], bool]]:
    """(name, box, colour, is round) of fixtures and objects on the table, bottom first."""
    scene, model = env.scene_state, env.model
    round_types = (int(mujoco.mjtGeom.mjGEOM_CYLINDER), int(mujoco.mjtGeom.mjGEOM_SPHERE))
    found = []
    for body in range(1, model.nbody):
        name = model.body(body).name
        if not name or model.body_parentid[body] != 0 or name.startswith(_SKIP_PREFIXES):
            continue
        geoms = np.flatnonzero(model.geom_bodyid == body)
        colliding = geoms[(model.geom_contype[geoms] | model.geom_conaffinity[geoms]) != 0]
        if colliding.size == 0:
            continue
        box = body_box(scene, name)
        if _on_table(box, env.scene_config.table_extent):
            first = colliding[0]
            found.append((name, box, _rgb(model.geom_rgba[first]),
                          int(model.geom_type[first]) in round_types))
    return sorted(found, key=lambda item: item[1].low[2])


def render_setup_sheet(env: SimEnv) -> np.ndarray:
    """Draw the current layout of ``env`` (after ``reset``) as an RGB image (H, W, 3)."""
    x0, x1, y0, y1 = env.scene_config.table_extent
    width = int((y1 - y0) * PIXELS_PER_METRE) + 2 * _MARGIN
    height = int((x1 - x0) * PIXELS_PER_METRE) + 2 * _MARGIN + 140
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)

    def to_pixel(x: float, y: float) -> tuple[float, float]:
        # robot at the bottom of the sheet, +x up, +y to the left
        return (_MARGIN + (y1 - y) * PIXELS_PER_METRE, _MARGIN + (x1 - x) * PIXELS_PER_METRE)

    draw.rectangle([to_pixel(x1, y1), to_pixel(x0, y0)], outline=(60, 60, 60), width=3,
                   fill=(246, 244, 238))
    small = label_font(12)
    for gx in np.arange(np.ceil(x0 * 10) / 10, x1 + 1e-9, 0.1):
        draw.line([to_pixel(gx, y1), to_pixel(gx, y0)], fill=(215, 215, 215))
        draw.text(to_pixel(gx, y1 + 0.08), f"x={gx * 100:.0f}", fill=(120, 120, 120), font=small)
    for gy in np.arange(np.ceil(y0 * 10) / 10, y1 + 1e-9, 0.1):
        draw.line([to_pixel(x1, gy), to_pixel(x0, gy)], fill=(215, 215, 215))
        px, py = to_pixel(x0 - 0.02, gy)
        draw.text((px - 12, py), f"{gy * 100:.0f}", fill=(120, 120, 120), font=small)
    base = to_pixel(0.0, 0.0)
    radius = 0.075 * PIXELS_PER_METRE
    draw.ellipse([base[0] - radius, base[1] - radius, base[0] + radius, base[1] + radius],
                 fill=(180, 185, 190), outline=(40, 40, 40))
    draw.text((base[0] - 22, base[1] - 6), "UR5e", fill=(0, 0, 0), font=small)

    scene, model = env.scene_state, env.model
    free = set(free_body_names(model))
    label = label_font(13)
    labels_at: dict[tuple[int, int], int] = {}
    for name, box, colour, round_shape in _drawable_bodies(env):
        corner_a, corner_b = to_pixel(box.high[0], box.high[1]), to_pixel(box.low[0], box.low[1])
        shape = draw.ellipse if round_shape else draw.rectangle
        if name in free:
            shape([corner_a, corner_b], fill=colour, outline=(0, 0, 0), width=2)
        else:
            shape([corner_a, corner_b], outline=colour, width=4)
        centre = scene.body_position(name)
        text = f"{name} ({centre[0] * 100:.1f}, {centre[1] * 100:.1f})"
        if name in free:
            rotation = scene.body_rotation(name)
            text += f" {np.degrees(np.arctan2(rotation[1, 0], rotation[0, 0])):.0f} deg"
            text += f", z {box.low[2] * 100:.1f}" if box.low[2] > 0.01 else ""
        key = (round(centre[0] * 50), round(centre[1] * 50))  # 2 cm cells: one label per pile
        line = labels_at.get(key, 0)  # stacked objects: one line each, bottom first
        labels_at[key] = line + 1
        draw.text((corner_b[0] + 3, corner_a[1] + 15 * line), text, fill=(0, 0, 0), font=label)

    footer = _MARGIN + (x1 - x0) * PIXELS_PER_METRE + 20
    instruction = env.task.instruction()
    lines = [f"{env.task.name} / {env.scene_config.setting} / seed {env.trial.seed}",
             *textwrap.wrap(f"Instruction ({instruction.category}): {instruction.text}", 95),
             "Positions: robot base frame, cm (x away from the robot, y to its left); "
             "yaw about vertical."]
    for index, line in enumerate(lines):
        draw.text((_MARGIN, footer + 20 * index), line, fill=(0, 0, 0), font=label_font(15))
    return np.asarray(image)

