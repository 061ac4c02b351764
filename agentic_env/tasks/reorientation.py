"""``AgenticEnv/Reorientation-v0``: turn one object into a language-specified pose.

**Description.** Two or three household objects stand or lie on the table in front of the
robot: bottles (a cylinder body with a shoulder, neck and cap), tall boxes and mugs (a
cylinder body with a handle). One of them must end in the pose the instruction asks for; the
others are distractors and may stay as they are. Three goal families:

* **bottle -> upright**: a bottle lies on its side and must stand on its base;
* **box -> on-side**: a tall box stands upright and must be laid down on one of its sides;
* **mug -> handle-<direction>**: an upright mug must be turned about the vertical so that its
  handle points to the robot's left (base +y), its right (base -y), toward the robot (from
  the mug to the robot base) or away from the robot.

The ``pick`` and ``place`` primitives re-orient objects when the tool turns about its
closing axis between the grasp and the release. The expert splits a 90 deg turn between the
two, so the arm stays above the hand (a horizontal tool would bring the forearm down onto a
standing bottle): it picks the lying bottle across its body near the shoulder, 11.5 cm from
its base, with the tool tilted 45 deg from vertical towards the base (closing axis across the
bottle), and places it with the tool tilted 45 deg the other way, so the bottle's axis turns
vertical; it picks the upright box near its top across its narrow side with the tool leaning
45 deg along its wide side and places it leaning the other way, so the box lies on a narrow
side. If a 45 deg pick cannot be planned, 35, 55, 25, 65 and 15 deg are tried. The mug is
picked from above across its body (closing axis perpendicular to the handle) and placed from
above with the yaw changed by the handle's missing rotation. Place poses are computed from
the object's actual pose in the hand (a grasp that slipped is compensated) and release it
5 mm above the table; the yaw of a turning place is free and is searched, leaning away from
the robot first, for a pose that the primitives' planner (:class:`agentic_env.robot.kinematics
.ArmKinematics`, Cartesian paths via the 25 cm transit height) reaches and along whose path
a kinematic sweep of the arm and the held object (MuJoCo collision detection with 1 cm
margins) touches nothing. Objects roll with friction (``condim`` 6) so a lying bottle stays
where the grasp was planned. PDDL domain: ``assets/pddl/reorientation.pddl``.

**Randomizations.** The goal family (uniform), the goal object's colour (one of two per
family) and, for mugs, the handle direction (uniform over four); one or two distractors drawn
from the other catalogue objects, each bottle or box either standing or lying; object
positions (three slots along y, 22 cm apart, shuffled, jittered by +-3 cm in x and +-2 cm in
y, rejection-sampled so that footprints keep 3 cm apart); yaws (uniform; a goal mug's handle
starts at least 60 deg from the asked direction); the instruction's paraphrase category (the
``paper`` one follows the style of AgenticLab Table V, which has no reorientation sentence).

**Success conditions.** ``in-pose <object> <pose>`` holds for the goal: the object rests on the
table (lowest point within 12 mm of the table top, not held) and

* ``upright``: its body axis (bottom to top) is within 15 deg of vertical;
* ``on-side``: its body axis is within 20 deg of horizontal;
* ``handle-<direction>``: it is upright and its handle's direction (body x, projected on the
  table) is within 25 deg of the asked direction in the base frame.

A resting object is in exactly one pose: ``handle-<direction>`` refines ``upright`` for mugs
(an upright mug whose handle points between the named directions is ``upright``), an axis
within 15 deg of straight down is ``upside-down``, and anything else is ``tilted``.
Tolerances are fields of :class:`PoseTolerances`. Progress is 1 when the goal fact holds,
else 0.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.actions import pick, place
from agentic_env.contract.spaces import Workspace
from agentic_env.contract.trial import TrialSpec
from agentic_env.contract.workcell import ROBOT_PREFIX, TABLE_HEIGHT
from agentic_env.errors import InvalidConfigError, MotionPlanningError
from agentic_env.geometry.rotations import rotation_between, rotation_z, unit
from agentic_env.pddl.planning import PlanStep
from agentic_env.primitives.paths import approach_via
from agentic_env.primitives.types import PrimitiveConfig
from agentic_env.robot.constants import GRIPPER_PREFIX, TCP_SITE, TCP_TO_FINGERTIP
from agentic_env.robot.kinematics import ArmKinematics
from agentic_env.robot.model import RobotIndices
from agentic_env.robot.motion import MotionLimits, plan_through
from agentic_env.robot.reorienting import (
    goal_axis,
    handle_direction,
    leaning_pose,
    needs_turn,
    turned_rotations,
)
from agentic_env.sim.props import ObjectSpec, Part
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import SceneState, body_box, holding
from agentic_env.tasks import symbolic
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.instructions import Instruction, choose_instruction
from agentic_env.tasks.predicates import hand_facts

FAMILIES: tuple[str, ...] = ("bottle", "box", "mug")
#: Handle directions a mug can be asked for, and how instructions say them.
HANDLE_DIRECTIONS: dict[str, str] = {  # keys: reorienting.HANDLE_DIRECTION_NAMES
    "left": "to the robot's left",
    "right": "to the robot's right",
    "toward-robot": "toward the robot",
    "away-from-robot": "away from the robot",
}
#: Every pose of the PDDL problems (a resting item is in exactly one of them).
POSES: tuple[str, ...] = (
    "upright", "on-side", "upside-down", "tilted",
    *(f"handle-{direction}" for direction in HANDLE_DIRECTIONS),
)
#: Pose each family's goal object starts in, and the goal poses it can be asked for.
_START_POSE = {"bottle": "on-side", "box": "upright", "mug": "upright"}
_GOAL_POSES = {"bottle": ("upright",), "box": ("on-side",),
               "mug": tuple(f"handle-{d}" for d in HANDLE_DIRECTIONS)}

_COLOURS: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "bottle": {"green": (0.15, 0.60, 0.25, 1.0), "blue": (0.15, 0.35, 0.85, 1.0)},
    "box": {"red": (0.82, 0.15, 0.12, 1.0), "yellow": (0.95, 0.80, 0.12, 1.0)},
    "mug": {"orange": (0.98, 0.50, 0.08, 1.0), "purple": (0.50, 0.22, 0.70, 1.0)},
}
#: Words for colours in the high-level-reasoning paraphrases.
_COLOUR_RIDDLES = {
    "green": "fresh grass", "blue": "a clear summer sky", "red": "a ripe tomato",
    "yellow": "a ripe banana", "orange": "a tangerine", "purple": "lavender",
}
_CAP_RGBA = (0.92, 0.92, 0.90, 1.0)


@dataclass(frozen=True)
class PoseTolerances:
    """Angular tolerances of the pose predicates (degrees) and the resting gap (metres).

    Attributes:
        upright_angle: an upright (or upside-down) item's body axis is this close to vertical.
        side_angle: an item on its side has its body axis this close to horizontal.
        handle_angle: a mug's handle direction is this close to the asked direction.
        contact_gap: a resting item's lowest point is at most this far above the table.
    """

    upright_angle: float = 15.0
    side_angle: float = 20.0
    handle_angle: float = 25.0
    contact_gap: float = 0.012


@dataclass(frozen=True)
class ReorientationConfig:
    """Tunables of the reorientation task (sizes in metres, angles in radians unless stated).

    Attributes:
        families: goal families sampled uniformly (from ``bottle``, ``box``, ``mug``).
        distractor_counts: allowed numbers of distractor objects (sampled uniformly).
        slot_x: nominal x of the object slots, base frame.
        slot_ys: nominal y of the object slots, base frame.
        slot_jitter: uniform jitter (x, y) of each object's position.
        min_gap: smallest gap between object footprints at reset.
        lying_probability: chance that a distractor bottle or box starts lying down.
        handle_min_offset: a goal mug's handle starts at least this far from the asked
            direction.
        bottle_radius, bottle_half_length: the bottle's body cylinder (its shoulder, neck and
            cap add 6.5 cm on top).
        box_half_size: the box's half extents (x, y, z); z is its height axis.
        mug_radius, mug_half_height: the mug's body cylinder.
        release_gap: height of the object's lowest point above the table when a place
            releases it.
        top_grasp_depth: TCP depth below an upright object's top for a top-down grasp.
        bottle_grasp_height: distance from a lying bottle's base to its grasp point.
        grasp_tilts: tilts of the tool from straight down (degrees, best first) tried for
            a pick that must turn the object by 90 deg; the place tilts the tool the other
            way by the rest of the 90 deg.
        tolerances: the pose predicates' tolerances.
    """

    families: tuple[str, ...] = FAMILIES
    distractor_counts: tuple[int, ...] = (1, 2)
    slot_x: float = 0.48
    slot_ys: tuple[float, ...] = (-0.22, 0.0, 0.22)
    slot_jitter: tuple[float, float] = (0.03, 0.02)
    min_gap: float = 0.03
    lying_probability: float = 0.5
    handle_min_offset: float = np.pi / 3
    bottle_radius: float = 0.03
    bottle_half_length: float = 0.07
    box_half_size: tuple[float, float, float] = (0.055, 0.0275, 0.08)
    mug_radius: float = 0.03
    mug_half_height: float = 0.045
    release_gap: float = 0.005
    top_grasp_depth: float = 0.025
    bottle_grasp_height: float = 0.115
    grasp_tilts: tuple[float, ...] = (45.0, 35.0, 55.0, 25.0, 65.0, 15.0)
    tolerances: PoseTolerances = field(default_factory=PoseTolerances)


@dataclass(frozen=True)
class Item:
    """One catalogue object.

    Attributes:
        family: ``bottle``, ``box`` or ``mug``.
        colour: colour word.
        spec: its props spec (body name = PDDL name).
    """

    family: str
    colour: str
    spec: ObjectSpec

    @property
    def name(self) -> str:
        """Body and PDDL name, e.g. ``green-bottle-1``."""
        return self.spec.name


def _capsule_x(radius: float, half: float, pos: tuple[float, float, float]) -> Part:
    """A capsule along the body x axis."""
    c = np.cos(np.pi / 4)
    return Part("capsule", (radius, half), pos, (c, 0.0, c, 0.0), mass=0.004)


def make_item(family: str, colour: str, cfg: ReorientationConfig) -> Item:
    """The catalogue object of ``family`` in ``colour`` (see the module docstring)."""
    rgba = _COLOURS[family][colour]
    name = f"{colour}-{family}-1"
    if family == "bottle":
        r, h = cfg.bottle_radius, cfg.bottle_half_length
        spec = ObjectSpec(name, "cylinder", (r, h), rgba, mass=0.12, parts=(
            Part("ellipsoid", (r, r, 0.025), (0.0, 0.0, h), mass=0.01),
            Part("cylinder", (0.012, 0.02), (0.0, 0.0, h + 0.035), mass=0.005),
            Part("cylinder", (0.0145, 0.0075), (0.0, 0.0, h + 0.0575), rgba=_CAP_RGBA,
                 mass=0.003),
        ), attributes={"family": family, "colour": colour})
    elif family == "box":
        spec = ObjectSpec(name, "box", cfg.box_half_size, rgba, mass=0.12,
                          attributes={"family": family, "colour": colour})
    elif family == "mug":
        r, h = cfg.mug_radius, cfg.mug_half_height
        spec = ObjectSpec(name, "cylinder", (r, h), rgba, mass=0.15, parts=(
            Part("capsule", (0.006, 0.017), (r + 0.022, 0.0, 0.0), mass=0.005),
            _capsule_x(0.006, 0.011, (r + 0.011, 0.0, 0.022)),
            _capsule_x(0.006, 0.011, (r + 0.011, 0.0, -0.022)),
            Part("cylinder", (r - 0.004, 0.0008), (0.0, 0.0, h), rgba=(0.25, 0.14, 0.08, 1.0),
                 mass=0.001),
        ), attributes={"family": family, "colour": colour})
    else:
        raise InvalidConfigError(f"unknown reorientation family {family!r}; valid: "
                                 f"{', '.join(FAMILIES)}")
    return Item(family, colour, spec)


# -- geometry and pose predicates ---------------------------------------------------------


def _quat(rotation: np.ndarray) -> np.ndarray:
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(rotation).flatten())
    return quat


def lowest_offset(model: mujoco.MjModel, body: str, rotation: np.ndarray) -> float:
    """Height of the lowest point of ``body``'s colliding geom boxes below its origin when
    the body has orientation ``rotation`` (3, 3), metres (negative: below)."""
    body_id = model.body(body).id
    geoms = np.flatnonzero((model.geom_bodyid == body_id)
                           & ((model.geom_contype != 0) | (model.geom_conaffinity != 0)))
    lowest = np.inf
    for g in geoms:
        geom_rot = np.zeros(9)
        mujoco.mju_quat2Mat(geom_rot, model.geom_quat[g])
        world = rotation @ geom_rot.reshape(3, 3)
        centre = rotation @ model.geom_pos[g] + world @ model.geom_aabb[g, :3]
        extent = float(np.abs(world[2]) @ model.geom_aabb[g, 3:])
        lowest = min(lowest, centre[2] - extent)
    return float(lowest)


def set_body_pose(scene: SceneState, name: str, position: np.ndarray,
                  rotation: np.ndarray) -> None:
    """Place free body ``name`` at ``position`` (base frame, m) with ``rotation``, at rest."""
    joint = scene.model.body(name).jntadr[0]
    adr = scene.model.jnt_qposadr[joint]
    scene.data.qpos[adr:adr + 3] = scene.base_pos + position
    scene.data.qpos[adr + 3:adr + 7] = _quat(rotation)
    dof = scene.model.jnt_dofadr[joint]
    scene.data.qvel[dof:dof + 6] = 0.0


def axis_tilt(scene: SceneState, body: str) -> float:
    """Angle between ``body``'s axis (body z, bottom to top) and straight up, degrees."""
    axis = scene.body_rotation(body)[:, 2]
    return float(np.degrees(np.arccos(np.clip(axis[2], -1.0, 1.0))))


