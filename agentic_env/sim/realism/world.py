"""The realistic world of one env: its camera device models and each episode's draws.

Per episode, from an RNG of its own seeded by the trial seed (so layouts and appearance do
not depend on it, and a trial replays the same world): the hand-eye calibration error of
each camera (agents get the calibration as solved, the world renders from the truth), every
object's contact parameters, and the gripper servo's position error. Per observation, from
the env's noise RNG: each camera's sensor effects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import CameraConfig
from agentic_env.sim.cameras import CameraRenderer
from agentic_env.sim.realism.calibration import believed_extrinsics, draw_extrinsic_error
from agentic_env.sim.realism.contact import (
    CONTACT_MODEL_FIELDS,
    ContactDraw,
    add_contact_pairs,
    apply_contact,
    draw_contact,
)
from agentic_env.sim.realism.depth_stereo import StereoDepthModel, StillStereoDepth
from agentic_env.sim.realism.depth_tof import TofDepthModel
from agentic_env.sim.realism.depth_tof_static import StaticTofDepth
from agentic_env.sim.realism.sensors import CameraSensor, make_sensor
from agentic_env.sim.realism.servo import ServoError, draw_servo_error
from agentic_env.sim.realism.surfaces import SurfaceMap, SurfaceSample, surface_patches

#: Model fields the realistic world changes per episode (restored at every reset).
WORLD_MODEL_FIELDS = CONTACT_MODEL_FIELDS
#: The realistic world's effects, each switchable on its own (to tell which one a failure
#: comes from): the cameras' device models, the hand-eye calibration error, and contact
#: (objects' mass, pad and table friction, centre of mass; the servo's position error).
WORLD_EFFECTS: tuple[str, ...] = ("sensors", "calibration", "contact")
#: Second entry of the episode world's RNG seed ``[trial seed, 3]`` (the layout uses the env's
#: RNG, the dressing ``[seed, 2]``, the disturbances ``[seed, 1]``).
_WORLD_STREAM = 3
#: Longest wait of :meth:`RealisticWorld.settle` for the objects to come to rest, seconds.
REST_TIMEOUT = 2.0
#: Free bodies slower than this are at rest: linear (m/s), angular (rad/s).
REST_SPEED = (0.002, 0.05)


@dataclass
class EpisodeWorld:
    """What the realistic world drew for one episode (privileged: harness and traces only).

    Attributes:
        extrinsic_errors: per camera name, the calibration error (4x4 rigid transform, see
            :func:`agentic_env.sim.realism.calibration.believed_extrinsics`).
        contact: every object's mass, pad and table friction and centre-of-mass offset,
            and every pair of objects' friction with each other.
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
        #: Per camera fixed to the world, the albedo of what it sees (set each episode by
        #: :meth:`see_surfaces`); other cameras' surfaces take their device's default.
        self.surfaces: dict[str, SurfaceMap] = {}
        #: Per camera fixed to the world with a ToF depth model, that model reusing the
        #: episode's static scene (set with :attr:`surfaces`).
        self.static_depth: dict[str, StaticTofDepth] = {}
        #: Per camera with a stereo depth model, that model reusing a still view's effects
        #: (set with the episode's units).
        self.still_depth: dict[str, StillStereoDepth] = {}
        #: Per camera, the last view's world-fixed surface patches: (exact depth, camera
        #: pose, the patches), reused while both stay the same.
        self._patch_views: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._patch_seed = 0

    def see_surfaces(self, model: mujoco.MjModel, data: mujoco.MjData,
                     renderers: list[CameraRenderer]) -> None:
        """Render, once per episode (after the layout settled), the static scene each camera
        fixed to the world sees, for its device model's albedo (:mod:`.surfaces`); nothing
        without the sensors effect."""
        self.surfaces, self.static_depth = {}, {}
        if "sensors" not in self.effects:
            return
        for renderer in renderers:
            if model.body_weldid[model.cam_bodyid[renderer.camera_id]] == 0:
                name = renderer.config.name
                self.surfaces[name] = SurfaceMap.of(model, *renderer.render_static(data))
                unit = self._units[name].depth_model
                if isinstance(unit, TofDepthModel):
                    self.static_depth[name] = StaticTofDepth(unit, self.surfaces[name])

    def prepare(self, spec: mujoco.MjSpec) -> None:
        """Add what the world's effects need to the scene before it is compiled: with
        contact, the explicit contact pairs of the pads with every object and of the objects
        with each other (:func:`~agentic_env.sim.realism.contact.add_contact_pairs`). Without
        contact the model stays the ideal world's."""
        if "contact" in self.effects:
            add_contact_pairs(spec)

    def settle(self, model: mujoco.MjModel, data: mujoco.MjData, dt: float,
               step: Callable[[], bool]) -> bool:
        """After the reset's own settling, with contact: run ``step`` (one control period of
        ``dt`` seconds, holding the robot; False when the simulation diverged) until every
        free body is at rest (:data:`REST_SPEED`), at most :data:`REST_TIMEOUT`. A drawn
        centre of mass turns a round or lying body to another rest pose than the layout's,
        and a trial begins with its objects at rest, as a real one does. False when a step
        diverged."""
        if "contact" not in self.effects:
            return True
        joints = np.flatnonzero(model.jnt_type == mujoco.mjtJoint.mjJNT_FREE)
        dofs = model.jnt_dofadr[joints][:, None] + np.arange(6)
        for _ in range(int(np.ceil(REST_TIMEOUT / dt))):
            velocity = data.qvel[dofs]
            if (np.all(np.linalg.norm(velocity[:, :3], axis=1) < REST_SPEED[0])
                    and np.all(np.linalg.norm(velocity[:, 3:], axis=1) < REST_SPEED[1])):
                return True
            if not step():
                return False
        return True

    def draw(self, model: mujoco.MjModel, seed: int) -> EpisodeWorld:
        """Draw the episode's world for trial ``seed`` and apply its contact to ``model``
        (compiled after :meth:`prepare`; its world fields must hold their defaults)."""
        rng = np.random.default_rng([int(seed), _WORLD_STREAM])
        errors = {name: draw_extrinsic_error(name, rng) for name in sorted(self.sensors)}
        contact = draw_contact(model, rng)
        servo = draw_servo_error(rng)
        # each episode a unit of each device (the Kinect's systematic depth error)
        self._units = {name: sensor.with_unit(rng) for name, sensor in sorted(
            self.sensors.items())}
        self._patch_seed = int(rng.integers(2**62))  # the world-fixed surface patches
        self.static_depth = {}  # of the last unit: rebuilt by see_surfaces
        self.still_depth = {name: StillStereoDepth(unit.depth_model)
                            for name, unit in self._units.items()
                            if isinstance(unit.depth_model, StereoDepthModel)}
        self._patch_views = {}
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
            surfaces = self.surfaces.get(camera)
            static = self.static_depth.get(camera)  # reads the surfaces' albedo itself
            unit = self._units[camera]
            sample = SurfaceSample(
                albedo=None if surfaces is None or static is not None
                else surfaces.albedo(depth),
                patch=self._patches(camera, depth, true_extrinsics)
                if unit.device == "d405" else None)
            rgb, depth = unit.apply(rgb, depth, rng, camera_velocity, sample,
                                    static or self.still_depth.get(camera))
        error = self.episode.extrinsic_errors.get(camera)
        extrinsics = (true_extrinsics if error is None
                      else believed_extrinsics(true_extrinsics, error, camera, flange_to_base))
        return rgb, depth, extrinsics

    def _patches(self, camera: str, depth: np.ndarray, camera_to_base: np.ndarray
                 ) -> np.ndarray:
        """The episode's world-fixed surface patches (:func:`.surfaces.surface_patches`) at
        each pixel of ``camera``'s exact ``depth`` (H, W, m) from pose ``camera_to_base``
        (4x4): the last view's own array while the depth and the pose stay the same."""
        last = self._patch_views.get(camera)
        if (last is not None and np.array_equal(last[1], camera_to_base)
                and np.array_equal(last[0], depth)):
            return last[2]
        patch = surface_patches(depth, self._units[camera].config.intrinsics, camera_to_base,
                                self._patch_seed)
        self._patch_views[camera] = (depth.copy(), np.array(camera_to_base), patch)
        return patch

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
