"""Contact and objects of the realistic world: per-episode mass, friction and centre-of-mass
offset of every free body, drawn from its material class.

The material of a body comes from its name (the ``[contact.bodies]`` glob patterns); each
material gives its ranges (``[contact.materials.<name>]``), each with its source. Three
friction coefficients (static, dimensionless):

* against the fin-ray pads, per object: the pads' own coefficient (the ideal world's, the
  measured reference, ``assets/finray_gripper.xml``) times a factor drawn uniformly in
  ``1 +- pad_friction_spread`` of its material;
* against the table, bins and the robot's links, per object: its ``table_friction``, drawn
  uniformly in the material's published range against a dry table;
* between two objects, per pair of objects: drawn uniformly in the range of their two
  materials (``[contact.object_pairs]``, every pair of materials listed).

How the drawn numbers reach MuJoCo's contacts. MuJoCo mixes the parameters of a geom pair
(a geom of higher ``priority`` sets condim, friction, solref and solimp; between equal
priorities condim and friction take the maximum and solref/solimp the ``solmix``-weighted
mean) and has one friction coefficient per geom, so the three coefficients need explicit
contact pairs (``<pair>``, :func:`add_contact_pairs`, compiled into the realistic world's
model only). A pair replaces the contact MuJoCo would otherwise generate for its two geoms
and carries parameters of its own, written per episode on the compiled model
(``pair_friction``):

* pads against objects: a pair per pad and colliding object geom. It starts as the ideal
  world's pad contact (the pad's priority wins there: the pad's condim, friction, solref and
  solimp); a draw scales its sliding and torsional friction (torsion is sliding friction
  over the contact patch) and keeps the pad's stiffness;
* objects against objects: a pair per two colliding geoms of two free bodies. It starts as
  the ideal world's contact of the two (MuJoCo's equal-priority mix above); a draw sets its
  sliding friction and scales its torsional friction alike;
* objects against the rest: every colliding geom of a free body gets the pads' priority
  (above the table, bins, scenery and the robot's links) and its ``table_friction``, so its
  contacts with them take its coefficient. Their solref stays their own (critically damped,
  as in the ideal world);
* restitution is not modelled: a bounce needs a contact damping ratio below 1 (e = 0.5
  needs 0.22), and MuJoCo's soft contacts that weakly damped keep a resting block rocking on
  its corners and walking across the table (a 4 cm wooden cube: 15 mm in 3 s, sorting seed
  17; measured), a failure no real table has;
* mass scales ``body_mass`` and ``body_inertia`` together (uniform density change); the
  centre-of-mass offset moves ``body_ipos`` inside the body-frame box of its colliding geoms;
  the constants derived from masses are recomputed (``mj_setConst``).

Per episode only compiled-model fields change (:data:`CONTACT_MODEL_FIELDS`); the one
addition at build time is the contact pairs, in the realistic world's model only, so names
and appearance stay as they are and the ``ideal`` world is untouched.
"""

from __future__ import annotations

import fnmatch
from dataclasses import asdict, dataclass
from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.workcell import ROBOT_PREFIX
from agentic_env.errors import InvalidConfigError
from agentic_env.robot.constants import FINGER_PAD_GEOMS
from agentic_env.sim.realism import section
from agentic_env.sim.realism.servo import ServoError, draw_servo_error
from agentic_env.sim.state import free_body_names