def handle_error(scene: SceneState, body: str, direction: str) -> float:
    """Angle between ``body``'s handle (body x, projected on the table) and ``direction``,
    degrees."""
    handle = scene.body_rotation(body)[:2, 0]
    wanted = handle_direction(direction, scene.body_position(body))
    angle = np.arctan2(handle[1], handle[0]) - np.arctan2(wanted[1], wanted[0])
    return float(np.degrees(abs((angle + np.pi) % (2 * np.pi) - np.pi)))


def resting_pose(scene: SceneState, body: str, handled: bool,
                 tol: PoseTolerances | None = None) -> str | None:
    """The pose (one of :data:`POSES`) ``body`` rests on the table in, or ``None`` when it is
    held or not resting on the table (see the module docstring)."""
    tol = tol or PoseTolerances()
    if holding(scene, body) or body_box(scene, body).low[2] > tol.contact_gap:
        return None
    tilt = axis_tilt(scene, body)
    if tilt <= tol.upright_angle:
        if handled:
            for direction in HANDLE_DIRECTIONS:
                if handle_error(scene, body, direction) <= tol.handle_angle:
                    return f"handle-{direction}"
        return "upright"
    if tilt >= 180.0 - tol.upright_angle:
        return "upside-down"
    if abs(tilt - 90.0) <= tol.side_angle:
        return "on-side"
    return "tilted"


