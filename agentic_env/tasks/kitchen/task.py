"""``AgenticEnv/Kitchen-v0`` (:class:`KitchenTask`): scene, reset, predicates, language.

Props: :mod:`~agentic_env.tasks.kitchen.props`; expert: :mod:`agentic_env.experts.kitchen`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.trial import TrialSpec
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.planar import origin_segment_distance, segments_hit_box, slice_boxes
from agentic_env.geometry.rotations import rotation_z
from agentic_env.sim.cabinet import (
    CabinetSpec,
    add_cabinet,
    drawer_interior,
    drawer_opening,
    inside_drawer,
    set_cabinet_pose,
    set_drawer_opening,
)
from agentic_env.sim.props import ContainerSpec, add_container
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import Box, SceneState, holding
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.instructions import Instruction, choose_instruction
from agentic_env.tasks.kitchen.props import (
    BOWL,
    CABINET,
    CHICKEN,
    DRAWER,
    POT,
    SNACK,
    SPICE,
    SPONGE,
    TOMATO,
    VARIANTS,
    kitchen_items,
)
from agentic_env.tasks.predicates import hand_facts, on_table
from agentic_env.tasks.vocabulary import task_vocabulary

#: Depth (m, along the pull) and half width (m) of the room in front of the cabinet that the
#: arm's wrist sweeps while it works the drawer, behind where ``open_drawer`` leaves the TCP.
DRAWER_ARM_REACH, DRAWER_ARM_HALF_WIDTH = 0.2, 0.06

@dataclass(frozen=True)
class KitchenConfig:
    """Tunables of the kitchen task.

    Attributes:
        variants: Table V instructions to sample from (uniformly), of ``A``, ``B``, ``C``.
        variant: a fixed variant (overrides ``variants``), or ``None``.
        cabinet: the cabinet's geometry.
        front_x: range of the x of the cabinet front's centre, base frame, metres.
        front_y: range of its y, metres.
        yaw: range of the cabinet's yaw, radians (0 = front facing the robot).
        open_range: initial opening of an open drawer (B, C), metres.
        open_distance: how far the expert pulls a closed drawer, metres.
        open_threshold: ``drawer-open`` above this opening, metres.
        closed_threshold: ``drawer-closed`` below this opening, metres.
        area: (x0, x1, y0, y1) where containers and items stand, base frame, metres.
        max_reach: largest distance of an item's (or container's) centre from the base's
            vertical axis, metres.
        gap: smallest gap between footprints at reset, metres.
        cabinet_margin: smallest gap between a footprint and the cabinet with its drawer
            pulled fully out, metres.
        path_margin: smallest gap between the cabinet and the low part of the straight way
            from a footprint towards the drawer (see ``KitchenTask.clear_mask``), m.
        base_clearance: smallest distance from the base's vertical axis of the way from the
            opened drawer's handle to the first item to pick (see ``_sample_layout``), m.
        container_headroom: the ``in`` box reaches this far above a container's rim, metres.
        pot: the pot.
        bowl: the bowl.
    """

    variants: tuple[str, ...] = VARIANTS
    variant: str | None = None
    cabinet: CabinetSpec = CabinetSpec(CABINET)
    front_x: tuple[float, float] = (0.6, 0.65)
    front_y: tuple[float, float] = (0.22, 0.27)
    yaw: tuple[float, float] = (-0.25, 0.0)
    open_range: tuple[float, float] = (0.18, 0.21)
    open_distance: float = 0.2
    open_threshold: float = 0.05
    closed_threshold: float = 0.01
    area: tuple[float, float, float, float] = (0.28, 0.66, -0.55, 0.0)
    max_reach: float = 0.72
    gap: float = 0.04
    cabinet_margin: float = 0.04
    path_margin: float = 0.02
    base_clearance: float = 0.36
    container_headroom: float = 0.03
    pot: ContainerSpec = ContainerSpec(POT, inner_radius=0.09, wall_height=0.07,
                                       rgba=(0.36, 0.37, 0.40, 1.0), handles=True)
    bowl: ContainerSpec = ContainerSpec(BOWL, inner_radius=0.092, wall_height=0.045,
                                        wall_thickness=0.007, rgba=(0.55, 0.72, 0.55, 1.0))


class KitchenTask:
    """``AgenticEnv/Kitchen-v0``: long-horizon kitchen chores with a drawer, a pot and a bowl.

    **Description.** A kitchen cabinet with one drawer (:mod:`agentic_env.sim.cabinet`, the PDDL
    drawer ``top-drawer``) stands on the table to the robot's left, its front facing the robot.
    On the right stand a pot with two handles and a low bowl (both static containers), a spice
    bottle, a blue snack pack, a chicken leg (in the pot) and two distractors (a tomato and a
    sponge). The episode is one of the three long-horizon instructions of AgenticLab Table V
    (``goal["variant"]``):

    * **A** "Put the spice bottle into the top drawer and close it." The drawer starts closed
      and the bottle on the table: open, pick, place in the drawer, close (4 steps).
    * **B** "Place the blue snack pack in the top drawer, then move the spice bottle from the
      drawer to the table, and finally close the drawer." The drawer starts open with the bottle
      inside it (5 steps).
    * **C** "A chicken leg is in the pot. Take out the chicken leg, place it in the bowl, then
      put the spice bottle back into the top drawer and close the drawer." The drawer starts
      open, the bottle on the table, the chicken leg in the pot (5 steps).

    PDDL domain: ``assets/pddl/kitchen.pddl`` (types item, container, drawer). PDDL names are
    body names for the items and containers (``spice-bottle-1``, ``pot-1``...); the drawer is
    ``top-drawer`` (bodies ``cabinet`` and ``cabinet_drawer``).

    The pot and the bowl are *static* bodies (welded to the world, moved per reset through
    ``model.body_pos`` like stacking's plates): ``in`` then only depends on the item, the
    containers cannot be knocked over, and the robot touching a rim is a reported collision.

    **Randomizations.** The variant (uniform over ``KitchenConfig.variants``, or fixed by
    ``KitchenConfig.variant``); the cabinet's front centre (x 0.60-0.65, y 0.22-0.27 m) and yaw
    (-0.25..0 rad): inside the range where the drawer primitives plan (x 0.58-0.65, y 0.2-0.3,
    yaw -0.3..0.05), away from the part of it where the way between the drawer's handle and the
    table passes the shoulder singularity (small x, yaw > 0), and leaving the kitchen setting's
    clutter room behind the cabinet (y <= 0.27); the drawer's initial opening (closed in A,
    0.18-0.21 m in B and C); positions of the pot, the bowl and the items on the table (uniform
    in the area right of the cabinet within 0.72 m of the base axis, footprints at least 4 cm
    apart and clear of the cabinet and the swept drawer, by rejection sampling; the containers
    and the items the goal puts into the drawer also need a way to the drawer that does not
    cross the cabinet low, see ``KitchenTask.clear_mask``), the pot's and the items'
    yaws; the chicken leg's yaw in the pot; in B the bottle's place in the drawer; the
    instruction's paraphrase category.

    **Success conditions.** Every goal fact holds (tolerances below and in
    :mod:`agentic_env.tasks.predicates`):

    * A: ``in-drawer spice-bottle-1 top-drawer``, ``drawer-closed top-drawer``;
    * B: ``in-drawer blue-snack-pack-1 top-drawer``, ``on-table spice-bottle-1``,
      ``drawer-closed top-drawer``;
    * C: ``in chicken-leg-1 bowl-1``, ``in-drawer spice-bottle-1 top-drawer``,
      ``drawer-closed top-drawer``.

    Progress is the fraction of those facts that hold. Facts:

    * ``drawer-open top-drawer``: the drawer is pulled out by more than ``open_threshold``
      (5 cm); ``drawer-closed top-drawer``: by less than ``closed_threshold`` (1 cm). A drawer
      ajar in between has neither (no plan exists from there until it is opened or closed by
      hand);
    * ``in-drawer x top-drawer``: x's centre lies inside the drawer's inner box (it moves with
      the drawer, so the fact survives closing) and x is not held;
    * ``in x c``: x's centre lies inside the container's interior box (inner footprint, from the
      table up to 3 cm above the rim) and x is not held;
    * ``on-table x``: x rests on the table top (lowest point within 12 mm), is in no container
      and no drawer, and is not held;
    * ``holding x`` / ``hand-empty``: the finger pads touch x on both sides / nothing is held.

    An item's *centre* is its body origin, except the chicken leg's: the middle of its length.
    """

    #: Name of the cabinet (prefix of its bodies, joint, geoms and sites).
    cabinet = CABINET
    name = "kitchen"
    domain = "kitchen"

    def __init__(self, config: KitchenConfig | None = None) -> None:
        self.config = config or self.default_config()
        cfg = self.config
        bad = {v for v in (*cfg.variants, cfg.variant) if v is not None} - set(VARIANTS)
        if bad or not cfg.variants:
            raise InvalidConfigError(f"kitchen variants {sorted(bad) or '()'} are not valid; "
                                     f"valid: {', '.join(VARIANTS)}")
        self.items = kitchen_items()
        self.containers = {cfg.pot.name: cfg.pot, cfg.bowl.name: cfg.bowl}
        self._variant = cfg.variant or cfg.variants[0]
        self._front = np.array([0.6, 0.25])
        self._yaw = 0.0
        self._opening = 0.0
        self._container_pose: dict[str, list[float]] = {}
        self._instruction = Instruction("", "canonical")

    @staticmethod
    def default_config() -> KitchenConfig:
        """The configuration used by ``AgenticEnv/Kitchen-v0``."""
        return KitchenConfig()

    # -- scene ------------------------------------------------------------------------------

    def build(self, builder: SceneBuilder) -> None:
        """Add the cabinet, the pot, the bowl (static) and the five items (free)."""
        add_cabinet(builder.spec, self.config.cabinet, builder.base_pos + [0.8, 0.25, 0.0])
        for container in self.containers.values():
            add_container(builder.spec, container)
        for item in self.items.values():
            builder.add_object(item.spec)

    def reset(self, scene: SceneState, rng: np.random.Generator,
              instruction_category: str | None) -> None:
        """Sample the variant, the cabinet, the drawer, the containers and the items."""
        cfg = self.config
        self._variant = cfg.variant or str(rng.choice(cfg.variants))
        on_table = [SPICE, SNACK, TOMATO, SPONGE]
        if self._variant == "B":
            on_table.remove(SPICE)
        self._opening = 0.0 if self._variant == "A" else float(rng.uniform(*cfg.open_range))
        layout = None
        for _attempt in range(20):  # a cabinet pose that leaves too little room: draw again
            self._front = rng.uniform([cfg.front_x[0], cfg.front_y[0]],
                                      [cfg.front_x[1], cfg.front_y[1]])
            self._yaw = float(rng.uniform(*cfg.yaw))
            layout = self._sample_layout(rng, on_table)
            if layout is not None:
                break
        if layout is None:
            raise InvalidConfigError("kitchen: could not lay out the containers and items; "
                                     "enlarge KitchenConfig.area or reduce KitchenConfig.gap")
        self._apply_fixtures(scene)
        self._place_containers(scene, {name: layout[name] for name in self.containers})
        mujoco.mj_kinematics(scene.model, scene.data)
        for name in on_table:
            item = self.items[name]
            x, y, yaw = layout[name]
            centre = rotation_z(yaw) @ np.asarray(item.centre)
            scene.set_free_body_pose(name, np.array([x - centre[0], y - centre[1],
                                                     item.rest_height + 1e-3]), yaw)
        self._put_chicken_in_pot(scene, rng)
        if self._variant == "B":
            self._put_in_drawer(scene, rng, SPICE)
        self._instruction = choose_instruction(self.instructions(), rng, instruction_category)

    def _apply_fixtures(self, scene: SceneState) -> None:
        """Move the cabinet and set the drawer's opening (then update kinematics)."""
        set_cabinet_pose(scene.model, CABINET, scene.base_pos + self.cabinet_origin(), self._yaw)
        set_drawer_opening(scene.model, scene.data, CABINET, self._opening)
        mujoco.mj_kinematics(scene.model, scene.data)

    def cabinet_origin(self) -> np.ndarray:
        """Bottom centre of the cabinet (base frame, metres) for the current layout."""
        inward = np.array([np.cos(self._yaw), np.sin(self._yaw), 0.0])
        return np.array([*self._front, 0.0]) + inward * self.config.cabinet.size[0] / 2

    def _cabinet_rect(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cabinet with its drawer fully out and the handle: (centre (2,), half extents
        (2,), rotation (2, 2)) in the base frame."""
        cab = self.config.cabinet
        depth, width, _ = cab.size
        front_reach = cab.drawer_travel + cab.handle_standoff + cab.handle_radius
        rotation = rotation_z(self._yaw)[:2, :2]
        # in the cabinet frame it spans x from -depth/2 - front_reach to depth/2
        centre = self.cabinet_origin()[:2] + rotation @ np.array([-front_reach / 2, 0.0])
        half = np.array([(depth + front_reach) / 2, width / 2])
        return centre, half, rotation

    def clear_mask(self, xy: np.ndarray, radius: float, path_radius: float | None,
                   to_table: bool = False) -> np.ndarray:
        """Which footprint circles of radius ``radius`` (metres) at points ``xy`` (N, 2; base
        frame, metres) keep ``cabinet_margin`` from the cabinet with its drawer fully out,
        and whose straight way to the open drawer keeps clear of the cabinet where a carried
        item (of radius ``path_radius``, metres; ``None``: no check of the way) is low.

        A transit into the drawer leaves the table at 0.25 m TCP height and climbs to the
        expert's high pre-place pose (0.25 m above the release, see
        :mod:`agentic_env.experts.kitchen`): a carried item's bottom (up to 3.6 cm below the
        TCP) clears the walls of the pulled-out drawer (0.27-0.28 m) after about 30 % of the
        way and the carcass top (0.30 m) after about 50 %. So the first 30 % of the way from
        ``xy`` must keep the item out of the pulled-out drawer's footprint (grown by
        ``path_margin``) and the first 50 % beside the carcass (grown by ``path_margin``).
        The empty gripper's transit from above the drawer down to a pick is low over the same
        stretch. With ``to_table`` (a spot for ``place-on-table``, reached nearly level from
        the drawer with the item's bottom 1-2 cm above the carcass top, the expert's 0.3 m
        table approach): the whole way beside the carcass; the drawer's walls are 3 cm
        below the item there.

        Returns:
            (N,) bool, true where clear.
        """
        cfg = self.config
        cab = cfg.cabinet
        centre, half, rotation = self._cabinet_rect()
        local = np.abs((xy - centre) @ rotation)
        clear = np.linalg.norm(np.maximum(local - half, 0.0), axis=1) >= (
            radius + cfg.cabinet_margin)
        if path_radius is None:
            return clear
        depth, width, _ = cab.size
        start = (xy - self.cabinet_origin()[:2]) @ rotation
        way = np.array([-depth / 2 - cfg.open_distance / 2, 0.0]) - start  # to the drawer
        carcass = np.array([depth / 2, width / 2]) + cfg.path_margin
        crossing = segments_hit_box(start, start + (1.0 if to_table else 0.5) * way,
                                     -carcass, carcass)
        grow = cfg.path_margin + path_radius
        front = -depth / 2 - cab.drawer_travel - cab.handle_standoff - cab.handle_radius
        drawer_low = np.array([front - grow, -width / 2 - grow])
        drawer_high = np.array([-depth / 2, width / 2 + grow])
        if not to_table:
            crossing |= segments_hit_box(start, start + 0.3 * way, drawer_low, drawer_high)
        return clear & ~crossing

    def _retreat_xy(self) -> np.ndarray:
        """Where ``open_drawer`` leaves the TCP (x, y, base frame): 0.1 m in front of the
        handle pulled out by ``open_distance``."""
        cab = self.config.cabinet
        local = -cab.size[0] / 2 - self.config.open_distance - cab.handle_standoff - 0.1
        return self.cabinet_origin()[:2] + rotation_z(self._yaw)[:2, :2] @ np.array([local, 0.0])

    @property
    def dressing_keepout(self) -> list[list[float]]:
        """Base-frame rectangles [x0, x1, y0, y1] the setting's clutter must avoid: the
        cabinet with its drawer pulled fully out, and the room the arm's wrist sweeps in front
        of it while it opens and closes the drawer (:data:`DRAWER_ARM_REACH` back from where
        ``open_drawer`` leaves the TCP, :data:`DRAWER_ARM_HALF_WIDTH` to each side), each as
        the bounding boxes of four slices along the pull (tighter than one box when the
        cabinet is turned)."""
        centre, half, rotation = self._cabinet_rect()
        arm_half = np.array([DRAWER_ARM_REACH / 2, DRAWER_ARM_HALF_WIDTH])
        arm_centre = self._retreat_xy() + rotation @ np.array([-DRAWER_ARM_REACH / 2, 0.0])
        return [*slice_boxes(centre, half, rotation),
                *slice_boxes(arm_centre, arm_half, rotation)]

    def _sample_layout(self, rng: np.random.Generator, on_table: list[str]
                       ) -> dict[str, tuple[float, float, float]] | None:
        """(x, y, yaw) of the containers and the table items: centres in the area, clear of
        the cabinet and of each other by ``gap``, by rejection sampling (largest first);
        ``None`` if none is found.

        The way to the drawer (:meth:`clear_mask`) is checked for the items the goal
        carries into the drawer (with their radius) and for the containers (with the open
        gripper's, 4 cm: the gripper moves between them and the drawer); distractors only
        keep clear of the cabinet. When the drawer starts closed, the first pick follows the
        opening: the straight way from where ``open_drawer`` leaves the TCP (pointing into the
        cabinet, 0.1 m in front of the pulled handle) to the item turns the wrist down on the
        way, and must keep ``base_clearance`` from the base's vertical axis (nearer, it
        passes the shoulder singularity).
        """
        cfg = self.config
        x0, x1, y0, y1 = cfg.area
        to_drawer = set(self.goal()["in_drawer"])
        shapes = [(c.name, c.footprint, 0.04) for c in self.containers.values()]
        shapes += [(name, self.items[name].footprint,
                    self.items[name].footprint if name in to_drawer else None)
                   for name in on_table]
        for _restart in range(10):
            placed: dict[str, tuple[float, float, float]] = {}
            circles: list[tuple[np.ndarray, float]] = []
            for name, radius, path_radius in shapes:
                xy = rng.uniform([x0, y0], [x1, y1], size=(300, 2))
                yaw = rng.uniform(-np.pi, np.pi, size=300)
                valid = (np.linalg.norm(xy, axis=1) <= cfg.max_reach) & self.clear_mask(
                    xy, radius, path_radius)
                if path_radius is not None and self._opening == 0.0 and name in self.items:
                    valid &= origin_segment_distance(self._retreat_xy(), xy) >= cfg.base_clearance
                for centre, r in circles:
                    valid &= np.linalg.norm(xy - centre, axis=1) >= radius + r + cfg.gap
                if not valid.any():
                    break
                first = int(np.argmax(valid))
                placed[name] = (float(xy[first, 0]), float(xy[first, 1]), float(yaw[first]))
                circles.append((xy[first], radius))
            if len(placed) == len(shapes):
                return placed
        return None

    def _place_containers(self, scene: SceneState,
                          poses: dict[str, tuple[float, float, float]]) -> None:
        for name, (x, y, yaw) in poses.items():
            body = scene.model.body(name).id
            scene.model.body_pos[body] = scene.base_pos + [x, y, 0.0]
            scene.model.body_quat[body] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        self._container_pose = {name: [float(v) for v in pose] for name, pose in poses.items()}

    def _put_chicken_in_pot(self, scene: SceneState, rng: np.random.Generator) -> None:
        """The chicken leg lies in the pot, its centre at the pot's centre, any yaw."""
        item = self.items[CHICKEN]
        yaw = float(rng.uniform(-np.pi, np.pi))
        x, y, _ = self._container_pose[POT]
        centre = rotation_z(yaw) @ np.asarray(item.centre)
        z = self.config.pot.floor_top + item.rest_height + 1e-3
        scene.set_free_body_pose(CHICKEN, np.array([x - centre[0], y - centre[1], z]), yaw)

    def _put_in_drawer(self, scene: SceneState, rng: np.random.Generator, name: str) -> None:
        """Stand item ``name`` in the pulled-out part of the open drawer (B's bottle)."""
        cab = self.config.cabinet
        pose, half = drawer_interior(scene.model, scene.data, CABINET, scene.base_pos)
        exposed = self._opening - cab.drawer_front_thickness
        # clear of the drawer front and of the carcass (where the gripper must reach down)
        depth = rng.uniform(0.05, max(0.05, exposed - 0.075))
        lateral = rng.uniform(-0.12, 0.12)
        item = self.items[name]
        local = np.array([depth - half[0], lateral, -half[2] + item.rest_height + 1e-3])
        position = pose[:3, 3] + pose[:3, :3] @ local
        scene.set_free_body_pose(name, position, float(rng.uniform(-np.pi, np.pi)))

    # -- trial state ------------------------------------------------------------------------

    def trial_state(self) -> dict[str, Any]:
        """Cabinet front (x, y) and yaw, the drawer's initial opening, container poses."""
        return {"front": [float(v) for v in self._front], "yaw": self._yaw,
                "opening": self._opening, "containers": self._container_pose}

    def apply_trial(self, scene: SceneState, trial: TrialSpec) -> None:
        """Restore the variant, cabinet, drawer, containers and instruction of ``trial``."""
        state, goal = trial.task_state, trial.goal
        if goal.get("variant") not in VARIANTS:
            raise InvalidConfigError(f"kitchen trial variant {goal.get('variant')!r}; valid: "
                                     f"{', '.join(VARIANTS)}")
        self._variant = goal["variant"]
        self._front = np.asarray(state["front"], dtype=float)
        self._yaw = float(state["yaw"])
        self._opening = float(state["opening"])
        self._apply_fixtures(scene)
        self._place_containers(scene, {name: tuple(pose) for name, pose
                                       in state["containers"].items()})
        self._instruction = Instruction(trial.instruction, trial.instruction_category)

    def goal(self) -> dict[str, Any]:
        """``{"variant", "in_drawer": [items], "on_table": [items], "in": {item: container},
        "drawer_closed": True}``."""
        goal: dict[str, Any] = {"variant": self._variant, "in_drawer": [], "on_table": [],
                                "in": {}, "drawer_closed": True}
        if self._variant == "A":
            goal["in_drawer"] = [SPICE]
        elif self._variant == "B":
            goal["in_drawer"] = [SNACK]
            goal["on_table"] = [SPICE]
        else:
            goal["in"] = {CHICKEN: BOWL}
            goal["in_drawer"] = [SPICE]
        return goal

    @property
    def variant(self) -> str:
        """The current episode's Table V variant (A, B or C)."""
        return self._variant

    # -- language ---------------------------------------------------------------------------

    def instructions(self) -> list[Instruction]:
        """Instructions for the current variant, one per category (paper = Table V)."""
        texts = task_vocabulary("kitchen")["instructions"][self._variant]
        return [Instruction(text, category) for category, text in texts.items()]

    def instruction(self) -> Instruction:
        """The episode's instruction."""
        return self._instruction

    # -- symbolic model ---------------------------------------------------------------------

    def pddl_objects(self) -> dict[str, str]:
        """The five items (item), the pot and the bowl (container), the drawer (drawer)."""
        objects = {name: "item" for name in self.items}
        objects.update({name: "container" for name in self.containers})
        objects[DRAWER] = "drawer"
        return objects

    def item_centre(self, scene: SceneState, name: str) -> np.ndarray:
        """The item's centre (base frame, metres): see the class docstring."""
        return (scene.body_position(name)
                + scene.body_rotation(name) @ np.asarray(self.items[name].centre))

    def interior(self, scene: SceneState, container: str) -> Box:
        """A container's interior box: its inner footprint's bounding square, from the table
        up to ``container_headroom`` above the rim."""
        spec = self.containers[container]
        centre = scene.body_position(container)
        r = spec.inner_radius
        return Box(centre - [r, r, 0.0],
                   centre + [r, r, spec.wall_height + self.config.container_headroom])

    def in_container(self, scene: SceneState, item: str, container: str) -> bool:
        """``in item container``."""
        centre = self.item_centre(scene, item)
        return self.interior(scene, container).contains(centre) and not holding(scene, item)

    def in_drawer(self, scene: SceneState, item: str) -> bool:
        """``in-drawer item top-drawer``."""
        return inside_drawer(scene.model, scene.data, CABINET, self.item_centre(scene, item),
                             scene.base_pos) and not holding(scene, item)

    def on_table(self, scene: SceneState, item: str) -> bool:
        """``on-table item``: on the table top, in no container or drawer, not held."""
        return (on_table(scene, item) and not self.in_drawer(scene, item)
                and not any(self.in_container(scene, item, c) for c in self.containers))

    def opening(self, scene: SceneState) -> float:
        """How far the drawer is pulled out, metres."""
        return drawer_opening(scene.model, scene.data, CABINET)

    def facts(self, scene: SceneState) -> set[str]:
        """holding / hand-empty / in / in-drawer / on-table / drawer-open / drawer-closed."""
        cfg = self.config
        facts = hand_facts(scene, self.items)
        for name in self.items:
            if f"holding {name}" in facts:
                continue
            centre = self.item_centre(scene, name)
            located = False
            for container in self.containers:
                if self.interior(scene, container).contains(centre):
                    facts.add(f"in {name} {container}")
                    located = True
            if inside_drawer(scene.model, scene.data, CABINET, centre, scene.base_pos):
                facts.add(f"in-drawer {name} {DRAWER}")
                located = True
            if not located and on_table(scene, name):
                facts.add(f"on-table {name}")
        opening = self.opening(scene)
        if opening > cfg.open_threshold:
            facts.add(f"drawer-open {DRAWER}")
        elif opening < cfg.closed_threshold:
            facts.add(f"drawer-closed {DRAWER}")
        return facts

    def goal_facts(self) -> list[str]:
        """The goal's facts (see the class docstring)."""
        goal = self.goal()
        facts = [f"in {item} {container}" for item, container in goal["in"].items()]
        facts += [f"in-drawer {item} {DRAWER}" for item in goal["in_drawer"]]
        facts += [f"on-table {item}" for item in goal["on_table"]]
        facts.append(f"drawer-closed {DRAWER}")
        return facts

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """Success when every goal fact holds; progress = fraction holding."""
        facts = self.facts(scene)
        terms = {fact: float(fact in facts) for fact in self.goal_facts()}
        return TaskEvaluation(all(v > 0.5 for v in terms.values()),
                              float(np.mean(list(terms.values()))), terms)
