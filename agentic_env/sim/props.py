"""Props built from simple geometry: free objects (cubes, cylinders, spheres...), static bins and
round containers (pots, bowls).

Each builder adds one body to an ``MjSpec`` worldbody. Sizes are metres, masses kilograms,
colours RGBA in 0..1. Object contacts are stiffer than MuJoCo's default (solref 5 ms) so a
finger landing on an object cannot ram it into the table and launch it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import mujoco
import numpy as np

from agentic_env.errors import InvalidConfigError

Shape = Literal["box", "cylinder", "sphere", "capsule", "ellipsoid"]
_GEOM_TYPES = {
    "box": mujoco.mjtGeom.mjGEOM_BOX,
    "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
    "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
    "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE,
    "ellipsoid": mujoco.mjtGeom.mjGEOM_ELLIPSOID,
}
#: Number of half sizes each shape takes.
_SIZE_COUNTS = {"box": 3, "cylinder": 2, "sphere": 1, "capsule": 2, "ellipsoid": 3}


@dataclass(frozen=True)
class Part:
    """An extra geom of a compound object (e.g. a mug's handle), in the object's frame.

    Attributes:
        shape: as :attr:`ObjectSpec.shape`.
        size: half sizes, metres.
        pos: position in the object frame, metres.
        quat: orientation in the object frame (w, x, y, z).
        rgba: colour; ``None`` uses the object's.
        mass: kilograms.
    """

    shape: Shape
    size: tuple[float, ...]
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    rgba: tuple[float, float, float, float] | None = None
    mass: float = 0.01
#: Contact parameters of props: stiff (5 ms time constant), critically damped.
PROP_SOLREF = (0.005, 1.0)
PROP_FRICTION = (1.0, 0.01, 0.001)


@dataclass(frozen=True)
class ObjectSpec:
    """A free rigid object.

    Attributes:
        name: unique body name (also the main geom's name).
        shape: ``box`` (size = half extents x, y, z), ``cylinder`` (radius, half height),
            ``sphere`` (radius), ``capsule`` (radius, half length of the axis segment) or
            ``ellipsoid`` (three semi-axes); cylinders and capsules lie along the body z axis.
        size: half sizes as above, metres.
        rgba: colour, 0..1.
        mass: kilograms (of the main geom).
        attributes: descriptive labels (category, colour...) for tasks and instructions.
        parts: extra geoms of a compound object, rigidly attached.
    """

    name: str
    shape: Shape
    size: tuple[float, ...]
    rgba: tuple[float, float, float, float]
    mass: float = 0.05
    attributes: dict[str, str] = field(default_factory=dict)
    parts: tuple[Part, ...] = ()

    def __post_init__(self) -> None:
        for shape, size in [(self.shape, self.size), *((p.shape, p.size) for p in self.parts)]:
            if shape not in _SIZE_COUNTS:
                raise InvalidConfigError(
                    f"object {self.name!r}: shape {shape!r} is not one of {sorted(_SIZE_COUNTS)}"
                )
            if len(size) != _SIZE_COUNTS[shape] or min(size) <= 0:
                raise InvalidConfigError(
                    f"object {self.name!r}: a {shape} needs {_SIZE_COUNTS[shape]} positive "
                    f"half sizes, got {size}"
                )

    @property
    def half_height(self) -> float:
        """Half of the main geom's height when resting with its z axis up, metres."""
        if self.shape == "sphere":
            return self.size[0]
        if self.shape == "capsule":
            return self.size[0] + self.size[1]
        return self.size[-1]

    @property
    def grasp_width(self) -> float:
        """Width across the object between the pads for a top grasp along y, metres."""
        return 2.0 * (self.size[1] if self.shape == "box" else self.size[0])


def add_object(spec: mujoco.MjSpec, obj: ObjectSpec) -> mujoco.MjsBody:
    """Add ``obj`` as a free body at the origin (tasks place it at reset)."""
    body = spec.worldbody.add_body(name=obj.name)
    body.add_freejoint(name=f"{obj.name}_free")
    main = Part(obj.shape, obj.size, rgba=obj.rgba, mass=obj.mass)
    for index, part in enumerate((main, *obj.parts)):
        size = np.zeros(3)
        size[: len(part.size)] = part.size
        body.add_geom(
            name=obj.name if index == 0 else f"{obj.name}_part{index}",
            type=_GEOM_TYPES[part.shape],
            size=size,
            pos=part.pos,
            quat=part.quat,
            rgba=part.rgba or obj.rgba,
            mass=part.mass,
            condim=6,  # torsional and rolling friction: round things do not roll forever
            friction=PROP_FRICTION,
            solref=PROP_SOLREF,
        )
    return body


@dataclass(frozen=True)
class BinSpec:
    """An open box fixed to the table.

    Attributes:
        name: body name.
        inner_size: inner half extents (x, y) of the floor, metres.
        wall_height: metres above the table.
        wall_thickness: metres.
        rgba: colour.
    """

    name: str
    inner_size: tuple[float, float] = (0.09, 0.12)
    wall_height: float = 0.06
    wall_thickness: float = 0.008
    rgba: tuple[float, float, float, float] = (0.55, 0.42, 0.30, 1.0)

    @property
    def outer_half(self) -> tuple[float, float]:
        """Half extents (x, y) of the bin's outer walls in its body frame, metres."""
        return (self.inner_size[0] + self.wall_thickness,
                self.inner_size[1] + self.wall_thickness)

    def holds_xy(self, offset: np.ndarray) -> bool:
        """Whether ``offset`` (x, y from the floor centre, body frame, metres) lies over the
        inner floor."""
        return bool(np.all(np.abs(np.asarray(offset)[:2]) <= self.inner_size))


def add_bin(
    spec: mujoco.MjSpec, bin_spec: BinSpec, pos: np.ndarray, yaw: float = 0.0
) -> mujoco.MjsBody:
    """Add a static bin whose floor centre is at ``pos`` (world, metres), turned by ``yaw``."""
    half_x, half_y = bin_spec.inner_size
    t, h = bin_spec.wall_thickness, bin_spec.wall_height
    body = spec.worldbody.add_body(
        name=bin_spec.name, pos=pos, quat=[np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)]
    )
    box = mujoco.mjtGeom.mjGEOM_BOX
    common = {"type": box, "rgba": bin_spec.rgba, "solref": PROP_SOLREF}
    body.add_geom(name=f"{bin_spec.name}_floor", size=[half_x + t, half_y + t, t / 2],
                  pos=[0, 0, t / 2], **common)
    for sign, side in ((-1.0, "-"), (1.0, "+")):
        body.add_geom(name=f"{bin_spec.name}_wall_{side}x", size=[t / 2, half_y + t, h / 2],
                      pos=[sign * (half_x + t / 2), 0, h / 2], **common)
        body.add_geom(name=f"{bin_spec.name}_wall_{side}y", size=[half_x, t / 2, h / 2],
                      pos=[0, sign * (half_y + t / 2), h / 2], **common)
    return body



@dataclass(frozen=True)
class ContainerSpec:
    """A static round container (a pot, a bowl) built from a floor disc and a ring of wall
    segments, its floor centre at the body origin.

    Attributes:
        name: body and PDDL name.
        inner_radius: radius of the inner floor, metres.
        wall_height: metres above the table.
        wall_thickness: metres.
        segments: wall segments around the ring.
        rgba: colour.
        handles: add two handles (a pot's) on the body's +-x sides.
        flare: outward lean of the walls from vertical (a bowl's sloping sides), radians,
            0..pi/4; the rim's radius grows by ``wall_height * tan(flare)``.
    """

    name: str
    inner_radius: float
    wall_height: float
    wall_thickness: float = 0.008
    segments: int = 16
    rgba: tuple[float, float, float, float] = (0.36, 0.37, 0.40, 1.0)
    handles: bool = False
    flare: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.flare <= np.pi / 4:
            raise InvalidConfigError(f"container {self.name!r}: flare {self.flare} rad is "
                                     "outside 0..pi/4")

    @property
    def floor_top(self) -> float:
        """Height of the inner floor above the table, metres."""
        return self.wall_thickness

    @property
    def rim_radius(self) -> float:
        """Outer radius of the walls at the rim, metres."""
        return self.inner_radius + self.wall_thickness + self.wall_height * np.tan(self.flare)

    @property
    def footprint(self) -> float:
        """Radius of the circle holding the container (handles included), metres."""
        return self.rim_radius + (0.04 if self.handles else 0.0)

    @property
    def inner_size(self) -> tuple[float, float]:
        """Half extents (x, y) of the square around the inner floor, metres."""
        return (self.inner_radius, self.inner_radius)

    @property
    def outer_half(self) -> tuple[float, float]:
        """Half extents (x, y) of the square around the container, metres."""
        return (self.footprint, self.footprint)

    def holds_xy(self, offset: np.ndarray) -> bool:
        """Whether ``offset`` (x, y from the floor centre, body frame, metres) lies over the
        inner floor."""
        return bool(np.hypot(*np.asarray(offset)[:2]) <= self.inner_radius)


def add_container(spec: mujoco.MjSpec, container: ContainerSpec) -> mujoco.MjsBody:
    """Add ``container`` as a static body at the origin (moved per reset via body_pos)."""
    body = spec.worldbody.add_body(name=container.name)
    r, t, h = container.inner_radius, container.wall_thickness, container.wall_height
    lean = container.flare
    common = {"type": mujoco.mjtGeom.mjGEOM_BOX, "rgba": container.rgba, "solref": PROP_SOLREF,
              "friction": PROP_FRICTION, "condim": 4}
    body.add_geom(name=f"{container.name}_floor", type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                  size=[r + t, t / 2, 0], pos=[0, 0, t / 2], rgba=container.rgba,
                  solref=PROP_SOLREF, friction=PROP_FRICTION, condim=4)
    # each segment is as wide as the ring at the rim (no gaps where the walls lean out),
    # leaning outwards about its own tangent axis
    half_chord = container.rim_radius * np.tan(np.pi / container.segments) + 0.001
    radial = r + t / 2 + h / 2 * np.tan(lean)
    tilt = np.array([np.cos(lean / 2), 0.0, np.sin(lean / 2), 0.0])
    for k in range(container.segments):
        angle = 2 * np.pi * k / container.segments
        quat = np.zeros(4)
        mujoco.mju_mulQuat(quat, np.array([np.cos(angle / 2), 0, 0, np.sin(angle / 2)]), tilt)
        body.add_geom(name=f"{container.name}_wall{k}",
                      size=[t / 2, half_chord, h / 2 / np.cos(lean)],
                      pos=[radial * np.cos(angle), radial * np.sin(angle), h / 2],
                      quat=quat, **common)
    if container.handles:
        for sign, side in ((1.0, "+"), (-1.0, "-")):
            body.add_geom(name=f"{container.name}_handle{side}", size=[0.02, 0.035, 0.006],
                          pos=[sign * (r + t + 0.018), 0, h - 0.012], **common)
    return body
