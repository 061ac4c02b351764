"""Grounding geometry on constructed point clouds: yaw of faces, container spots, handles."""

from __future__ import annotations

import numpy as np
import pytest

from agentic_env.agents.perception import PointCloud
from agentic_env.agents.skills import holding, spots
from agentic_env.agents.skills.handles import handle_grasp
from agentic_env.contract.actions import top_down_pose


def _cloud(points: np.ndarray) -> PointCloud:
    n = len(points)
    return PointCloud(np.asarray(points, float), np.zeros((n, 3), np.uint8),
                      np.zeros((n, 2), int))


def _grid(x0: float, x1: float, y0: float, y1: float, z: float, step: float = 0.004):
    xs, ys = np.meshgrid(np.arange(x0, x1, step), np.arange(y0, y1, step))
    return np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, z)])


def test_face_yaw_recovers_a_turned_square() -> None:
    square = _grid(-0.02, 0.02, -0.02, 0.02, 0.0, 0.002)[:, :2]
    for degrees in (-30.0, 0.0, 17.0, 40.0):
        yaw = np.radians(degrees)
        turned = square @ np.array([[np.cos(yaw), np.sin(yaw)], [-np.sin(yaw), np.cos(yaw)]])
        found = np.degrees(spots.face_yaw(turned))
        assert abs((found - degrees + 45) % 90 - 45) < 2.5


def test_place_in_finds_the_empty_floor_away_from_walls() -> None:
    floor = _grid(0.40, 0.60, -0.10, 0.10, 0.01)
    walls = np.vstack([_grid(0.40, 0.60, -0.10, -0.09, 0.08), _grid(0.40, 0.60, 0.09, 0.10, 0.08),
                       _grid(0.40, 0.41, -0.10, 0.10, 0.08), _grid(0.59, 0.60, -0.10, 0.10, 0.08)])
    already = _grid(0.44, 0.52, -0.06, 0.02, 0.05)  # an item on the left half of the floor
    container = _cloud(np.vstack([floor, walls, already]))
    held = holding.HeldObject("cube", below_tcp=0.02, radius=0.025)
    tcp = np.array([0.5, 0.0, 0.3, 1.0, 0.0, 0.0, 0.0])
    pose, approach = spots.place_in(container, container, held, tcp)
    x, y, z = pose[:3, 3]
    assert 0.43 < x < 0.57 and 0.035 < y < 0.07  # the free part, clear of the walls
    assert abs(z - (0.01 + 0.02 + spots.CONTAINER_RELEASE_GAP)) < 0.004
    assert approach > 0.02  # comes down from above the walls


def test_place_in_keeps_the_hand_away_from_a_carcass_over_the_drawer() -> None:
    """An open drawer whose back still lies under the cabinet's top: the hand at release
    would be level with the carcass, so the spot keeps HAND_RADIUS from it."""
    floor = _grid(0.42, 0.66, 0.05, 0.35, 0.10)
    carcass_top = _grid(0.64, 0.94, 0.0, 0.46, 0.30)
    item = _grid(0.42, 0.53, 0.05, 0.35, 0.14)  # fills the front of the drawer
    drawer = _cloud(np.vstack([floor[floor[:, 0] >= 0.53], item]))
    scene = _cloud(np.vstack([floor, carcass_top]))
    held = holding.HeldObject("bottle", below_tcp=0.06, radius=0.025)
    tcp = np.array([0.4, 0.0, 0.3, 0.0, 1.0, 0.0, 0.0])
    pose, _ = spots.place_in(drawer, scene, held, tcp)
    assert pose[0, 3] < 0.64 - spots.HAND_RADIUS + 1e-6
    assert pose[0, 3] > 0.53 + held.radius - 0.01  # on the floor, not on the item


def test_place_in_a_full_bin_releases_above_what_fills_it() -> None:
    floor = _grid(0.40, 0.60, -0.10, 0.10, 0.01)
    walls = np.vstack([_grid(0.40, 0.60, -0.10, -0.09, 0.08), _grid(0.40, 0.60, 0.09, 0.10, 0.08),
                       _grid(0.40, 0.41, -0.10, 0.10, 0.08), _grid(0.59, 0.60, -0.10, 0.10, 0.08)])
    tall_box = _grid(0.44, 0.56, -0.06, 0.06, 0.10)  # taller than the walls, in the middle
    container = _cloud(np.vstack([floor, walls, tall_box]))
    held = holding.HeldObject("snack-pack", below_tcp=0.03, radius=0.06)  # fits nowhere
    pose, _ = spots.place_in(container, container, held, np.array([0.5, 0, 0.3, 0, 1, 0, 0]))
    x, y, z = pose[:3, 3]
    assert 0.40 < x < 0.60 and -0.10 < y < 0.10  # still over the bin
    support = z - 0.03 - spots.CONTAINER_RELEASE_GAP
    assert support >= 0.08 - 1e-6  # released above the walls and the box, not into them