def in_pose(scene: SceneState, body: str, pose: str, handled: bool,
            tol: PoseTolerances | None = None) -> bool:
    """``(in-pose body pose)``: ``body`` rests on the table in ``pose``."""
    return resting_pose(scene, body, handled, tol) == pose


def _segment_distance(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> float:
    """Distance between two 2-D segments (sampled finely: footprints are short)."""
    ts = np.linspace(0.0, 1.0, 21)[:, None]
    pa = a0 + ts * (a1 - a0)
    pb = b0 + ts * (b1 - b0)
    return float(np.min(np.linalg.norm(pa[:, None, :] - pb[None, :, :], axis=-1)))


@dataclass(frozen=True)
class Footprint:
    """A capsule-shaped table footprint: segment ``a``-``b`` (x, y) grown by ``radius``."""

    a: np.ndarray
    b: np.ndarray
    radius: float

    def gap(self, other: Footprint) -> float:
        """Clearance between the two footprints, metres (negative: overlapping)."""
        return _segment_distance(self.a, self.b, other.a, other.b) - self.radius - other.radius


# -- the task -----------------------------------------------------------------------------


class ReorientationTask:
    """Turn an object into a language-specified pose (see the module docstring)."""

    name = "reorientation"
    domain = "reorientation"

    def __init__(self, config: ReorientationConfig | None = None) -> None:
        self.config = config or self.default_config()
        self.items = {item.name: item for item in
                      (make_item(family, colour, self.config)
                       for family in FAMILIES for colour in _COLOURS[family])}
        self._active: list[str] = []
        self._target = next(iter(self.items))
        self._pose = "upright"
        self._instruction = Instruction("", "canonical")
        self._kinematics: ArmKinematics | None = None
        self._sweep: _SweepChecker | None = None

    @staticmethod
    def default_config() -> ReorientationConfig:
        """The configuration used by ``AgenticEnv/Reorientation-v0``."""
        return ReorientationConfig()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_kinematics"] = None
        state["_sweep"] = None
        return state

    # -- scene ------------------------------------------------------------------------------

    def build(self, builder: SceneBuilder) -> None:
        """Add all six catalogue objects (unused ones are parked off the table).

        Their contacts get rolling friction (``condim`` 6, the props' rolling coefficient of
        1 mm): without it a lying bottle that settles with a tiny spin rolls on for
        centimetres, out from under a grasp planned where it lay.
        """
        for item in self.items.values():
            body = builder.add_object(item.spec)
            for geom in body.geoms:
                geom.condim = 6

    def reset(self, scene: SceneState, rng: np.random.Generator,
              instruction_category: str | None) -> None:
        """Sample the goal, the distractors, their poses and the instruction."""
        cfg = self.config
        family = str(rng.choice(cfg.families))
        target = self._catalogue(family)[int(rng.integers(2))]
        self._target = target.name
        self._pose = str(rng.choice(_GOAL_POSES[family]))
        others = [name for name in self.items if name != target.name]
        count = int(rng.choice(cfg.distractor_counts))
        distractors = [str(n) for n in rng.choice(others, count, replace=False)]
        self._active = [target.name, *distractors]
        for _ in range(200):
            layout = self._sample_layout(scene, rng)
            if layout is not None:
                break
        else:  # pragma: no cover - the slots are far enough apart for any draw
            raise InvalidConfigError("reorientation could not place its objects apart")
        for name, (position, rotation) in layout.items():
            set_body_pose(scene, name, position, rotation)
        self._park(scene)
        self._instruction = choose_instruction(self.instructions(), rng, instruction_category)

    def _catalogue(self, family: str) -> list[Item]:
        return [item for item in self.items.values() if item.family == family]

    def _sample_layout(self, scene: SceneState, rng: np.random.Generator
                       ) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
        cfg = self.config
        slots = rng.permutation(len(cfg.slot_ys))
        layout: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        footprints: list[Footprint] = []
        for name, slot in zip(self._active, slots, strict=False):
            item = self.items[name]
            xy = np.array([cfg.slot_x, cfg.slot_ys[slot]]) + rng.uniform(
                -np.asarray(cfg.slot_jitter), cfg.slot_jitter)
            yaw = float(rng.uniform(-np.pi, np.pi))
            if name == self._target:
                lying = _START_POSE[item.family] == "on-side"
                if item.family == "mug":
                    yaw = self._start_handle_yaw(xy, rng)
            else:
                lying = item.family != "mug" and rng.random() < cfg.lying_probability
            rotation = self._rest_rotation(item, yaw, lying)
            footprint = self._footprint(item, xy, rotation)
            if any(footprint.gap(other) < cfg.min_gap for other in footprints):
                return None
            footprints.append(footprint)
            z = -lowest_offset(scene.model, name, rotation) + 1e-3
            layout[name] = (np.array([xy[0], xy[1], z]), rotation)
        return layout

    def _start_handle_yaw(self, xy: np.ndarray, rng: np.random.Generator) -> float:
        wanted = handle_direction(self._pose.removeprefix("handle-"), xy)
        base = float(np.arctan2(wanted[1], wanted[0]))
        low = self.config.handle_min_offset
        return base + float(rng.choice([-1.0, 1.0])) * float(rng.uniform(low, np.pi))

    @staticmethod
    def _rest_rotation(item: Item, yaw: float, lying: bool) -> np.ndarray:
        """Upright, or lying with the body axis horizontal along ``yaw`` (a box lies on its
        broad face)."""
        if not lying:
            return rotation_z(yaw)
        if item.family == "box":  # turn about body x: body y points up, z along yaw + 90 deg
            return rotation_z(yaw) @ np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])
        return rotation_z(yaw) @ np.array([[0, 0, 1.0], [0, 1.0, 0], [-1.0, 0, 0]])

    def _footprint(self, item: Item, xy: np.ndarray, rotation: np.ndarray) -> Footprint:
        cfg = self.config
        axis = rotation[:2, 2]
        if item.family == "bottle":
            if np.linalg.norm(axis) > 0.5:  # lying: from the base to the cap
                return Footprint(xy - cfg.bottle_half_length * axis,
                                 xy + (cfg.bottle_half_length + 0.065) * axis, cfg.bottle_radius)
            return Footprint(xy, xy, cfg.bottle_radius)
        if item.family == "box":
            hx, hy, hz = cfg.box_half_size
            if np.linalg.norm(axis) > 0.5:
                return Footprint(xy - hz * axis, xy + hz * axis, max(hx, hy))
            return Footprint(xy, xy, float(np.hypot(hx, hy)))
        return Footprint(xy, xy, cfg.mug_radius + 0.028)

    def _park(self, scene: SceneState) -> None:
        """Unused catalogue objects rest on the floor behind the robot, out of reach."""
        unused = [name for name in self.items if name not in self._active]
        for index, name in enumerate(unused):
            rotation = np.eye(3)
            z = -TABLE_HEIGHT - lowest_offset(scene.model, name, rotation) + 1e-3
            set_body_pose(scene, name, np.array([-0.6, -0.6 + 0.15 * index, z]), rotation)

    @property
    def dressing_keepout(self) -> list[list[float]]:
        """Base-frame rectangle ``[x0, x1, y0, y1]`` a setting's clutter must avoid: the
        object slots grown by the jitter and the reach of a lying bottle (17 cm)."""
        cfg = self.config
        jx, jy = cfg.slot_jitter
        reach = 0.17
        return [[cfg.slot_x - jx - reach, cfg.slot_x + jx + reach,
                 min(cfg.slot_ys) - jy - reach, max(cfg.slot_ys) + jy + reach]]

    # -- trial state ------------------------------------------------------------------------

    def trial_state(self) -> dict[str, Any]:
        """The active objects (goal object first)."""
        return {"objects": list(self._active)}

    def apply_trial(self, scene: SceneState, trial: TrialSpec) -> None:
        """Restore the goal, the active objects and the instruction from ``trial``."""
        goal, state = trial.goal, trial.task_state
        active = list(state.get("objects", [goal.get("object")]))
        unknown = sorted({*active, goal.get("object")} - set(self.items))
        if unknown or goal.get("pose") not in POSES:
            raise InvalidConfigError(
                f"reorientation trial names unknown objects {unknown} or pose "
                f"{goal.get('pose')!r}; objects: {', '.join(self.items)}; poses: "
                f"{', '.join(POSES)}"
            )
        self._target = goal["object"]
        self._pose = goal["pose"]
        self._active = active
        self._instruction = Instruction(trial.instruction, trial.instruction_category)

    def goal(self) -> dict[str, Any]:
        """``{"object": name, "pose": pose}``, e.g. ``{"object": "green-bottle-1", "pose":
        "upright"}``."""
        return {"object": self._target, "pose": self._pose}

    # -- language ---------------------------------------------------------------------------

    def instructions(self) -> list[Instruction]:
        """Instructions for the current goal, one per category (``paper``: in the style of
        AgenticLab Table V, which has no reorientation sentence)."""
        item = self.items[self._target]
        colour, riddle = item.colour, _COLOUR_RIDDLES[item.colour]
        if item.family == "bottle":
            return [
                Instruction(f"Reorient the {colour} bottle so that it stands upright.",
                            "paper"),
                Instruction(f"Stand the {colour} bottle upright.", "canonical"),
                Instruction(f"Set the {colour} flask back up on its base.", "lexical"),
                Instruction(f"Could you make the {colour} bottle stand upright?", "syntactic"),
                Instruction(f"oops, the {colour} bottle fell over - can u stand it back up "
                            "pls?", "semantic"),
                Instruction(f"The drink container the colour of {riddle} has toppled over: put "
                            "it back the way it is meant to stand.", "high_level"),
            ]
        if item.family == "box":
            return [
                Instruction(f"Reorient the {colour} box so that it lies on its side.", "paper"),
                Instruction(f"Lay the {colour} box on its side.", "canonical"),
                Instruction(f"Put the {colour} carton down lying on its side.", "lexical"),
                Instruction(f"Could you lay the {colour} box down on its side?", "syntactic"),
                Instruction(f"the {colour} box keeps wobbling, just lay it down on its side "
                            "thx", "semantic"),
                Instruction(f"The tall package the colour of {riddle} might topple: rest it "
                            "so its longest edge lies along the table.", "high_level"),
            ]
        direction = self._pose.removeprefix("handle-")
        words = HANDLE_DIRECTIONS[direction]
        reach = {
            "left": "a person standing at the robot's left-hand end of the table",
            "right": "a person standing at the robot's right-hand end of the table",
            "toward-robot": "the robot itself, from where it stands,",
            "away-from-robot": "a person facing the robot across the table",
        }[direction]
        return [
            Instruction(f"Reorient the {colour} mug so that its handle points {words}.",
                        "paper"),
            Instruction(f"Turn the {colour} mug so its handle points {words}.", "canonical"),
            Instruction(f"Rotate the {colour} cup so the handle faces {words}.", "lexical"),
            Instruction(f"Could you turn the {colour} mug until its handle points {words}?",
                        "syntactic"),
            Instruction(f"hey, spin the {colour} mug round so the handle's pointing {words}, "
                        "cheers", "semantic"),
            Instruction(f"Turn the cup the colour of {riddle} so that {reach} could take it by "
                        "the handle.", "high_level"),
        ]

    def instruction(self) -> Instruction:
        """The episode's instruction."""
        return self._instruction

    # -- symbolic model ---------------------------------------------------------------------

    def pddl_objects(self) -> dict[str, str]:
        """Active objects (type item) and every pose (type pose)."""
        objects = {name: "item" for name in self._active}
        objects.update({pose: "pose" for pose in POSES})
        return objects

    def _pose_of(self, scene: SceneState, name: str) -> str | None:
        return resting_pose(scene, name, self.items[name].family == "mug",
                            self.config.tolerances)

    def facts(self, scene: SceneState) -> set[str]:
        """in-pose / holding / hand-empty over the active objects."""
        facts: set[str] = set()
        facts.update(hand_facts(scene, self._active))
        for name in self._active:
            pose = self._pose_of(scene, name)
            if pose is not None:
                facts.add(f"in-pose {name} {pose}")
        return facts

    def goal_facts(self) -> list[str]:
        """The goal object in the asked pose."""
        return [f"in-pose {self._target} {self._pose}"]

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """Success when the goal object rests in the asked pose."""
        fact = self.goal_facts()[0]
        value = float(self._pose_of(scene, self._target) == self._pose)
        return TaskEvaluation(value > 0.5, value, {fact: value})

    # -- expert -----------------------------------------------------------------------------

    def primitive_for(self, step: PlanStep, scene: SceneState) -> dict[str, Any]:
        """``pick`` with a grasp suited to the object's pose and goal; ``place-in-pose`` with
        the TCP pose that turns the object, as it sits in the hand, into the asked pose."""
        if step.name == "pick":
            return self._pick_action(scene, step.args[0])
        if step.name == "place-in-pose":
            return self._place_action(scene, step.args[0], step.args[1])
        raise InvalidConfigError(f"reorientation has no primitive for {step}; valid: pick, "
                                 "place-in-pose")

    def _pick_action(self, scene: SceneState, name: str) -> dict[str, Any]:
        cfg = self.config
        item = self.items[name]
        rotation, centre = scene.body_rotation(name), scene.body_position(name)
        axis = rotation[:, 2]
        low = body_box(scene, name).low[2]
        turning = name == self._target and needs_turn(axis, self._pose)
        if abs(axis[2]) < np.cos(np.radians(45.0)):  # lying: grasp across the body axis
            along = unit(np.array([axis[0], axis[1], 0.0]))
            if item.family == "bottle":
                position = centre + (cfg.bottle_grasp_height - cfg.bottle_half_length) * axis
                width = 2.0 * cfg.bottle_radius
            else:  # no goal needs it; the widest of these do not fit the gripper
                position = centre.copy()
                extents = np.abs(rotation.T @ np.cross(along, [0.0, 0.0, 1.0]))
                width = min(2.0 * float(extents @ self._half_extents(item)), 0.065)
            position[2] = centre[2]
            # the tool leans towards the base: turning it by 90 deg about the closing axis
            # stands the object on its base
            leans = [-along]
        else:  # standing: from above near the top, across the narrow side or the mug body
            along = unit(np.array([rotation[0, 0], rotation[1, 0], 0.0]))
            width = (2.0 * cfg.box_half_size[1] if item.family == "box"
                     else 2.0 * (cfg.bottle_radius if item.family == "bottle"
                                 else cfg.mug_radius))
            position = centre.copy()
            position[2] = body_box(scene, name).high[2] - cfg.top_grasp_depth
            outward = unit(np.array([centre[0], centre[1], 0.0]))
            leans = sorted([along, -along], key=lambda lean: -float(lean @ outward))
        tilts = cfg.grasp_tilts if turning else (0.0,)
        q = self._joint_positions(scene)
        chosen = None
        for tilt in np.radians(tilts):
            for lean in leans:
                pose = leaning_pose(position, lean, float(tilt))
                pose[2, 3] = max(pose[2, 3], low + TCP_TO_FINGERTIP * np.cos(tilt)
                                 + _PAD_HALF_WIDTH * np.sin(tilt) + 0.008)
                if chosen is None:
                    chosen = pose
                if not turning or self._pick_feasible(q, pose):
                    return pick(pose, width=width)
        return pick(chosen, width=width)

    def _half_extents(self, item: Item) -> np.ndarray:
        cfg = self.config
        if item.family == "box":
            return np.asarray(cfg.box_half_size)
        if item.family == "bottle":
            return np.array([cfg.bottle_radius, cfg.bottle_radius, cfg.bottle_half_length])
        return np.array([cfg.mug_radius, cfg.mug_radius, cfg.mug_half_height])

    def _place_action(self, scene: SceneState, name: str, pose: str) -> dict[str, Any]:
        tcp_rot, tcp_pos = self._tcp_pose(scene)
        obj_rot, obj_pos = scene.body_rotation(name), scene.body_position(name)
        # the object in the hand: its rotation and position in the tool frame
        in_hand_rot = tcp_rot.T @ obj_rot
        in_hand_pos = tcp_rot.T @ (obj_pos - tcp_pos)
        axis = obj_rot[:, 2]
        spot = obj_pos[:2].copy()
        if not needs_turn(axis, pose):
            rotation = tcp_rot
            wanted_axis = goal_axis(axis, pose)
            if wanted_axis is not None:
                rotation = rotation_between(axis, wanted_axis) @ rotation
            if pose.startswith("handle-"):
                handle = (rotation @ in_hand_rot)[:2, 0]
                wanted = handle_direction(pose.removeprefix("handle-"), spot)
                turn = np.arctan2(wanted[1], wanted[0]) - np.arctan2(handle[1], handle[0])
                rotation = rotation_z(float(turn)) @ rotation
            return place(self._tcp_target(scene, name, rotation, in_hand_rot, in_hand_pos,
                                          spot))
        candidates = turned_rotations(tcp_rot, in_hand_rot[:, 2], pose, spot)
        q = self._joint_positions(scene)
        for rotation in candidates:
            target = self._tcp_target(scene, name, rotation, in_hand_rot, in_hand_pos, spot)
            if self._place_feasible(scene, name, q, target, in_hand_rot, in_hand_pos):
                return place(target)
        return place(self._tcp_target(scene, name, candidates[0], in_hand_rot, in_hand_pos,
                                      spot))

    def _tcp_target(self, scene: SceneState, name: str, tcp_rotation: np.ndarray,
                    in_hand_rot: np.ndarray, in_hand_pos: np.ndarray,
                    spot: np.ndarray) -> np.ndarray:
        """TCP pose (4x4) that rests the object at ``spot`` (x, y), ``release_gap`` above the
        table, when the tool has ``tcp_rotation``."""
        obj_rot = tcp_rotation @ in_hand_rot
        obj_pos = np.array([spot[0], spot[1],
                            self.config.release_gap - lowest_offset(scene.model, name, obj_rot)])
        pose = np.eye(4)
        pose[:3, :3] = tcp_rotation
        pose[:3, 3] = obj_pos - tcp_rotation @ in_hand_pos
        return pose

    def _tcp_pose(self, scene: SceneState) -> tuple[np.ndarray, np.ndarray]:
        site = scene.data.site(ROBOT_PREFIX + TCP_SITE)
        return site.xmat.reshape(3, 3).copy(), site.xpos - scene.base_pos

    def _joint_positions(self, scene: SceneState) -> np.ndarray:
        return scene.data.qpos[self._checker(scene).arm_qpos].copy()

    def _checker(self, scene: SceneState) -> _SweepChecker:
        if self._sweep is None or self._sweep.source is not scene.model:
            self._sweep = _SweepChecker(scene.model)
        return self._sweep

    def _plan(self, q: np.ndarray, via: list[np.ndarray]) -> np.ndarray | None:
        """Joint waypoints of straight TCP segments through ``via`` from joints ``q`` (as the
        primitives plan them), or ``None`` if a segment cannot be planned."""
        if not all(Workspace().contains(pose[:3, 3]) for pose in via[-2:]):
            return None
        try:
            return plan_through(self._arm(), q, via, MotionLimits())
        except MotionPlanningError:
            return None

    def _transit(self, q: np.ndarray, target: np.ndarray, approach: float) -> list[np.ndarray]:
        """The via poses of a pick or place at ``target``: rise to the transit height, cross
        to above the pre-pose ``approach`` back along the tool z axis, descend, approach."""
        return approach_via(self._arm().forward(q), target, approach,
                            PrimitiveConfig().transit_height)

    def _arm(self) -> ArmKinematics:
        if self._kinematics is None:
            self._kinematics = ArmKinematics()
        return self._kinematics

    def _pick_feasible(self, q: np.ndarray, grasp: np.ndarray) -> bool:
        """Whether the pick primitive can plan its path to ``grasp`` and its lift."""
        lifted = grasp.copy()
        lifted[2, 3] += _LIFT_HEIGHT
        return self._plan(q, [*self._transit(q, grasp, _APPROACH), lifted]) is not None

    def _place_feasible(self, scene: SceneState, name: str, q: np.ndarray, target: np.ndarray,
                        in_hand_rot: np.ndarray, in_hand_pos: np.ndarray) -> bool:
        """Whether the place primitive can plan its path to ``target`` and the hand with the
        held object keeps clear of the arm, the table and the other objects along it."""
        waypoints = self._plan(q, self._transit(q, target, _APPROACH))
        if waypoints is None:
            return False
        return self._checker(scene).clear(scene, name, waypoints, in_hand_rot, in_hand_pos)

    def expert_actions(self, scene: SceneState) -> Iterator[dict[str, Any]]:
        """Execute the Fast Downward reference plan with ground-truth poses."""
        return symbolic.expert_actions(self, scene)


