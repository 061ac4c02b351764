"""The realistic world of one env: its camera device models and each episode's draws.

Per episode, from an RNG of its own seeded by the trial seed (so layouts and appearance do
not depend on it, and a trial replays the same world): the hand-eye calibration error of
each camera (agents get the calibration as solved, the world renders from the truth), every
object's contact parameters, and the gripper servo's position error. Per observation, from
the env's noise RNG: each camera's sensor effects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import CameraConfig
from agentic_env.sim.realism.calibration import believed_extrinsics, draw_extrinsic_error
from agentic_env.sim.realism.contact import (
    CONTACT_MODEL_FIELDS,
    ContactDraw,
    apply_contact,
    draw_contact,
)
from agentic_env.sim.realism.sensors import CameraSensor, make_sensor
from agentic_env.sim.realism.servo import ServoError, draw_servo_error

#: Model fields the realistic world changes per episode (restored at every reset).
WORLD_MODEL_FIELDS = CONTACT_MODEL_FIELDS
#: The realistic world's effects, each switchable on its own (to tell which one a failure
#: comes from): the cameras' device models, the hand-eye calibration error, and contact
#: (objects' mass, friction, restitution, centre of mass; the servo's position error).
WORLD_EFFECTS: tuple[str, ...] = ("sensors", "calibration", "contact")
#: Second entry of the episode world's RNG seed ``[trial seed, 3]`` (the layout uses the env's
#: RNG, the dressing ``[seed, 2]``, the disturbances ``[seed, 1]``).
_WORLD_STREAM = 3


@dataclass
class EpisodeWorld:
    """What the realistic world drew for one episode (privileged: harness and traces only).

    Attributes:
        extrinsic_errors: per camera name, the calibration error (4x4 rigid transform, see
            :func:`agentic_env.sim.realism.calibration.believed_extrinsics`).
        contact: every object's mass, friction, restitution and centre-of-mass offset.
        servo: the gripper servo's position error.
    """

    extrinsic_errors: dict[str, np.ndarray] = field(default_factory=dict)
    contact: ContactDraw | None = None
    servo: ServoError | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: each camera's error (translation mm, rotation deg) and the
        contact and servo draws."""
        cameras = {}
        for name, error in self.extrinsic_errors.items():
            angle = np.arccos(np.clip((np.trace(error[:3, :3]) - 1.0) / 2.0, -1.0, 1.0))
            cameras[name] = {"translation_mm": round(float(np.linalg.norm(error[:3, 3])) * 1e3, 3),
                             "rotation_deg": round(float(np.degrees(angle)), 4)}
        return {"calibration_error": cameras,
                "contact": None if self.contact is None else self.contact.to_dict(),
                "servo": None if self.servo is None else self.servo.to_dict()}


class RealisticWorld:
    """The realistic world of one env: a sensor model per camera and per-episode draws.

    Args:
        cameras: the env's observation cameras (``shoulder``, ``wrist``).
        setting: ``lab``, ``kitchen`` or ``outdoor`` (exposure and white balance).
        effects: the effects in force (:data:`WORLD_EFFECTS`; ``None`` = all). Every episode
            draws all of them from the same stream, so a subset applies exactly the draws
            the whole world would.

    Raises:
        InvalidConfigError: an unknown effect (the message lists the valid ones).
    """

    def __init__(self, cameras: tuple[CameraConfig, ...], setting: str,
                 effects: tuple[str, ...] | None = None) -> None:
        effects = WORLD_EFFECTS if effects is None else tuple(effects)
        unknown = sorted(set(effects) - set(WORLD_EFFECTS))
        if unknown:
            raise InvalidConfigError(f"unknown world effects {unknown}; valid: "
                                     f"{', '.join(WORLD_EFFECTS)}")
        self.effects = frozenset(effects)
        #: Each camera's device model (nominal unit).
        self.sensors: dict[str, CameraSensor] = {cam.name: make_sensor(cam, setting)
                                                 for cam in cameras}
        self._units = dict(self.sensors)
        self.episode = EpisodeWorld()

    def draw(self, model: mujoco.MjModel, seed: int) -> EpisodeWorld:
        """Draw the episode's world for trial ``seed`` and apply its contact to ``model``
        (whose world fields must hold their defaults)."""
        rng = np.random.default_rng([int(seed), _WORLD_STREAM])
        errors = {name: draw_extrinsic_error(name, rng) for name in sorted(self.sensors)}
        contact = draw_contact(model, rng)
        servo = draw_servo_error(rng)
        # each episode a unit of each device (the Kinect's systematic depth error)
        self._units = {name: sensor.with_unit(rng) for name, sensor in sorted(
            self.sensors.items())}
        if "contact" in self.effects:
            apply_contact(model, contact)
        else:
            contact, servo = None, None
        if "calibration" not in self.effects:
            errors = {}
        self.episode = EpisodeWorld(errors, contact, servo)
        return self.episode

    def observe(self, camera: str, rgb: np.ndarray, depth: np.ndarray,
                true_extrinsics: np.ndarray, flange_to_base: np.ndarray,
                camera_velocity: np.ndarray, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The device's view of an exact render: (rgb, depth with 0 = no return, the
        extrinsics as calibrated (4x4, camera -> base)). ``flange_to_base`` (4x4) is the
        flange's pose of the same instant (the wrist camera's calibration rides on it)."""
        if "sensors" in self.effects:
            rgb, depth = self._units[camera].apply(rgb, depth, rng, camera_velocity)
        error = self.episode.extrinsic_errors.get(camera)
        extrinsics = (true_extrinsics if error is None
                      else believed_extrinsics(true_extrinsics, error, camera, flange_to_base))
        return rgb, depth, extrinsics

    @staticmethod
    def camera_velocity(model: mujoco.MjModel, data: mujoco.MjData, camera_id: int
                        ) -> np.ndarray:
        """Velocity (6,) of MuJoCo camera ``camera_id``'s OpenCV frame in that frame: linear
        (m/s) then angular (rad/s)."""
        velocity = np.zeros(6)
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_CAMERA, camera_id,
                                 velocity, 1)
        flip = np.array([1.0, -1.0, -1.0])  # MuJoCo camera axes -> OpenCV camera axes
        return np.concatenate([velocity[3:] * flip, velocity[:3] * flip])
