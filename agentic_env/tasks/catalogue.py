"""A catalogue of everyday objects built from simple geometry, for sorting-style tasks.

Every entry is one free body (:class:`~agentic_env.sim.props.ObjectSpec`, possibly compound) whose
shape and colour make it recognisable in the cameras: round fruit are spheres or ellipsoids, a
banana is a lying capsule, a rubber duck is a yellow body with a head and an orange beak, a toy
car is a box on four wheels, a screwdriver is a handle with a thin metal shaft, and so on.
Masses are light and realistic (20-150 g).

Each entry carries its semantic labels (``category``: fruit / block / toy / tool / food,
``colour``, ``attributes`` such as ``edible``, ``round``, ``plaything``, ``long``) and how it
rests and is grasped:

* ``rest_quat``: the body orientation (w, x, y, z) when it lies on the table with yaw 0
  (lying objects turn their body z axis, along which capsules and cylinders lie, onto x);
* the **rest frame**: the body turned by ``rest_quat`` and then by a yaw about the vertical.
  Its x axis is the object's long horizontal axis, its y axis the one the fingers close along;
* ``grasp_offset``: where the TCP goes, in the rest frame (x, y relative to the body origin);
* ``grasp_span``: the object's width between the pads at the grasp point (``None``: the
  footprint's width across y; a curved banana is narrower where it is grasped);
* ``grasp_height``: TCP height above the object's lowest point (``None``: the body origin's
  height, raised so that the fingertips stay 8 mm above the lowest point).

Heights, footprints and grasp widths are computed from the geometry (:func:`rest_height`,
:func:`footprint`), so editing a shape keeps them consistent.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from agentic_env.geometry.rotations import quat_to_matrix
from agentic_env.robot.constants import TCP_TO_FINGERTIP
from agentic_env.sim.props import ObjectSpec, Part

#: Categories of :class:`CatalogueEntry`.
CATEGORIES: tuple[str, ...] = ("fruit", "block", "toy", "tool", "food")
#: Body orientation (w, x, y, z) that lays a body's z axis along x: +90 deg about y.
LYING = (float(np.cos(np.pi / 4)), 0.0, float(np.sin(np.pi / 4)), 0.0)
#: Fingertip clearance above the object's lowest point in a default grasp, metres.
FINGERTIP_CLEARANCE = 0.008

_RGBA: dict[str, tuple[float, float, float, float]] = {
    "red": (0.82, 0.10, 0.10, 1.0),
    "apple-red": (0.75, 0.08, 0.12, 1.0),
    "orange": (0.98, 0.50, 0.08, 1.0),
    "yellow": (0.95, 0.82, 0.10, 1.0),
    "lemon": (0.98, 0.90, 0.25, 1.0),
    "banana": (0.96, 0.84, 0.30, 1.0),
    "pink": (0.96, 0.58, 0.52, 1.0),
    "purple": (0.42, 0.15, 0.45, 1.0),
    "green": (0.15, 0.65, 0.20, 1.0),
    "blue": (0.12, 0.30, 0.85, 1.0),
    "dark-blue": (0.08, 0.15, 0.50, 1.0),
    "black": (0.06, 0.06, 0.07, 1.0),
    "steel": (0.70, 0.72, 0.75, 1.0),
    "white": (0.95, 0.95, 0.93, 1.0),
}


@dataclass(frozen=True)
class CatalogueEntry:
    """One kind of object (see the module docstring).

    Attributes:
        kind: the object's noun, e.g. ``apple``, ``rubber-duck`` (``-`` between words).
        category: one of :data:`CATEGORIES`.
        colour: the dominant colour's word (``red``, ``yellow``...).
        attributes: extra labels, e.g. ``edible``, ``round``, ``plaything``, ``long``.
        spec: the free body (named ``<kind>-1``).
        rest_quat: body orientation (w, x, y, z) when resting with yaw 0.
        grasp_offset: TCP (x, y) in the rest frame relative to the body origin, metres.
        grasp_span: width between the pads at the grasp point, metres, or ``None`` (the
            footprint's width across y).
        grasp_height: TCP height above the object's lowest point, metres, or ``None`` (see
            the module docstring).
    """

    kind: str
    category: str
    colour: str
    attributes: frozenset[str]
    spec: ObjectSpec
    rest_quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    grasp_offset: tuple[float, float] = (0.0, 0.0)
    grasp_span: float | None = None
    grasp_height: float | None = None

    @property
    def name(self) -> str:
        """Body name, also the PDDL object name (``apple-1``)."""
        return self.spec.name

    @property
    def noun(self) -> str:
        """The kind in words (``rubber duck``)."""
        return self.kind.replace("-", " ")

    @property
    def rest_rotation(self) -> np.ndarray:
        """(3, 3) body rotation when resting with yaw 0."""
        return quat_to_matrix(self.rest_quat)

    @functools.cached_property
    def rest_height(self) -> float:
        """Height of the body origin above the table when resting, metres."""
        return rest_height(self.spec, self.rest_quat)

    @property
    def footprint(self) -> tuple[np.ndarray, np.ndarray]:
        """(centre (2,), half extents (2,)) of the footprint in the rest frame, metres."""
        centre, half = self._footprint
        return centre.copy(), half.copy()

    @functools.cached_property
    def _footprint(self) -> tuple[np.ndarray, np.ndarray]:
        # layouts are sampled by rejection: computed once, not for every try (0.4 ms each)
        return footprint(self.spec, self.rest_quat)

    @property
    def length(self) -> float:
        """Extent along the rest frame's x axis, metres."""
        return float(2.0 * self.footprint[1][0])

    @property
    def grasp_width(self) -> float:
        """Width between the pads at the grasp point, metres."""
        if self.grasp_span is not None:
            return self.grasp_span
        return float(2.0 * self.footprint[1][1])

    @property
    def tcp_height(self) -> float:
        """TCP height above the object's lowest point for the top grasp, metres."""
        if self.grasp_height is not None:
            return self.grasp_height
        return max(self.rest_height, TCP_TO_FINGERTIP + FINGERTIP_CLEARANCE)