#: Primitive defaults the expert plans with (see :class:`agentic_env.primitives.executor
#: .PrimitiveConfig`): transit height, lift height, approach distance, metres.
_LIFT_HEIGHT = 0.12
_APPROACH = 0.1
#: Half width of the finger pads across the closing axis, metres.
_PAD_HALF_WIDTH = 0.01


class _SweepChecker:
    """Kinematic collision check of a planned path with the held object carried along.

    Works on a copy of the scene model whose geoms report contacts up to ``margin`` apart.
    Along the path, the robot (but its fingers, which hold the object) must keep ``margin``
    from the other objects, ``table_margin`` from the table and fixtures, and the held object
    must not touch anything but the fingers.
    """

    margin = 0.01
    table_margin = 0.004

    def __init__(self, model: mujoco.MjModel) -> None:
        self.source = model
        self.model = copy.deepcopy(model)
        self.model.geom_margin[:] = self.margin
        self.data = mujoco.MjData(self.model)
        indices = RobotIndices.from_model(model, ROBOT_PREFIX)
        self.arm_qpos = indices.arm_qpos
        robot_bodies = np.array(sorted(indices.robot_bodies))
        self.robot = np.isin(model.geom_bodyid, robot_bodies)
        fingers = [model.body(ROBOT_PREFIX + GRIPPER_PREFIX + f"{side}_{part}").id
                   for side in ("left", "right") for part in ("carriage", "middle", "tip")]
        self.finger = np.isin(model.geom_bodyid, fingers)
        self.static = (model.body_weldid[model.geom_bodyid] == 0) & ~self.robot
        self.tcp_site = model.site(ROBOT_PREFIX + TCP_SITE).id

    def clear(self, scene: SceneState, held: str, waypoints: np.ndarray,
              in_hand_rot: np.ndarray, in_hand_pos: np.ndarray) -> bool:
        """Whether ``waypoints`` (N, 6) keep clear (see the class docstring)."""
        model, data = self.model, self.data
        data.qpos[:] = scene.data.qpos
        body = model.body(held).id
        adr = model.jnt_qposadr[model.body_jntadr[body]]
        for q in waypoints[::2]:
            data.qpos[self.arm_qpos] = q
            mujoco.mj_kinematics(model, data)
            tcp_rot = data.site_xmat[self.tcp_site].reshape(3, 3)
            data.qpos[adr:adr + 3] = data.site_xpos[self.tcp_site] + tcp_rot @ in_hand_pos
            data.qpos[adr + 3:adr + 7] = _quat(tcp_rot @ in_hand_rot)
            mujoco.mj_kinematics(model, data)
            mujoco.mj_collision(model, data)
            for contact in data.contact[:data.ncon]:
                if not self._acceptable(contact.geom[0], contact.geom[1], contact.dist, body):
                    return False
        return True

    def _acceptable(self, g1: int, g2: int, dist: float, held: int) -> bool:
        model = self.model
        for a, b in ((g1, g2), (g2, g1)):
            if self.robot[a]:
                if self.robot[b]:
                    return True
                if model.geom_bodyid[b] == held:
                    return self.finger[a] or dist > self.table_margin
                if self.static[b]:
                    return dist > self.table_margin
                return dist > self.margin
        if held in (model.geom_bodyid[g1], model.geom_bodyid[g2]):
            return dist > 0.002
        return True
