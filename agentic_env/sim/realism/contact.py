"""Contact and objects of the realistic world: per-episode mass, pad friction, restitution
and centre-of-mass offset of every free body, drawn from its material class.

The material of a body comes from its name (the ``[contact.bodies]`` glob patterns); each
material gives uniform ranges (``[contact.materials.<name>]``), each with its source. Only
the compiled model changes (:data:`CONTACT_MODEL_FIELDS`), never the MJCF builders, so names
and appearance stay as they are and the ``ideal`` world is untouched.

How the drawn numbers reach MuJoCo's contacts (its mixing rules: a geom of higher
``priority`` sets condim, friction, solref and solimp of its contacts; between equal
priorities condim and friction take the maximum and solref/solimp the ``solmix``-weighted
mean):

* every colliding geom of a free body gets the pads' priority (above the table, bins and
  scenery), its friction the drawn pad-against-material coefficient, and the pads' friction
  drops to the smallest drawn coefficient, so the maximum in a pad contact is the object's.
  The same coefficient also applies against the table, bins and other objects: MuJoCo has
  one coefficient per geom, and a pair table cannot be added to a compiled model;
* the pads keep their stiffness in their contacts: their ``solmix`` (1e6 against the
  objects' 1) makes their solref/solimp decide;
* restitution: against everything else the object's solref decides. It keeps the pads'
  stiffness 1/T^2 (T the pads' time constant) with the damping ratio zeta of the drawn
  restitution e, as ``(T / zeta, zeta)`` (MuJoCo's stiffness is
  1/(timeconst^2 dampratio^2), its damping 2/timeconst). For a linear spring-damper contact
  e = exp(-pi zeta / sqrt(1 - zeta^2)), so zeta = -ln e / sqrt(pi^2 + ln^2 e). (A weakly
  damped pad contact lets the squeezed fins chatter and drop a 50 g cube: measured.)
* condim is raised to the pads' (4: torsional friction) where it is lower;
* mass scales ``body_mass`` and ``body_inertia`` together (uniform density change); the
  centre-of-mass offset moves ``body_ipos`` inside the body-frame box of its colliding geoms.
  the constants derived from masses are recomputed (``mj_setConst``).
"""

from __future__ import annotations

import fnmatch
from dataclasses import asdict, dataclass
from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.workcell import ROBOT_PREFIX
from agentic_env.robot.constants import FINGER_PAD_GEOMS
from agentic_env.sim.realism import section
from agentic_env.sim.realism.servo import ServoError, draw_servo_error
from agentic_env.sim.state import free_body_names

#: Model fields apply_contact writes (the env restores them at every reset before drawing).
CONTACT_MODEL_FIELDS: tuple[str, ...] = (
    "body_mass", "body_inertia", "body_ipos", "body_sameframe", "body_simple", "geom_friction",
    "geom_priority", "geom_solref", "geom_solmix", "geom_condim",
    # recomputed from the masses by mj_setConst
    "body_subtreemass", "body_invweight0", "dof_invweight0", "dof_M0", "dof_length",
    "tendon_invweight0", "tendon_length0", "actuator_acc0", "actuator_length0", "bvh_aabb",
    "cam_mat0", "cam_poscom0", "light_dir0", "light_pos0", "light_poscom0",
)
#: Weights of the pads' and the objects' solref/solimp in their contacts (MuJoCo averages
#: them by solmix between geoms of equal priority): the pads' stiffness decides.
PAD_SOLMIX = 1e6
OBJECT_SOLMIX = 1.0
__all__ = [
    "CONTACT_MODEL_FIELDS", "ContactDraw", "ObjectContact", "ServoError", "apply_contact",
    "contact_params", "damping_ratio", "draw_contact", "draw_servo_error", "material_of",
]


def contact_params() -> dict[str, Any]:
    """The ``[contact]`` table (materials, body patterns, default material)."""
    return section("contact")


@dataclass(frozen=True)
class ObjectContact:
    """What one free body drew.

    Attributes:
        body: body name.
        material: its material class.
        mass: kilograms (the modelled mass times the drawn factor).
        friction: static friction coefficient of the pads against it.
        restitution: coefficient of restitution against a hard surface, 0..1.
        com: centre of mass in the body frame, metres (the modelled one plus the offset).
    """

    body: str
    material: str
    mass: float
    friction: float
    restitution: float
    com: tuple[float, float, float]


