"""Reorienting from point clouds: object boxes and handles from constructed clouds, and
the place poses that turn the object, checked geometrically."""

from __future__ import annotations

import numpy as np
import pytest

from agentic_env.agents.skills import reorient
from agentic_env.contract.spaces import Workspace
from agentic_env.geometry.rotations import rotation_z
from agentic_env.robot.reorienting import handle_direction


def _cylinder(radius: float, z0: float, z1: float, step: float = 0.004) -> np.ndarray:
    """Surface points of a vertical cylinder (body frame, axis z) with its top disc."""
    angles = np.arange(0.0, 2 * np.pi, step / radius)
    heights = np.arange(z0, z1, step)
    ring = np.column_stack([np.cos(angles), np.sin(angles)]) * radius
    side = np.column_stack([np.tile(ring, (len(heights), 1)), np.repeat(heights, len(angles))])
    rs = np.arange(0.0, radius, step)
    disc = np.vstack([np.column_stack([np.cos(angles) * r, np.sin(angles) * r,
                                       np.full(len(angles), z1)]) for r in rs])
    return np.vstack([side, disc])


def _bottle() -> np.ndarray:
    """A bottle in its own frame: base at z = 0, body r 3 cm to 14 cm, neck r 1.2 cm."""
    return np.vstack([_cylinder(0.03, 0.0, 0.14), _cylinder(0.012, 0.14, 0.2)])


def _visible_from_above(points: np.ndarray) -> np.ndarray:
    return points[points[:, 2] >= np.percentile(points[:, 2], 30)]


def test_a_lying_bottle_is_found_lying_with_its_axis_from_base_to_neck() -> None:
    yaw = np.radians(30.0)
    lay = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])  # body z -> base x
    rotation = rotation_z(yaw) @ lay
    base = np.array([0.45, -0.1, 0.03])
    cloud = _visible_from_above(_bottle() @ rotation.T + base)
    estimate = reorient.estimate_object(cloud)
    assert estimate.lying and not estimate.handled
    np.testing.assert_allclose(estimate.axis, rotation[:, 2], atol=0.02)
    assert abs(estimate.half_extents[0] - 0.03) < 0.004  # radius from the height
    assert abs(2 * estimate.half_extents[2] - 0.2) < 0.01
    np.testing.assert_allclose(estimate.pose[:3, 3], base + 0.1 * rotation[:, 2], atol=0.01)


def test_an_upright_mug_shows_where_its_handle_points() -> None:
    body = _cylinder(0.03, 0.0, 0.09)
    handle = np.column_stack([np.full(20, 0.05), np.zeros(20), np.linspace(0.025, 0.065, 20)])
    turn = rotation_z(np.radians(-110.0))
    centre = np.array([0.5, 0.2, 0.0])
    cloud = np.vstack([body, handle]) @ turn.T + centre
    estimate = reorient.estimate_object(cloud)
    assert estimate.handled and not estimate.lying
    np.testing.assert_allclose(estimate.pose[:3, 0], turn[:, 0], atol=0.05)
    np.testing.assert_allclose(estimate.pose[:2, 3], centre[:2], atol=0.004)


def test_a_standing_box_is_grasped_across_its_narrow_side() -> None:
    xs, ys = np.meshgrid(np.arange(-0.055, 0.055, 0.004), np.arange(-0.0275, 0.0275, 0.004))
    top = np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, 0.16)])
    front = np.column_stack([np.repeat(np.arange(-0.055, 0.055, 0.004), 40), np.full(1120, -0.0275),
                             np.tile(np.linspace(0.0, 0.16, 40), 28)])
    turn = rotation_z(np.radians(25.0))
    cloud = np.vstack([top, front]) @ turn.T + np.array([0.48, 0.0, 0.0])
    estimate = reorient.estimate_object(cloud)
    assert not estimate.lying and not estimate.handled
    assert abs(abs(estimate.pose[:3, 0] @ turn[:, 0]) - 1.0) < 0.01  # x along the long side
    grasps = reorient.Reorienter(Workspace()).grasps(estimate, "on-side", np.zeros(6))
    assert grasps and abs(grasps[0].width - 0.055) < 0.006
    closing = grasps[0].pose[:3, 1]
    assert abs(closing @ turn[:, 1]) > 0.99  # across the narrow side
    assert -0.8 < grasps[0].pose[2, 2] < -0.5  # leaning (45 deg) for the turn


@pytest.fixture(scope="module")
def reorienter() -> reorient.Reorienter:
    return reorient.Reorienter(Workspace())


def _home_q() -> np.ndarray:
    from agentic_env.robot.constants import HOME_JOINT_POSITIONS
    return np.asarray(HOME_JOINT_POSITIONS, float)


def test_a_mug_place_turns_its_handle_to_the_asked_direction(reorienter) -> None:
    pose = np.eye(4)
    pose[:3, :3] = rotation_z(np.radians(140.0))
    pose[:3, 3] = [0.48, 0.1, 0.045]
    estimate = reorient.ObjectEstimate(pose, np.array([0.03, 0.03, 0.045]), False, True)
    grasp = reorient.Reorienter(Workspace()).grasps(estimate, "handle-right", _home_q())[0]
    lifted = grasp.pose.copy()
    lifted[2, 3] += 0.12
    places = reorienter.places(estimate, grasp.pose, lifted, "handle-right", _home_q())
    in_hand = np.linalg.inv(grasp.pose) @ pose
    placed = places[0] @ in_hand  # where the mug's frame ends at the release
    handle = placed[:2, 0] / np.linalg.norm(placed[:2, 0])
    np.testing.assert_allclose(handle, handle_direction("right", placed[:2, 3]), atol=1e-6)
    assert abs(placed[2, 3] - (0.045 + reorient.TURNED_RELEASE_GAP)) < 1e-6  # base just above
    np.testing.assert_allclose(placed[:2, 3], pose[:2, 3], atol=1e-6)  # its own spot


def test_a_lying_bottle_place_stands_it_upright_on_its_base(reorienter) -> None:
    pose = np.eye(4)
    pose[:3, :3] = rotation_z(np.radians(-60.0)) @ np.array(
        [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
    pose[:3, 3] = [0.47, -0.05, 0.03]
    estimate = reorient.ObjectEstimate(pose, np.array([0.03, 0.03, 0.1]), True, False)
    grasps = reorienter.grasps(estimate, "upright", _home_q())
    assert -0.8 < grasps[0].pose[2, 2] < -0.5  # the pick leans, the place leans back
    lifted = grasps[0].pose.copy()
    lifted[2, 3] += 0.12
    places = reorienter.places(estimate, grasps[0].pose, lifted, "upright", _home_q())
    assert places
    placed = places[0] @ np.linalg.inv(grasps[0].pose) @ pose
    np.testing.assert_allclose(placed[:3, 2], [0.0, 0.0, 1.0], atol=1e-6)  # base down
    assert abs(placed[2, 3] - (0.1 + reorient.TURNED_RELEASE_GAP)) < 1e-6
    assert places[0][2, 2] < -0.3  # the tool points down to set it down