def _bin(x0: float, x1: float, y0: float, y1: float) -> np.ndarray:
    """A bin's floor (z 1 cm) and 8 cm walls just outside x0..x1, y0..y1."""
    return np.vstack([_grid(x0, x1, y0, y1, 0.01),
                      _grid(x0 - 0.01, x1 + 0.01, y0 - 0.01, y0, 0.08),
                      _grid(x0 - 0.01, x1 + 0.01, y1, y1 + 0.01, 0.08),
                      _grid(x0 - 0.01, x0, y0, y1, 0.08), _grid(x1, x1 + 0.01, y0, y1, 0.08)])


def _yaw(pose: np.ndarray) -> float:
    return float(np.arctan2(pose[1, 0], pose[0, 0]))


def test_place_in_fills_a_bin_from_a_quarter_not_its_middle() -> None:
    container = _cloud(_bin(0.40, 0.60, -0.10, 0.10))
    held = holding.HeldObject("cube", below_tcp=0.02, radius=0.025)
    pose, _ = spots.place_in(container, container, held, np.array([0.5, 0, 0.3, 0, 1, 0, 0]))
    assert np.linalg.norm(pose[:2, 3] - [0.5, 0.0]) > 0.04  # room left for the next object
    middle, _ = spots.place_in(container, container, held,
                                   np.array([0.5, 0, 0.3, 0, 1, 0, 0]), pack=False)
    assert np.linalg.norm(middle[:2, 3] - [0.5, 0.0]) < 0.03  # an open drawer: its middle


def test_place_in_passes_over_a_spot_where_a_release_failed() -> None:
    container = _cloud(_bin(0.40, 0.60, -0.10, 0.10))
    held = holding.HeldObject("cube", below_tcp=0.02, radius=0.025)
    tcp = np.array([0.5, 0, 0.3, 0, 1, 0, 0])
    first, _ = spots.place_in(container, container, held, tcp)
    second, _ = spots.place_in(container, container, held, tcp, avoid=first[:2, 3][None])
    assert np.linalg.norm(second[:2, 3] - first[:2, 3]) >= spots.FAILED_SPOT_RADIUS
    assert second[2, 3] == pytest.approx(first[2, 3])  # an equally good spot, not a worse one


def test_place_in_turns_the_hand_so_the_fingers_clear_a_narrow_bins_walls() -> None:
    # 10 cm across: the object fits, but fingers closed across the bin would meet its walls
    container = _cloud(_bin(0.35, 0.65, -0.05, 0.05))
    held = holding.HeldObject("plum", below_tcp=0.02, radius=0.025, extents=(0.02, 0.03))
    tcp = np.array([0.5, 0.0, 0.3, 0.0, 1.0, 0.0, 0.0])  # yaw 0: the fingers close along y
    pose, _ = spots.place_in(container, container, held, tcp)
    closing = pose[:2, 1]  # the tool's y
    assert abs(closing[0]) > 0.99  # turned a quarter: the fingers close along the bin


def test_place_in_fits_a_long_object_into_a_lane_beside_a_tall_one() -> None:
    divider = _grid(0.48, 0.52, -0.10, 0.10, 0.10)  # a tall box standing across the middle
    container = _cloud(np.vstack([_bin(0.40, 0.60, -0.10, 0.10), divider]))
    held = holding.HeldObject("banana", below_tcp=0.02, radius=0.063, extents=(0.06, 0.02))
    pose, _ = spots.place_in(container, container, held, np.array([0.5, 0, 0.3, 0, 1, 0, 0]))
    assert abs(pose[2, 3] - (0.01 + 0.02 + spots.CONTAINER_RELEASE_GAP)) < 0.004  # floor
    assert not 0.47 < pose[0, 3] < 0.53  # in a lane, not on the box
    assert abs(np.cos(_yaw(pose))) < 0.01  # its long side along the lane (y)


def test_place_on_centres_on_the_target_top() -> None:
    cube = _cloud(np.vstack([_grid(0.48, 0.52, 0.08, 0.12, 0.04, 0.002)]))
    held = holding.HeldObject("cube", below_tcp=0.02, radius=0.02)
    tcp = np.array([0.3, 0.0, 0.3, 0.0, 1.0, 0.0, 0.0])  # turned by pi about x: yaw 0
    pose, _ = spots.place_on(cube, cube, held, tcp, align_faces=True)
    np.testing.assert_allclose(pose[:2, 3], [0.5, 0.1], atol=0.003)
    assert abs(pose[2, 3] - (0.04 + 0.02 + spots.RELEASE_GAP)) < 1e-3


