"""``SceneView.hides``: whether something standing by a flat mark hides part of it from the
shoulder camera, by the shadow of its seen points' camera rays on the mark's plane."""

from __future__ import annotations

import numpy as np

from agentic_env.agents.perception import PointCloud
from agentic_env.agents.skills.scene import SceneView

#: The shoulder camera's position (base frame, m): behind and to the side of the board.
CAMERA = np.array([0.0, -0.5, 0.8])
#: A slot mark's middle on a board 8 mm high, and the radius its mark reaches, m.
MARK = np.array([0.55, 0.3, 0.008])
RADIUS = 0.04


def _view(block_centre: np.ndarray, height: float = 0.04, half: float = 0.02) -> SceneView:
    """A view whose obstacles are the top face of a cube of side ``2 * half`` standing on the
    board at ``block_centre`` (x, y)."""
    extrinsics = np.eye(4)
    extrinsics[:3, 3] = CAMERA
    view = SceneView({"shoulder_extrinsics": extrinsics})
    u = np.linspace(-half, half, 9)
    xs, ys = np.meshgrid(block_centre[0] + u, block_centre[1] + u)
    top = np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, MARK[2] + height)])
    view._obstacles["shoulder"] = PointCloud(top, np.zeros((len(top), 3), np.uint8),
                                             np.zeros((len(top), 2), np.int64))
    return view


def _towards_camera(distance: float) -> np.ndarray:
    """(x, y) ``distance`` m from the mark's middle along the line to the camera."""
    direction = (CAMERA[:2] - MARK[:2]) / np.linalg.norm(CAMERA[:2] - MARK[:2])
    return MARK[:2] + distance * direction


def test_a_block_between_the_camera_and_the_mark_hides_it() -> None:
    """A neighbour 6.5 cm away towards the camera (the slot pitch), and one 7.5 cm away (its
    nearest point 5.5 cm off, the visible middle pushed away from it): both hide the mark."""
    assert _view(_towards_camera(0.065)).hides(MARK, RADIUS)
    assert _view(_towards_camera(0.075)).hides(MARK, RADIUS)


def test_a_block_beyond_the_mark_or_far_off_hides_nothing() -> None:
    """The same block 6.5 cm beyond the mark (its shadow falls away from the mark), 15 cm
    towards the camera (its shadow ends short of the mark), or low (under 1.5 cm) does not."""
    assert not _view(_towards_camera(-0.065)).hides(MARK, RADIUS)
    assert not _view(_towards_camera(0.15)).hides(MARK, RADIUS)
    assert not _view(_towards_camera(0.065), height=0.01).hides(MARK, RADIUS)
    assert not _view(_towards_camera(0.065)).hides(MARK, 0.0)
