"""Reproducible disturbances attached to primitive events (AgenticLab appendix B-C).

The paper's protocols move the target object during the first pick (a misgrasp), move the
placement location during the final place, and, for stacking, move the target block during
the first grasp. Added here: a lighting change, an occluder entering the shoulder view and a
small bump of the shoulder camera. Each :class:`DisturbanceSpec` names the primitive and its
occurrence that triggers it; random choices (directions) come from the env's seeded RNG, so a
trial spec replays them exactly. Every applied disturbance is reported in
``info["disturbances"]``.

This module acts on the simulator (privileged): it is the harness's hand, not the agent's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import mujoco
import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.rotations import yaw_quat
from agentic_env.sim.state import (
    SceneState,
    body_box,
    free_body_names,
    holding,
    shift_free_body,
)

#: Kinds of disturbance and the default magnitude of each (units in :class:`DisturbanceSpec`).
KINDS: dict[str, float] = {
    "move_target": 0.06,
    "move_place_location": 0.08,
    "lighting_change": 0.4,
    "occluder": 0.35,
    "camera_bump": 2.0,
}
#: Name of the occluder body added to every scene (parked under the floor until used).
OCCLUDER = "occluder"
_PARKED = np.array([0.0, 0.0, -2.0])


@dataclass(frozen=True)
class DisturbanceSpec:
    """One disturbance.

    Attributes:
        kind: one of :data:`KINDS`.
        primitive: the primitive whose execution triggers it (``pick``, ``place``, ...).
        occurrence: which execution of that primitive (1 = first). ``-1`` means the last one
            of the episode's reference plan (e.g. the final place); the env resolves it.
        magnitude: ``move_target`` / ``move_place_location``: displacement, metres;
            ``lighting_change``: relative change of the key light's intensity (0.4 = -40 %,
            the sign is drawn); ``occluder``: fraction of the way from the shoulder camera to
            the workspace centre where the occluder stands; ``camera_bump``: rotation, degrees
            (plus a 1 cm shift). 0 selects the default of the kind.
    """

    kind: str
    primitive: str = "pick"
    occurrence: int = 1
    magnitude: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidConfigError(
                f"unknown disturbance {self.kind!r}; valid: {', '.join(KINDS)}"
            )
        if self.occurrence == 0 or self.occurrence < -1:
            raise InvalidConfigError("disturbance occurrence is 1, 2, ... or -1 (the last)")

    @property
    def size(self) -> float:
        """The magnitude, with the kind's default for 0."""
        return self.magnitude or KINDS[self.kind]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | DisturbanceSpec) -> DisturbanceSpec:
        """Inverse of :meth:`to_dict` (specs pass through)."""
        return data if isinstance(data, DisturbanceSpec) else cls(**data)


def add_occluder(spec: mujoco.MjSpec) -> None:
    """Add the occluder: a grey 30 x 30 cm board, static, parked under the floor."""
    body = spec.worldbody.add_body(name=OCCLUDER, pos=_PARKED)
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.15, 0.01, 0.15],
                  rgba=[0.45, 0.45, 0.47, 1.0], contype=0, conaffinity=0)