def _geoms(spec: ObjectSpec) -> list[Part]:
    return [Part(spec.shape, spec.size, rgba=spec.rgba, mass=spec.mass), *spec.parts]


def _half_extent(part: Part, rotation: np.ndarray, axis: int) -> float:
    """Half extent along world ``axis`` of ``part`` turned by ``rotation`` (its own frame)."""
    row = rotation[axis]
    size = part.size
    if part.shape == "sphere":
        return size[0]
    if part.shape == "box":
        return float(np.sum(np.abs(row) * np.asarray(size)))
    if part.shape == "ellipsoid":
        return float(np.sqrt(np.sum((row * np.asarray(size)) ** 2)))
    along = abs(row[2])  # capsule / cylinder axis = the part's z
    if part.shape == "capsule":
        return size[0] + size[1] * along
    return size[1] * along + size[0] * float(np.sqrt(max(0.0, 1.0 - along**2)))


def _extents(spec: ObjectSpec, quat: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned (low, high) corners (3,) of the object turned by ``quat``, body origin 0."""
    body = quat_to_matrix(quat)
    lows, highs = [], []
    for part in _geoms(spec):
        rotation = body @ quat_to_matrix(part.quat)
        centre = body @ np.asarray(part.pos, dtype=float)
        half = np.array([_half_extent(part, rotation, axis) for axis in range(3)])
        lows.append(centre - half)
        highs.append(centre + half)
    return np.min(lows, axis=0), np.max(highs, axis=0)


def rest_height(spec: ObjectSpec, quat: tuple[float, ...]) -> float:
    """Height of the body origin above the table when resting in orientation ``quat``."""
    return float(-_extents(spec, quat)[0][2])


def footprint(spec: ObjectSpec, quat: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(centre, half extents) in x, y of the object in orientation ``quat``, metres."""
    low, high = _extents(spec, quat)
    return (low[:2] + high[:2]) / 2.0, (high[:2] - low[:2]) / 2.0


def _entry(kind: str, category: str, colour: str, attributes: set[str], shape: str,
           size: tuple[float, ...], mass: float, rgba: str | None = None,
           parts: tuple[Part, ...] = (), **kwargs: object) -> CatalogueEntry:
    labels = {category, colour, *attributes}
    spec = ObjectSpec(f"{kind}-1", shape, size, _RGBA[rgba or colour], mass=mass,
                      attributes={"category": category, "colour": colour,
                                  "attributes": ",".join(sorted(attributes))},
                      parts=parts)
    return CatalogueEntry(kind, category, colour, frozenset(labels - {category, colour}),
                          spec, **kwargs)  # type: ignore[arg-type]


def _cube(colour: str) -> CatalogueEntry:
    return _entry(f"{colour}-cube", "block", colour, {"plaything", "square"}, "box",
                  (0.02, 0.02, 0.02), 0.04)


def _about_z(angle: float) -> tuple[float, float, float, float]:
    return (float(np.cos(angle / 2)), 0.0, 0.0, float(np.sin(angle / 2)))


def _about_x(angle: float) -> tuple[float, float, float, float]:
    return (float(np.cos(angle / 2)), float(np.sin(angle / 2)), 0.0, 0.0)


def hex_prism(inradius: float, half_length: float, z: float = 0.0,
              rgba: tuple[float, float, float, float] | None = None,
              mass: float = 0.01) -> tuple[Part, Part, Part]:
    """A hexagonal prism along the body z axis as three boxes turned by 0 and +-60 deg.

    One pair of flats faces the body x axis, which :data:`LYING` turns downwards, so a lying
    prism rests on a flat and cannot roll (a lying cylinder, a neutral equilibrium, creeps
    away from any disturbance: the props' small rolling friction only slows it).
    """
    half_side = inradius / np.sqrt(3.0)  # half the side of the hexagon
    return tuple(Part("box", (inradius, half_side, half_length), (0.0, 0.0, z), _about_z(a),
                      rgba, mass / 3)
                 for a in (0.0, np.pi / 3, -np.pi / 3))  # type: ignore[return-value]


def _wheel(x: float, y: float) -> Part:
    # a wheel's axle runs along the car's y: the cylinder's z turned onto y
    return Part("cylinder", (0.011, 0.004), (x, y, -0.014), _about_x(np.pi / 2),
                _RGBA["black"], 0.004)


def _banana() -> CatalogueEntry:
    """Three capsules bent in a flat arc (lying, the arc is horizontal: it cannot roll)."""
    radius, bend = 0.016, np.deg2rad(28)
    middle, end = 0.028, 0.020  # half lengths of the axis segments
    ends = []
    for sign in (1.0, -1.0):
        along = middle + end * np.cos(bend)
        ends.append(Part("capsule", (radius, end),
                         (0.0, end * np.sin(bend), sign * along),
                         _about_x(-sign * bend), None, 0.035))
    tip = middle + 2 * end * np.cos(bend) + 0.012
    stem = Part("cylinder", (0.005, 0.007), (0.0, 2 * end * np.sin(bend) + 0.002, tip),
                _about_x(-bend), (0.35, 0.25, 0.10, 1.0), 0.001)
    return _entry("banana", "fruit", "yellow", {"edible", "long"}, "capsule", (radius, middle),
                  0.05, rgba="banana", parts=(*ends, stem), rest_quat=LYING,
                  grasp_span=2 * radius)


def _screwdriver() -> CatalogueEntry:
    handle = hex_prism(0.014, 0.040, rgba=_RGBA["orange"], mass=0.045)
    main = handle[0]
    return _entry("screwdriver", "tool", "orange", {"long"}, "box", main.size, 0.015,
                  parts=(*handle[1:],
                         Part("capsule", (0.004, 0.036), (0.0, 0.0, 0.076),
                              rgba=_RGBA["steel"], mass=0.01),
                         Part("box", (0.0008, 0.0035, 0.006), (0.0, 0.0, 0.118),
                              rgba=_RGBA["steel"], mass=0.001)),
                  rest_quat=LYING)


def _marker() -> CatalogueEntry:
    cap = hex_prism(0.012, 0.016, 0.045, _RGBA["dark-blue"], 0.004)
    end = hex_prism(0.012, 0.004, -0.052, _RGBA["dark-blue"], 0.002)
    return _entry("marker", "tool", "blue", {"long"}, "cylinder", (0.0105, 0.050), 0.015,
                  parts=(*cap, *end), rest_quat=LYING)


#: Every object of the catalogue, by kind.
CATALOGUE: dict[str, CatalogueEntry] = {entry.kind: entry for entry in (
    # -- fruit (slightly oblate ellipsoids: a sphere rolls away at the slightest touch; these
    # rock back onto their flatter bottom) -------------------------------------------------
    _entry("apple", "fruit", "red", {"edible", "round"}, "ellipsoid", (0.031, 0.031, 0.028),
           0.12, rgba="apple-red",
           parts=(Part("cylinder", (0.0025, 0.006), (0.0, 0.0, 0.031),
                       rgba=(0.35, 0.22, 0.10, 1.0), mass=0.001),)),
    _entry("orange", "fruit", "orange", {"edible", "round"}, "ellipsoid",
           (0.030, 0.030, 0.027), 0.13),
    _entry("lemon", "fruit", "yellow", {"edible"}, "ellipsoid", (0.034, 0.025, 0.022), 0.08,
           rgba="lemon"),
    _banana(),
    _entry("peach", "fruit", "pink", {"edible", "round"}, "ellipsoid", (0.029, 0.029, 0.026),
           0.10),
    _entry("plum", "fruit", "purple", {"edible", "round"}, "ellipsoid", (0.024, 0.024, 0.021),
           0.06),
    # -- blocks ----------------------------------------------------------------------------
    *(_cube(colour) for colour in ("red", "green", "blue", "yellow")),
    # -- toys ------------------------------------------------------------------------------
    _entry("rubber-duck", "toy", "yellow", {"plaything"}, "ellipsoid", (0.032, 0.024, 0.022),
           0.025,
           parts=(Part("sphere", (0.016,), (0.018, 0.0, 0.028), mass=0.005),
                  Part("ellipsoid", (0.011, 0.007, 0.004), (0.038, 0.0, 0.026),
                       rgba=_RGBA["orange"], mass=0.001),
                  # a flat bottom, so the top-heavy duck cannot rock onto its side
                  Part("box", (0.020, 0.014, 0.003), (0.0, 0.0, -0.020), mass=0.005)),
           grasp_offset=(-0.008, 0.0)),
    _entry("toy-car", "toy", "blue", {"plaything"}, "box", (0.045, 0.024, 0.013), 0.07,
           parts=(Part("box", (0.022, 0.020, 0.009), (-0.006, 0.0, 0.022),
                       rgba=(0.70, 0.85, 0.95, 1.0), mass=0.005),
                  *(_wheel(x, y) for x in (-0.028, 0.028) for y in (-0.019, 0.019)))),
    _entry("ball", "toy", "green", {"plaything", "round"}, "ellipsoid", (0.025, 0.025, 0.023),
           0.04),
    # -- tools -----------------------------------------------------------------------------
    _screwdriver(),
    _marker(),
    # -- packaged food -----------------------------------------------------------------------
    _entry("snack-pack", "food", "green", {"edible", "packaged", "flat"}, "box",
           (0.050, 0.030, 0.014), 0.05),
    _entry("cracker-box", "food", "red", {"edible", "packaged"}, "box", (0.040, 0.020, 0.050),
           0.10, parts=(Part("box", (0.025, 0.0005, 0.025), (0.0, -0.0205, 0.005),
                             rgba=(0.95, 0.80, 0.30, 1.0), mass=0.001),),
           grasp_height=0.075),
    _entry("soda-can", "food", "red", {"edible", "packaged", "drink", "round"}, "cylinder",
           (0.029, 0.050), 0.149,
           parts=(Part("cylinder", (0.024, 0.001), (0.0, 0.0, 0.0505), rgba=_RGBA["steel"],
                       mass=0.001),),
           grasp_height=0.075),
)}


def entries(category: str | None = None) -> list[CatalogueEntry]:
    """Catalogue entries (of ``category`` if given), in catalogue order."""
    return [e for e in CATALOGUE.values() if category is None or e.category == category]