def test_handle_grasp_approaches_into_the_front_panel() -> None:
    front = np.column_stack([np.full(400, 0.6), np.repeat(np.linspace(0.2, 0.4, 20), 20),
                             np.tile(np.linspace(0.1, 0.2, 20), 20)])
    bar = np.column_stack([np.full(40, 0.57), np.linspace(0.27, 0.33, 40), np.full(40, 0.15)])
    pose = handle_grasp(_cloud(bar), _cloud(np.vstack([front, bar])))
    np.testing.assert_allclose(pose[:3, 2], [1.0, 0.0, 0.0], atol=2e-3)  # into the cabinet
    np.testing.assert_allclose(pose[:3, 1], [0.0, 0.0, 1.0], atol=1e-9)  # jaws: vertical
    assert abs(pose[1, 3] - 0.3) < 0.005 and abs(pose[2, 3] - 0.15) < 0.005


def test_handle_grasp_finds_the_middle_of_a_bar_hidden_in_the_middle() -> None:
    """A finger in front of the bar hides its middle; the detected cluster is one visible
    end; the carcass top above and the floor far below must not tilt the front plane."""
    yaw = np.radians(20.0)  # the cabinet is turned: its front faces (-cos, -sin)
    normal = np.array([-np.cos(yaw), -np.sin(yaw), 0.0])
    along = np.array([-np.sin(yaw), np.cos(yaw), 0.0])
    origin = np.array([0.6, 0.25, 0.0])
    lateral, height = np.meshgrid(np.linspace(-0.15, 0.15, 40), np.linspace(0.15, 0.29, 20))
    front = origin + lateral.ravel()[:, None] * along + np.column_stack(
        [np.zeros((lateral.size, 2)), height.ravel()])
    top = _grid(0.45, 0.75, 0.1, 0.4, 0.30)
    floor = _grid(0.9, 1.5, -0.5, 0.5, -0.7, 0.02)
    bar_centre = origin + 0.03 * normal + np.array([0.0, 0.0, 0.23])
    offsets = np.linspace(-0.055, 0.055, 45)
    visible = np.abs(offsets) > 0.02  # the middle 4 cm hidden
    bar = bar_centre + offsets[visible, None] * along
    seen_end = bar[offsets[visible] > 0]
    surround = _cloud(np.vstack([front, top, floor, bar]))
    pose = handle_grasp(_cloud(seen_end), surround)
    np.testing.assert_allclose(pose[:3, 2], -normal, atol=0.01)
    assert np.linalg.norm(pose[:2, 3] - bar_centre[:2]) < 0.006
    assert abs(pose[2, 3] - 0.23) < 0.004


def test_measure_held_stops_at_the_gap_above_the_table() -> None:
    tcp = np.array([0.5, 0.0, 0.20, 0.0, 1.0, 0.0, 0.0])
    held_part = np.column_stack([np.full(30, 0.5), np.linspace(-0.01, 0.01, 30),
                                 np.linspace(0.15, 0.182, 30)])
    below = _grid(0.47, 0.53, -0.03, 0.03, 0.05)  # another object under the hand
    scene = _cloud(np.vstack([held_part, below]))
    held = holding.measure_held("x", scene, tcp, fallback=(scene, top_down_pose(tcp[:3])))
    assert abs(held.below_tcp - 0.05) < 0.003


def test_fold_grasp_keeps_the_wrist_near_its_current_yaw() -> None:
    from agentic_env.agents.perception import GraspCandidate

    candidate = GraspCandidate(top_down_pose(np.array([0.5, 0, 0.05]), 3.0), 0.03, 1.0, {})
    folded = holding.fold_grasp(candidate, 0.0)
    yaw = np.arctan2(folded.pose[1, 0], folded.pose[0, 0])
    assert abs(yaw - (3.0 - np.pi)) < 1e-9
    np.testing.assert_allclose(folded.pose[:3, 2], candidate.pose[:3, 2])


def test_measure_held_with_nothing_below_the_fingertips_uses_the_pre_grasp_cloud() -> None:
    tcp = np.array([0.5, 0.0, 0.30, 0.0, 1.0, 0.0, 0.0])
    far_below = _grid(0.47, 0.53, -0.03, 0.03, 0.05)  # only the table's clutter far below
    grasp = top_down_pose(np.array([0.5, 0.0, 0.03]))
    before = _cloud(np.vstack([_grid(0.49, 0.51, -0.01, 0.01, 0.0), _grid(0.49, 0.51, -0.01,
                                                                           0.01, 0.04)]))
    held = holding.measure_held("x", _cloud(far_below), tcp, fallback=(before, grasp))
    assert abs(held.below_tcp - 0.018) < 1e-9  # the fingertips are the lowest point
    assert 0.005 < held.radius < 0.02  # from the cloud seen before the grasp