@dataclass(frozen=True)
class ContactDraw:
    """What was drawn for one episode; to_dict() is JSON-ready for the trace/info."""

    objects: tuple[ObjectContact, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"objects": [{body, material, mass, friction, restitution, com}, ...]}``."""
        return {"objects": [asdict(obj) | {"com": list(obj.com)} for obj in self.objects]}


def material_of(body: str) -> str:
    """Material class of the body named ``body`` (first matching pattern, else default)."""
    params = contact_params()
    for pattern, material in params["bodies"].items():
        if fnmatch.fnmatchcase(body, pattern):
            return str(material)
    return str(params["default_material"])


def damping_ratio(restitution: float) -> float:
    """Damping ratio of a linear spring-damper contact with coefficient of restitution
    ``restitution`` (0 < e <= 1; e = 1 gives 0)."""
    log_e = np.log(restitution)
    return float(-log_e / np.sqrt(np.pi**2 + log_e**2))


def _colliding_geoms(model: mujoco.MjModel, body: int) -> np.ndarray:
    ids = np.flatnonzero(model.geom_bodyid == body)
    return ids[(model.geom_contype[ids] != 0) | (model.geom_conaffinity[ids] != 0)]


def _half_extent(model: mujoco.MjModel, geoms: np.ndarray) -> np.ndarray:
    """Half extents (3,) of the body-frame box around ``geoms``, metres."""
    lows, highs = [], []
    for geom in geoms:
        rotation = np.empty(9)
        mujoco.mju_quat2Mat(rotation, model.geom_quat[geom])
        rotation = rotation.reshape(3, 3)
        centre = model.geom_pos[geom] + rotation @ model.geom_aabb[geom, :3]
        half = np.abs(rotation) @ model.geom_aabb[geom, 3:]
        lows.append(centre - half)
        highs.append(centre + half)
    return (np.max(highs, axis=0) - np.min(lows, axis=0)) / 2.0


def _uniform(rng: np.random.Generator, bounds: list[float]) -> float:
    return float(rng.uniform(bounds[0], bounds[1]))


def draw_contact(model: mujoco.MjModel, rng: np.random.Generator) -> ContactDraw:
    """Draw every free body's contact parameters from its material class.

    Call on the model's nominal fields (the env restores :data:`CONTACT_MODEL_FIELDS` first):
    masses and centres of mass are drawn around the current values. Bodies come in model
    order and each takes the same six draws, so a seed gives one draw.
    """
    materials = contact_params()["materials"]
    objects = []
    for name in free_body_names(model):
        body = model.body(name).id
        material = material_of(name)
        params = materials[material]
        scale = _uniform(rng, params["mass_scale"])
        friction = _uniform(rng, params["friction"])
        restitution = _uniform(rng, params["restitution"])
        unit = rng.uniform(-1.0, 1.0, 3)
        geoms = _colliding_geoms(model, body)
        extent = _half_extent(model, geoms) if geoms.size else np.zeros(3)
        com = model.body_ipos[body] + unit * params["com_offset"] * extent
        objects.append(ObjectContact(
            name, material, float(model.body_mass[body] * scale), friction, restitution,
            (float(com[0]), float(com[1]), float(com[2]))))
    return ContactDraw(tuple(objects))


def _pad_geoms(model: mujoco.MjModel) -> np.ndarray:
    return np.array([model.geom(ROBOT_PREFIX + name).id for name in FINGER_PAD_GEOMS])


def apply_contact(model: mujoco.MjModel, draw: ContactDraw) -> None:
    """Write ``draw`` into the model (see the module docstring); idempotent."""
    pads = _pad_geoms(model)
    priority = int(model.geom_priority[pads].max())
    timeconst = float(model.geom_solref[pads[0], 0])
    condim = int(model.geom_condim[pads].max())
    frictions = []
    for obj in draw.objects:
        body = model.body(obj.body).id
        model.body_inertia[body] *= obj.mass / model.body_mass[body]
        model.body_mass[body] = obj.mass
        model.body_ipos[body] = obj.com
        # the offset centre of mass leaves the body frame: no longer MuJoCo's "simple" body
        model.body_sameframe[body] = 0
        model.body_simple[body] = 0
        geoms = _colliding_geoms(model, body)
        zeta = damping_ratio(obj.restitution)
        model.geom_friction[geoms, 0] = obj.friction
        model.geom_priority[geoms] = priority
        model.geom_solref[geoms] = (timeconst / zeta, zeta)
        model.geom_solmix[geoms] = OBJECT_SOLMIX
        model.geom_condim[geoms] = np.maximum(model.geom_condim[geoms], condim)
        frictions.append(obj.friction)
    if frictions:
        model.geom_friction[pads, 0] = min(frictions)
        model.geom_solmix[pads] = PAD_SOLMIX
    # the constants derived from masses (inverse weights, subtree masses...): without them a
    # four times heavier object leaves the solver's regularisation that far off and diverges
    mujoco.mj_setConst(model, mujoco.MjData(model))