#: Model fields apply_contact writes (the env restores them at every reset before drawing).
CONTACT_MODEL_FIELDS: tuple[str, ...] = (
    "body_mass", "body_inertia", "body_ipos", "body_sameframe", "body_simple", "geom_friction",
    "geom_priority", "pair_friction",
    # recomputed from the masses by mj_setConst
    "body_subtreemass", "body_invweight0", "dof_invweight0", "dof_M0", "dof_length",
    "tendon_invweight0", "tendon_length0", "actuator_acc0", "actuator_length0", "bvh_aabb",
    "cam_mat0", "cam_poscom0", "light_dir0", "light_pos0", "light_poscom0",
)
__all__ = [
    "CONTACT_MODEL_FIELDS", "ContactDraw", "ObjectContact", "PairContact", "ServoError",
    "add_contact_pairs", "apply_contact", "contact_params", "draw_contact", "draw_servo_error",
    "material_of", "object_friction_range", "pad_friction",
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
        pad_friction: static friction coefficient of the pads against it.
        table_friction: static friction coefficient against the table, bins and the robot's
            links.
        com: centre of mass in the body frame, metres (the modelled one plus the offset).
    """

    body: str
    material: str
    mass: float
    pad_friction: float
    table_friction: float
    com: tuple[float, float, float]


@dataclass(frozen=True)
class PairContact:
    """What one pair of free bodies drew.

    Attributes:
        bodies: the two body names, in model order.
        materials: their material classes, in the same order.
        friction: static friction coefficient of their contacts with each other.
    """

    bodies: tuple[str, str]
    materials: tuple[str, str]
    friction: float


@dataclass(frozen=True)
class ContactDraw:
    """What was drawn for one episode; to_dict() is JSON-ready for the trace/info.

    Attributes:
        objects: every free body's draw, in model order.
        pairs: every pair of free bodies' draw (model order, first body first).
    """

    objects: tuple[ObjectContact, ...]
    pairs: tuple[PairContact, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """``{"objects": [{body, material, mass, pad_friction, table_friction, com}, ...],
        "pairs": [{bodies, materials, friction}, ...]}``."""
        return {"objects": [asdict(obj) | {"com": list(obj.com)} for obj in self.objects],
                "pairs": [{"bodies": list(pair.bodies), "materials": list(pair.materials),
                           "friction": pair.friction} for pair in self.pairs]}


def material_of(body: str) -> str:
    """Material class of the body named ``body`` (first matching pattern, else default)."""
    params = contact_params()
    for pattern, material in params["bodies"].items():
        if fnmatch.fnmatchcase(body, pattern):
            return str(material)
    return str(params["default_material"])


def object_friction_range(first: str, second: str) -> list[float]:
    """``[low, high]`` static friction coefficient of an object of material ``first``
    touching one of material ``second`` (``[contact.object_pairs]``, symmetric).

    Raises:
        InvalidConfigError: the pair of materials is not listed.
    """
    key = "/".join(sorted((first, second)))
    pairs = contact_params()["object_pairs"]
    if key not in pairs:
        raise InvalidConfigError(f"no object-object friction for materials {key!r} in "
                                 "world.toml [contact.object_pairs]")
    return [float(value) for value in pairs[key]]


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


def _pad_geoms(model: mujoco.MjModel) -> np.ndarray:
    return np.array([model.geom(ROBOT_PREFIX + name).id for name in FINGER_PAD_GEOMS])


def pad_friction(model: mujoco.MjModel) -> float:
    """The pads' static friction coefficient in ``model`` (the ideal world's, the reference
    every material's pad friction is drawn around)."""
    return float(model.geom_friction[_pad_geoms(model), 0].max())


def draw_contact(model: mujoco.MjModel, rng: np.random.Generator) -> ContactDraw:
    """Draw every free body's contact parameters from its material class.

    Call on the model's nominal fields (the env restores :data:`CONTACT_MODEL_FIELDS` first):
    masses and centres of mass are drawn around the current values, pad friction around the
    pads' current coefficient. Bodies come in model order and each takes the same six
    draws, then each pair of bodies (model order) one, so a seed gives one draw.

    Raises:
        InvalidConfigError: two bodies' materials have no object-object friction.
    """
    materials = contact_params()["materials"]
    reference = pad_friction(model)
    objects = []
    for name in free_body_names(model):
        body = model.body(name).id
        material = material_of(name)
        params = materials[material]
        scale = _uniform(rng, params["mass_scale"])
        spread = params["pad_friction_spread"]
        pad = reference * _uniform(rng, [1.0 - spread, 1.0 + spread])
        table = _uniform(rng, params["table_friction"])
        unit = rng.uniform(-1.0, 1.0, 3)
        geoms = _colliding_geoms(model, body)
        extent = _half_extent(model, geoms) if geoms.size else np.zeros(3)
        com = model.body_ipos[body] + unit * params["com_offset"] * extent
        objects.append(ObjectContact(
            name, material, float(model.body_mass[body] * scale), pad, table,
            (float(com[0]), float(com[1]), float(com[2]))))
    pairs = []
    for index, first in enumerate(objects):
        for second in objects[index + 1:]:
            kinds = (first.material, second.material)
            pairs.append(PairContact((first.body, second.body), kinds,
                                     _uniform(rng, object_friction_range(*kinds))))
    return ContactDraw(tuple(objects), tuple(pairs))


def _free_bodies(spec: mujoco.MjSpec) -> list[mujoco.MjsBody]:
    return [body for body in spec.bodies
            if any(joint.type == mujoco.mjtJoint.mjJNT_FREE for joint in body.joints)]


def _collide(first: mujoco.MjsGeom, second: mujoco.MjsGeom) -> bool:
    """Whether MuJoCo's contype/conaffinity filter lets the two geoms touch."""
    return bool(first.contype & second.conaffinity or second.contype & first.conaffinity)


def _named(body: mujoco.MjsBody, geom: mujoco.MjsGeom) -> str:
    if not geom.name:
        raise InvalidConfigError(f"a geom of free body {body.name!r} has no name: a contact "
                                 "pair names its geoms")
    return str(geom.name)


def _add_pad_pairs(spec: mujoco.MjSpec, bodies: list[mujoco.MjsBody]) -> None:
    """A pair between every finger pad and every object geom it can touch, as the ideal
    world's pad contact: the pad's condim, friction, solref and solimp (the pad's priority
    wins there), the larger margin and gap of the two geoms."""
    pads = [spec.geom(ROBOT_PREFIX + name) for name in FINGER_PAD_GEOMS]
    for body in bodies:
        for geom in body.geoms:
            for pad in pads:
                if not _collide(pad, geom):
                    continue
                slide, spin, roll = pad.friction
                spec.add_pair(geomname1=pad.name, geomname2=_named(body, geom),
                              condim=pad.condim, friction=[slide, slide, spin, roll, roll],
                              solref=pad.solref, solimp=pad.solimp,
                              margin=max(pad.margin, geom.margin), gap=max(pad.gap, geom.gap))


def _add_object_pairs(spec: mujoco.MjSpec, bodies: list[mujoco.MjsBody]) -> None:
    """A pair between every two geoms of two free bodies that can touch, as the ideal
    world's contact of the two (equal priorities): the larger condim and friction of the
    two, their solref and solimp mixed by their ``solmix`` weights, the larger margin and
    gap."""
    for index, first in enumerate(bodies):
        for second in bodies[index + 1:]:
            for one in first.geoms:
                for other in second.geoms:
                    if not _collide(one, other):
                        continue
                    total = one.solmix + other.solmix
                    weight = one.solmix / total if total > 0.0 else 0.5  # MuJoCo's rule
                    slide, spin, roll = np.maximum(one.friction, other.friction)
                    spec.add_pair(
                        geomname1=_named(first, one), geomname2=_named(second, other),
                        condim=max(one.condim, other.condim),
                        friction=[slide, slide, spin, roll, roll],
                        solref=weight * np.asarray(one.solref)
                        + (1.0 - weight) * np.asarray(other.solref),
                        solimp=weight * np.asarray(one.solimp)
                        + (1.0 - weight) * np.asarray(other.solimp),
                        margin=max(one.margin, other.margin), gap=max(one.gap, other.gap))


def add_contact_pairs(spec: mujoco.MjSpec) -> None:
    """Add the realistic world's explicit contact pairs before compiling its model: every
    finger pad with every object geom it can touch, and every two geoms of two free bodies
    that can touch (a colliding geom passing the other's contype/conaffinity filter). Each
    pair starts as the ideal world's contact of its two geoms (see the module docstring).
    Object geoms must be named (every task's are).

    Raises:
        InvalidConfigError: an object geom without a name.
    """
    bodies = _free_bodies(spec)
    _add_pad_pairs(spec, bodies)
    _add_object_pairs(spec, bodies)


def apply_contact(model: mujoco.MjModel, draw: ContactDraw) -> None:
    """Write ``draw`` into the model (see the module docstring); idempotent.

    Raises:
        InvalidConfigError: a drawn object has no pad contact pairs (the model was compiled
            without :func:`add_contact_pairs`).
    """
    pads = _pad_geoms(model)
    priority = int(model.geom_priority[pads].max())
    slide, spin = model.geom_friction[pads[0], :2]
    for obj in draw.objects:
        body = model.body(obj.body).id
        model.body_inertia[body] *= obj.mass / model.body_mass[body]
        model.body_mass[body] = obj.mass
        model.body_ipos[body] = obj.com
        # the offset centre of mass leaves the body frame: no longer MuJoCo's "simple" body
        model.body_sameframe[body] = 0
        model.body_simple[body] = 0
        geoms = _colliding_geoms(model, body)
        pairs = np.flatnonzero(np.isin(model.pair_geom2, geoms) & np.isin(model.pair_geom1, pads))
        if geoms.size and not pairs.size:
            raise InvalidConfigError(f"{obj.body!r} has no pad contact pairs: compile the "
                                     "model after contact.add_contact_pairs(spec)")
        model.geom_friction[geoms, 0] = obj.table_friction
        model.geom_priority[geoms] = priority
        model.pair_friction[pairs, :2] = obj.pad_friction
        model.pair_friction[pairs, 2] = spin * obj.pad_friction / slide
    _apply_pair_friction(model, draw.pairs, pads)
    # the constants derived from masses (inverse weights, subtree masses...): without them a
    # four times heavier object leaves the solver's regularisation that far off and diverges
    mujoco.mj_setConst(model, mujoco.MjData(model))


def _apply_pair_friction(model: mujoco.MjModel, pairs: tuple[PairContact, ...],
                         pads: np.ndarray) -> None:
    """Write each drawn pair's coefficient into the contact pairs between its two bodies'
    geoms: sliding friction set, torsional scaled alike (idempotent: the ratio of the two
    stays the compiled one)."""
    drawn = {frozenset((model.body(pair.bodies[0]).id, model.body(pair.bodies[1]).id)):
             pair.friction for pair in pairs}
    objects = np.flatnonzero(~np.isin(model.pair_geom1, pads))
    first = model.geom_bodyid[model.pair_geom1[objects]]
    second = model.geom_bodyid[model.pair_geom2[objects]]
    for index, one, other in zip(objects, first, second, strict=True):
        friction = drawn.get(frozenset((int(one), int(other))))
        if friction is None:
            continue
        model.pair_friction[index, 2] *= friction / model.pair_friction[index, 0]
        model.pair_friction[index, :2] = friction
