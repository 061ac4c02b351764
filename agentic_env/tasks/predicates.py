"""Symbolic state from simulator geometry (privileged: scoring and the scripted expert only).

Every predicate reads body poses and geom boxes from a :class:`SceneState`; heights are in the
robot base frame, whose z = 0 plane is the table top. Tolerances are fields of
:class:`Tolerances` and are part of the benchmark's definition of success:

* **on-top-of(a, b)**: a's lowest point is within ``contact_gap`` (12 mm) of b's highest
  point, and a's centre lies over b's footprint grown by ``footprint_margin`` (1 cm);
* **on-table(a)**: a's lowest point is within ``contact_gap`` of the table top;
* **in(a, region)**: a's centre lies inside the region's box (a container's interior);
* **holding(a)**: a touches a pad of each finger (the grasp the gripper reports);
* **clear(a)**: nothing is on top of a and a is not held;
* **hand-empty**: no object is held;
* **upright(a)**: a's body z axis is within ``upright_angle`` (15 deg) of vertical.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import mujoco
import numpy as np

from agentic_env.sim.state import Box, SceneState, body_box, holding


@dataclass(frozen=True)
class Tolerances:
    """Geometric tolerances of the predicates (metres, degrees)."""

    contact_gap: float = 0.012
    footprint_margin: float = 0.01
    upright_angle: float = 15.0


DEFAULT_TOLERANCES = Tolerances()


def lowest_point(scene: SceneState, body: str) -> float:
    """Exact height (base frame) of the lowest point of ``body``'s colliding geoms, metres.

    :func:`body_box` turns each geom's bounding box, which
    overestimates the extent of a tilted sphere, ellipsoid, capsule or cylinder; grasp heights
    need the true lowest point.
    """
    model, data = scene.model, scene.data
    body_id = model.body(body).id
    lowest = np.inf
    for geom in np.flatnonzero(model.geom_bodyid == body_id):
        if model.geom_contype[geom] == 0 and model.geom_conaffinity[geom] == 0:
            continue
        row = data.geom_xmat[geom].reshape(3, 3)[2]
        size = model.geom_size[geom]
        kind = model.geom_type[geom]
        if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
            half = size[0]
        elif kind == mujoco.mjtGeom.mjGEOM_BOX:
            half = float(np.sum(np.abs(row) * size))
        elif kind == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
            half = float(np.sqrt(np.sum((row * size) ** 2)))
        elif kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
            half = size[0] + size[1] * abs(row[2])
        elif kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
            half = size[1] * abs(row[2]) + size[0] * float(np.sqrt(max(0.0, 1 - row[2] ** 2)))
        else:  # meshes and others: their bounding box
            half = float(np.sum(np.abs(row) * model.geom_aabb[geom, 3:]))
        lowest = min(lowest, float(data.geom_xpos[geom, 2]) - half)
    return lowest - float(scene.base_pos[2])


def on_top_of(scene: SceneState, upper: str, lower: str,
              tol: Tolerances = DEFAULT_TOLERANCES) -> bool:
    """``upper`` rests on ``lower`` (see the module docstring)."""
    if upper == lower or holding(scene, upper):
        return False
    a, b = body_box(scene, upper), body_box(scene, lower)
    resting = abs(a.low[2] - b.high[2]) <= tol.contact_gap
    return resting and b.contains_xy(scene.body_position(upper), tol.footprint_margin)


def on_table(scene: SceneState, body: str, tol: Tolerances = DEFAULT_TOLERANCES) -> bool:
    """``body`` rests on the table top (z = 0) and is not held."""
    return body_box(scene, body).low[2] <= tol.contact_gap and not holding(scene, body)


def inside(scene: SceneState, body: str, region: Box) -> bool:
    """``body``'s centre lies in ``region`` (e.g. a container's interior) and it is not held."""
    return region.contains(scene.body_position(body)) and not holding(scene, body)


def hand_facts(scene: SceneState, bodies: Iterable[str]) -> set[str]:
    """PDDL facts of the hand: ``holding x`` for each held body of ``bodies``, else
    ``hand-empty``."""
    held = {f"holding {body}" for body in bodies if holding(scene, body)}
    return held or {"hand-empty"}


def hand_empty(scene: SceneState, bodies: Iterable[str]) -> bool:
    """No body of ``bodies`` is held."""
    return not any(holding(scene, body) for body in bodies)


def clear(scene: SceneState, body: str, others: Iterable[str],
          tol: Tolerances = DEFAULT_TOLERANCES) -> bool:
    """Nothing of ``others`` rests on ``body`` and ``body`` is not held."""
    if holding(scene, body):
        return False
    return not any(on_top_of(scene, other, body, tol) for other in others if other != body)


def tilt_degrees(scene: SceneState, body: str, axis: int = 2) -> float:
    """Angle between the body's ``axis`` (0=x, 1=y, 2=z) and the base-frame z axis, degrees."""
    direction = scene.body_rotation(body)[:, axis]
    return float(np.degrees(np.arccos(np.clip(direction[2], -1.0, 1.0))))


def upright(scene: SceneState, body: str, tol: Tolerances = DEFAULT_TOLERANCES) -> bool:
    """The body's z axis points up within ``tol.upright_angle``."""
    return tilt_degrees(scene, body) <= tol.upright_angle


