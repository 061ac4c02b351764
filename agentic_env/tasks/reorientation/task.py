"""``AgenticEnv/Reorientation-v0`` (:class:`ReorientationTask`): catalogue, reset, language.

Poses and their predicates: :mod:`~agentic_env.tasks.reorientation.poses`; expert:
:mod:`agentic_env.experts.reorientation`.
"""


from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentic_env.contract.trial import TrialSpec
from agentic_env.contract.workcell import TABLE_HEIGHT
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.rotations import rotation_z
from agentic_env.primitives.turning import GRASP_TILTS
from agentic_env.robot.reorienting import (
    handle_direction,
)
from agentic_env.sim.props import ObjectSpec, Part
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import SceneState, lowest_offset, set_body_pose
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.instructions import CATEGORIES, Instruction, choose_instruction
from agentic_env.tasks.predicates import hand_facts
from agentic_env.tasks.reorientation.poses import (
    HANDLE_DIRECTIONS,
    POSES,
    PoseTolerances,
    resting_pose,
)
from agentic_env.tasks.vocabulary import task_vocabulary

FAMILIES: tuple[str, ...] = ("bottle", "box", "mug")
#: Pose each family's goal object starts in, and the goal poses it can be asked for.
_START_POSE = {"bottle": "on-side", "box": "upright", "mug": "upright"}
_GOAL_POSES = {"bottle": ("upright",), "box": ("on-side",),
               "mug": tuple(f"handle-{d}" for d in HANDLE_DIRECTIONS)}
_VOCABULARY = task_vocabulary("reorientation")
#: Catalogue colours (RGBA) per family, one object per family and colour.
_COLOURS: dict[str, dict[str, tuple[float, float, float, float]]] = {
    family: {colour: tuple(rgba) for colour, rgba in colours.items()}
    for family, colours in _VOCABULARY["colours"].items()}
_CAP_RGBA = (0.92, 0.92, 0.90, 1.0)



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
    grasp_tilts: tuple[float, ...] = GRASP_TILTS
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
    """The catalogue object of ``family`` in ``colour`` (see :class:`ReorientationTask`)."""
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

    @staticmethod
    def default_config() -> ReorientationConfig:
        """The configuration used by ``AgenticEnv/Reorientation-v0``."""
        return ReorientationConfig()

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
        direction = self._pose.removeprefix("handle-")
        fields = {"colour": item.colour, "riddle": _VOCABULARY["colour_riddles"][item.colour]}
        if item.family == "mug":
            fields.update(words=HANDLE_DIRECTIONS[direction],
                          reach=_VOCABULARY["handle_reach"][direction])
        templates = _VOCABULARY["instructions"][item.family]
        return [Instruction(templates[category].format(**fields), category)
                for category in CATEGORIES]

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
