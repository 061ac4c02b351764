"""Pictures for traces and for a VLM to judge: detections over an image, a grasp candidate
drawn over the local point cloud (AgenticLab Fig. 17) and numbered sheets of such pictures
for a model that chooses among several. PIL and numpy only."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from agentic_env.agents.perception.geometry import near_mask, voxel_downsample
from agentic_env.agents.perception.grasping import OPEN_MARGIN, GraspCandidate
from agentic_env.agents.perception.gripper import gripper_geometry
from agentic_env.agents.perception.pointcloud import PointCloud

_PALETTE = ((255, 64, 64), (64, 160, 255), (64, 220, 96), (255, 200, 0), (220, 64, 255),
            (0, 220, 220))
#: Colour the target's points are tinted with, and how strongly (0..1).
TARGET_TINT, TARGET_TINT_AMOUNT = np.array([255.0, 0.0, 255.0]), 0.45
#: Colours of the gripper parts in :func:`render_grasp` (RGBA).
PAD_COLOUR, PALM_COLOUR = (255, 140, 0, 190), (60, 70, 90, 110)
#: Half size of a point's square splat, m, for the target and for the scene (the scene is
#: seen at a grazing angle, its points up to ~8 mm apart).
TARGET_SPLAT, SCENE_SPLAT = 0.0035, 0.005
_MAX_SPLAT_PX = 8
#: Height of a panel's number in :func:`numbered_sheet`, pixels.
NUMBER_SIZE = 36
#: Scene points farther than this from the grasp (horizontally) are not drawn, m.
RENDER_RADIUS = 0.12


def draw_detections(rgb: np.ndarray, points: Sequence[Sequence[float]] = (),
                    boxes: Sequence[Sequence[float]] = (),
                    labels: Sequence[str] = ()) -> np.ndarray:
    """Draw pixel points ``(u, v)`` as circled crosses and boxes ``(u0, v0, u1, v1)`` on a copy
    of ``rgb`` (H, W, 3 uint8). ``labels`` name the boxes first, then the points, in order."""
    image = Image.fromarray(np.asarray(rgb, dtype=np.uint8))
    draw = ImageDraw.Draw(image)
    radius = max(3, image.height // 80)
    items = [("box", b) for b in boxes] + [("point", p) for p in points]
    for index, (kind, item) in enumerate(items):
        colour = _PALETTE[index % len(_PALETTE)]
        if kind == "box":
            u0, v0, u1, v1 = (float(x) for x in item)
            draw.rectangle((u0, v0, u1, v1), outline=colour, width=2)
            anchor = (u0 + 2, max(v0 - 12, 0))
        else:
            u, v = float(item[0]), float(item[1])
            draw.ellipse((u - radius, v - radius, u + radius, v + radius), outline=colour,
                         width=2)
            draw.line((u - 2 * radius, v, u + 2 * radius, v), fill=colour)
            draw.line((u, v - 2 * radius, u, v + 2 * radius), fill=colour)
            anchor = (u + radius + 2, v - radius - 10)
        if index < len(labels):
            text_box = draw.textbbox(anchor, labels[index])
            draw.rectangle(text_box, fill=(0, 0, 0))
            draw.text(anchor, labels[index], fill=colour)
    return np.asarray(image)


def _look_at(eye: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Camera->base pose (4x4) of an OpenCV camera at ``eye`` looking at ``centre``, image
    up as close to base +z as possible."""
    forward = (centre - eye) / np.linalg.norm(centre - eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([right, down, forward], axis=1)
    pose[:3, 3] = eye
    return pose


def _view(candidate: GraspCandidate, size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Intrinsics and extrinsics of the oblique view: 40 degrees above the horizontal,
    looking along the TCP x axis (so both fingers and the gap between them show), from the
    robot's side, 0.32 m from the TCP."""
    tcp = candidate.pose[:3, 3]
    across = candidate.pose[:3, 0].copy()
    across[2] = 0.0
    if np.linalg.norm(across) < 1e-6:
        across = np.array([1.0, 0.0, 0.0])
    across /= np.linalg.norm(across)
    if across @ -tcp < 0:  # view from the robot's side, where the cameras are
        across = -across
    elevation = np.deg2rad(40.0)
    eye = tcp + 0.32 * (np.cos(elevation) * across + np.array([0.0, 0.0, np.sin(elevation)]))
    width, height = size
    focal = 0.5 * height / np.tan(np.deg2rad(22.5))
    intrinsics = np.array([[focal, 0.0, width / 2.0], [0.0, focal, height / 2.0],
                           [0.0, 0.0, 1.0]])
    return intrinsics, _look_at(eye, tcp - np.array([0.0, 0.0, 0.02]))


def _splat(canvas: np.ndarray, cam: np.ndarray, colours: np.ndarray, sizes: np.ndarray,
           intrinsics: np.ndarray) -> None:
    """Z-buffered square splats of camera-frame points (N, 3) of half size ``sizes`` (N,) m
    onto ``canvas`` (H, W, 3). Of points at one depth on one pixel, the one drawn by the
    lower pixel offset (column, then row), then the earlier point, wins."""
    height, width = canvas.shape[:2]
    front = cam[:, 2] > 0.02
    cam, colours, sizes = cam[front], colours[front], sizes[front]
    if len(cam) == 0:
        return
    uv = cam[:, :2] / cam[:, 2:3] * intrinsics[[0, 1], [0, 1]] + intrinsics[:2, 2]
    radius = np.clip(np.round(sizes * intrinsics[0, 0] / cam[:, 2]), 1,
                     _MAX_SPLAT_PX).astype(int)
    corner = np.floor(uv).astype(int)
    reach = int(radius.max())
    index, depth, source, rank = [], [], [], []
    for size in np.unique(radius):  # the points of one splat size at once
        points = np.flatnonzero(radius == size)
        steps = np.arange(-size, size + 1)
        du, dv = (g.ravel() for g in np.meshgrid(steps, steps, indexing="ij"))
        u = corner[points, 0][None, :] + du[:, None]
        v = corner[points, 1][None, :] + dv[:, None]
        ok = (u >= 0) & (u < width) & (v >= 0) & (v < height)
        index.append((v * width + u)[ok])
        depth.append(np.broadcast_to(cam[points, 2], ok.shape)[ok])
        source.append(np.broadcast_to(points, ok.shape)[ok])
        offset = (du + reach) * (2 * reach + 1) + dv + reach
        rank.append(np.broadcast_to(offset[:, None], ok.shape)[ok])
    flat_index, flat_depth = np.concatenate(index), np.concatenate(depth)
    nearest = np.full(height * width, np.inf)
    np.minimum.at(nearest, flat_index, flat_depth)
    front = flat_depth == nearest[flat_index]
    # among the nearest at a pixel: the lowest offset rank, then the lowest point index
    tie = np.concatenate(rank)[front] * len(cam) + np.concatenate(source)[front]
    winner = np.full(height * width, np.iinfo(np.int64).max)
    np.minimum.at(winner, flat_index[front], tie)
    pixels = np.flatnonzero(np.isfinite(nearest))
    canvas.reshape(-1, 3)[pixels] = colours[winner[pixels] % len(cam)]


def _box_faces(centre: np.ndarray, half: np.ndarray) -> list[np.ndarray]:
    """The six faces (4 corners each, (4, 3)) of an axis-aligned box."""
    signs = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                      [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)
    corners = centre + signs * half
    faces = ((0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4), (2, 3, 7, 6), (1, 2, 6, 5),
             (0, 3, 7, 4))
    return [corners[list(face)] for face in faces]


def render_grasp(target: PointCloud, scene: PointCloud, candidate: GraspCandidate,
                 size: tuple[int, int] = (480, 480)) -> np.ndarray:
    """An RGB image (H, W, 3 uint8; ``size`` = (W, H)) of ``candidate`` over the local cloud.

    The scene points within ``RENDER_RADIUS`` of the grasp keep their colours, the target's
    points are tinted magenta, and the gripper is drawn as translucent boxes (pads orange,
    palm slate) opened to the width the pick primitive opens to; a yellow line marks the
    approach from the pre-grasp pose. The view is oblique (40 degrees above the horizontal),
    looking across the fingers from the robot's side; a caption gives width, tilt and score.
    """
    width_px, height_px = size
    intrinsics, extrinsics = _view(candidate, size)
    tcp = candidate.pose[:3, 3]
    canvas = np.full((height_px, width_px, 3), 245, np.uint8)
    local = voxel_downsample(scene, 0.002)
    near = np.linalg.norm(local.points[:, :2] - tcp[:2], axis=1) < RENDER_RADIUS
    local = local.select(near)
    if len(target):  # the target is drawn from its own cloud, tinted
        local = local.select(~near_mask(local.points, target.points, 0.003))
    tinted = (np.asarray(target.colors, float) * (1 - TARGET_TINT_AMOUNT)
              + TARGET_TINT * TARGET_TINT_AMOUNT).astype(np.uint8)
    points = np.concatenate([local.points, target.points])
    colours = np.concatenate([local.colors, tinted])
    rotation, position = extrinsics[:3, :3], extrinsics[:3, 3]
    sizes = np.concatenate([np.full(len(local), SCENE_SPLAT), np.full(len(target), TARGET_SPLAT)])
    _splat(canvas, (points - position) @ rotation, colours, sizes, intrinsics)

    image = Image.fromarray(canvas).convert("RGBA")
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    gripper = gripper_geometry()
    centres, halves = gripper.boxes(min(candidate.width + OPEN_MARGIN, gripper.max_opening))
    faces = []
    for index, (centre, half) in enumerate(zip(centres, halves, strict=True)):
        colour = PAD_COLOUR if index < gripper.n_finger_boxes else PALM_COLOUR
        for face in _box_faces(centre, half):
            base = face @ candidate.pose[:3, :3].T + tcp
            cam = (base - position) @ rotation
            if np.any(cam[:, 2] <= 0.02):
                continue
            faces.append((float(cam[:, 2].mean()), cam, colour))
    for _, cam, colour in sorted(faces, key=lambda f: -f[0]):
        uv = cam[:, :2] / cam[:, 2:3] * intrinsics[[0, 1], [0, 1]] + intrinsics[:2, 2]
        draw.polygon([tuple(p) for p in uv], fill=colour, outline=(20, 20, 20, 255))
    start = tcp - 0.1 * candidate.pose[:3, 2]
    line = np.stack([start, tcp])
    uv = ((line - position) @ rotation)
    uv = uv[:, :2] / uv[:, 2:3] * intrinsics[[0, 1], [0, 1]] + intrinsics[:2, 2]
    draw.line([tuple(p) for p in uv], fill=(230, 190, 0, 255), width=3)
    caption = (f"width {candidate.width * 1000:.0f} mm  tilt "
               f"{candidate.details.get('tilt_deg', 0.0):.0f} deg  score {candidate.score:.2f}")
    draw.rectangle(draw.textbbox((6, 6), caption), fill=(0, 0, 0, 200))
    draw.text((6, 6), caption, fill=(255, 255, 255, 255))
    return np.asarray(Image.alpha_composite(image, overlay).convert("RGB"))


def numbered_sheet(images: Sequence[np.ndarray], columns: int = 3,
                   first: int = 0) -> np.ndarray:
    """``images`` (each (H, W, 3) uint8; panels are the size of the largest, smaller ones
    padded white) tiled row by row, ``columns`` per row, each with its number (``first``,
    ``first + 1``, ...) in large white-on-black digits at its top right (clear of the
    caption :func:`render_grasp` writes at the top left), so a model can name a panel by its
    number. A 2-pixel grey line separates the panels.

    Raises:
        ValueError: no images, or ``columns`` < 1.
    """
    if not images or columns < 1:
        raise ValueError(f"numbered_sheet needs images and columns >= 1, got {len(images)} "
                         f"images and {columns} columns")
    height = max(int(np.asarray(i).shape[0]) for i in images)
    width = max(int(np.asarray(i).shape[1]) for i in images)
    gap = 2
    cols = min(columns, len(images))
    rows = -(-len(images) // cols)
    sheet = Image.new("RGB", (cols * width + (cols - 1) * gap, rows * height + (rows - 1) * gap),
                      (128, 128, 128))
    font = ImageFont.load_default(size=NUMBER_SIZE)
    for index, pixels in enumerate(images):
        panel = Image.new("RGB", (width, height), (255, 255, 255))
        panel.paste(Image.fromarray(np.asarray(pixels, dtype=np.uint8)), (0, 0))
        draw = ImageDraw.Draw(panel)
        label = str(first + index)
        anchor = (width - 8 - draw.textlength(label, font=font), 4)
        box = draw.textbbox(anchor, label, font=font)
        draw.rectangle((box[0] - 6, box[1] - 4, box[2] + 6, box[3] + 4), fill=(0, 0, 0))
        draw.text(anchor, label, fill=(255, 255, 255), font=font)
        row, col = divmod(index, cols)
        sheet.paste(panel, (col * (width + gap), row * (height + gap)))
    return np.asarray(sheet)