class DisturbanceRunner:
    """Arms the episode's disturbances and fires them during primitives.

    Args:
        specs: the episode's disturbances (``occurrence`` -1 already resolved).
        scene: privileged simulator access.
        rng: the episode's RNG (seeded by the env).
    """

    def __init__(self, specs: list[DisturbanceSpec], scene: SceneState,
                 rng: np.random.Generator) -> None:
        self.specs = specs
        self._scene = scene
        self._rng = rng
        self._counts: dict[str, int] = {}
        self._armed: list[tuple[DisturbanceSpec, Callable[[], bool]]] = []
        self.applied: list[dict[str, Any]] = []

    def primitive_started(self, name: str, pose: np.ndarray | None) -> None:
        """Count the primitive; arm the disturbances it triggers.

        ``pose`` is the primitive's target TCP pose (base frame), if it has one.
        """
        self._counts[name] = self._counts.get(name, 0) + 1
        for spec in self.specs:
            if spec.primitive == name and spec.occurrence == self._counts[name]:
                self._arm(spec, pose)

    def _arm(self, spec: DisturbanceSpec, pose: np.ndarray | None) -> None:
        if spec.kind in ("move_target", "move_place_location") and pose is not None:
            target = pose[:3, 3].copy()
            radius = 0.05 if spec.kind == "move_target" else 0.12
            height = 0.06 if spec.kind == "move_target" else 0.15
            self._armed.append((spec, lambda: self._tcp_near(target, radius, height)))
        else:
            self._armed.append((spec, lambda: True))

    def _tcp_near(self, target: np.ndarray, radius: float, height: float) -> bool:
        data, model = self._scene.data, self._scene.model
        tcp = data.site_xpos[model.site("robot/gripper/tcp").id] - self._scene.base_pos
        return bool(np.linalg.norm(tcp[:2] - target[:2]) < radius
                    and tcp[2] < target[2] + height)

    def control_step(self, pose: np.ndarray | None) -> None:
        """Fire armed disturbances whose condition holds (call after every control period)."""
        still_armed = []
        for spec, condition in self._armed:
            if condition():
                self.applied.append(self._fire(spec, pose))
            else:
                still_armed.append((spec, condition))
        self._armed = still_armed

    def _fire(self, spec: DisturbanceSpec, pose: np.ndarray | None) -> dict[str, Any]:
        handler = {
            "move_target": self._move_target,
            "move_place_location": self._move_place_location,
            "lighting_change": self._lighting_change,
            "occluder": self._occluder,
            "camera_bump": self._camera_bump,
        }[spec.kind]
        details = handler(spec, pose)
        mujoco.mj_forward(self._scene.model, self._scene.data)
        return {**spec.to_dict(), "sim_time": float(self._scene.data.time), **details}

    def _direction(self) -> np.ndarray:
        angle = self._rng.uniform(0.0, 2.0 * np.pi)
        return np.array([np.cos(angle), np.sin(angle), 0.0])

    def _nearest_free_body(self, point: np.ndarray) -> str:
        """The free body whose centre is nearest to ``point`` (3,), base frame."""
        names = free_body_names(self._scene.model)
        distances = [np.linalg.norm(self._scene.body_position(n) - point) for n in names]
        return names[int(np.argmin(distances))]

    def _move_target(self, spec: DisturbanceSpec, pose: np.ndarray | None) -> dict[str, Any]:
        assert pose is not None
        name = self._nearest_free_body(pose[:3, 3])
        shift = self._direction() * spec.size
        shift_free_body(self._scene, name, shift)
        return {"body": name, "shift": shift.tolist()}

    def _move_place_location(self, spec: DisturbanceSpec,
                             pose: np.ndarray | None) -> dict[str, Any]:
        """Shift the fixture under the place pose with everything resting on or in it.

        Without a fixture there, the topmost object under the place pose (not the held one)
        is shifted; a place on the bare table has nothing to move.
        """
        assert pose is not None
        model, scene = self._scene.model, self._scene
        point = pose[:3, 3]
        shift = self._direction() * spec.size
        for body in range(1, model.nbody):
            name = model.body(body).name
            if (model.body_parentid[body] != 0 or model.body_jntnum[body] != 0 or not name
                    or name == OCCLUDER or not _has_colliding_geoms(model, body)):
                continue
            box = body_box(scene, name)
            if not box.contains_xy(point, 0.01):
                continue
            carried = [other for other in free_body_names(model)
                       if box.contains_xy(scene.body_position(other), 0.01)
                       and body_box(scene, other).low[2] < box.high[2] + 0.3]
            model.body_pos[body] += shift
            for other in carried:
                shift_free_body(self._scene, other, shift)
            return {"body": name, "carried": carried, "shift": shift.tolist()}
        under = [other for other in free_body_names(model) if not holding(scene, other)
                 and body_box(scene, other).contains_xy(point, 0.0)]
        if not under:  # a place on the bare table: there is no location to move
            return {"body": None, "carried": [], "shift": [0.0, 0.0, 0.0]}
        name = max(under, key=lambda other: body_box(scene, other).high[2])
        shift_free_body(self._scene, name, shift)
        return {"body": name, "carried": [], "shift": shift.tolist()}

    def _lighting_change(self, spec: DisturbanceSpec, _pose: np.ndarray | None) -> dict:
        model = self._scene.model
        light = model.light("key_light").id
        factor = 1.0 + spec.size * (1.0 if self._rng.random() < 0.5 else -1.0)
        model.light_diffuse[light] = np.clip(model.light_diffuse[light] * factor, 0.0, 1.0)
        tilt = self._direction() * 0.4
        direction = model.light_dir[light] + tilt
        model.light_dir[light] = direction / np.linalg.norm(direction)
        return {"intensity_factor": factor, "direction": model.light_dir[light].tolist()}

    def _occluder(self, spec: DisturbanceSpec, _pose: np.ndarray | None) -> dict[str, Any]:
        model, data = self._scene.model, self._scene.data
        camera = model.camera("shoulder").id
        eye = data.cam_xpos[camera]
        centre = self._scene.base_pos + np.array([0.5, 0.0, 0.05])
        position = eye + spec.size * (centre - eye)
        body = model.body(OCCLUDER).id
        model.body_pos[body] = position
        forward = (centre - eye) / np.linalg.norm(centre - eye)
        yaw = np.arctan2(forward[1], forward[0])
        model.body_quat[body] = yaw_quat(yaw + np.pi / 2)
        return {"position": (position - self._scene.base_pos).tolist()}

    def _camera_bump(self, spec: DisturbanceSpec, _pose: np.ndarray | None) -> dict[str, Any]:
        model = self._scene.model
        camera = model.camera("shoulder").id
        axis = self._rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        bump = np.zeros(4)
        mujoco.mju_axisAngle2Quat(bump, axis, np.deg2rad(spec.size))
        rotated = np.zeros(4)
        mujoco.mju_mulQuat(rotated, bump, model.cam_quat[camera].copy())
        model.cam_quat[camera] = rotated
        shift = self._direction() * 0.01
        model.cam_pos[camera] += shift
        return {"axis": axis.tolist(), "degrees": spec.size, "shift": shift.tolist()}


def _has_colliding_geoms(model: mujoco.MjModel, body: int) -> bool:
    mine = model.geom_bodyid == body
    return bool(np.any(mine & ((model.geom_contype != 0) | (model.geom_conaffinity != 0))))


