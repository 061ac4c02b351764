"""``AgenticEnv/Stacking-v0``: stack coloured cubes on a named plate in a given order.

**Description.** Three plates (pink, turquoise, cream) stand on the table with three or four
coloured cubes stacked on them in random piles (as in AgenticLab Fig. 10). The robot must
build, on the named plate, a single stack with the cubes in the exact bottom-to-top order of
the instruction, unstacking whatever is in the way. PDDL domain: ``assets/pddl/stacking.pddl``
(AgenticLab Fig. 9).

**Randomizations.** Cube count (3 or 4) and colours (from green, orange, blue, yellow,
purple), the target plate and the order; plate positions (three slots along y, each jittered
by +-2 cm, shuffled); which plate each cube starts on and the order of each pile (uniform);
each cube's yaw (+-20 deg); the instruction's paraphrase category.

**Success conditions.** ``on-top-of`` holds for the target plate and the first cube, and for
each consecutive pair of cubes in the order (tolerances in
:mod:`agentic_env.tasks.predicates`). Progress is the fraction of those facts that hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.actions import box_top_grasp_yaw, pick, place, top_down_pose
from agentic_env.contract.trial import TrialSpec
from agentic_env.contract.workcell import TABLE_HEIGHT
from agentic_env.errors import InvalidConfigError
from agentic_env.pddl.planning import PlanStep
from agentic_env.robot.constants import TCP_TO_FINGERTIP
from agentic_env.sim.props import ObjectSpec
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import Box, SceneState, body_box
from agentic_env.tasks import symbolic
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.instructions import Instruction, choose_instruction, join_words
from agentic_env.tasks.predicates import clear, hand_facts, on_table, on_top_of

#: PDDL name of the bare table (an ``object``: the Fig. 9 domain has no table type).
TABLE = "table"
CUBE_COLOURS: dict[str, tuple[float, float, float, float]] = {
    "green": (0.15, 0.65, 0.20, 1.0),
    "orange": (0.98, 0.50, 0.08, 1.0),
    "blue": (0.12, 0.30, 0.85, 1.0),
    "yellow": (0.95, 0.82, 0.10, 1.0),
    "purple": (0.50, 0.20, 0.70, 1.0),
}
PLATE_COLOURS: dict[str, tuple[float, float, float, float]] = {
    "pink": (0.95, 0.55, 0.70, 1.0),
    "turquoise": (0.20, 0.75, 0.75, 1.0),
    "cream": (0.96, 0.92, 0.78, 1.0),
}
#: Words for colours in the high-level-reasoning paraphrases.
_COLOUR_RIDDLES = {
    "green": "fresh grass", "orange": "a tangerine", "blue": "a clear summer sky",
    "yellow": "a ripe banana", "purple": "lavender", "pink": "a flamingo",
    "turquoise": "a tropical lagoon", "cream": "vanilla ice cream",
}


@dataclass(frozen=True)
class StackingConfig:
    """Tunables of the stacking task.

    Attributes:
        cube_counts: allowed numbers of cubes to stack (sampled uniformly).
        cube_half_size: half edge of the cubes, metres.
        plate_radius: metres.
        plate_half_height: metres.
        plate_slots: nominal plate centres (x, y) in the base frame, metres.
        plate_jitter: uniform jitter of each plate centre per axis, metres.
        yaw_jitter: uniform jitter of each cube's yaw, radians.
    """

    cube_counts: tuple[int, ...] = (3, 4)
    cube_half_size: float = 0.02
    plate_radius: float = 0.065
    plate_half_height: float = 0.006
    plate_slots: tuple[tuple[float, float], ...] = ((0.5, -0.22), (0.5, 0.0), (0.5, 0.22))
    plate_jitter: float = 0.02
    yaw_jitter: float = 0.35


class StackingTask:
    """Stack cubes on a plate in a given order (see the module docstring)."""

    name = "stacking"
    domain = "stacking"

    def __init__(self, config: StackingConfig | None = None) -> None:
        self.config = config or self.default_config()
        half = self.config.cube_half_size
        self.cubes = {colour: ObjectSpec(f"{colour}-cube-1", "box", (half,) * 3, rgba, mass=0.05)
                      for colour, rgba in CUBE_COLOURS.items()}
        self.plates = list(PLATE_COLOURS)
        self._active: list[str] = []
        self._order: list[str] = []
        self._target = "pink"
        self._instruction = Instruction("", "canonical")

    @staticmethod
    def default_config() -> StackingConfig:
        """The configuration used by ``AgenticEnv/Stacking-v0``."""
        return StackingConfig()

    # -- scene ------------------------------------------------------------------------------

    def build(self, builder: SceneBuilder) -> None:
        """Add all five cubes (unused ones are parked off the table) and the three plates."""
        cfg = self.config
        for cube in self.cubes.values():
            builder.add_object(cube)
        for colour, rgba in PLATE_COLOURS.items():
            body = builder.spec.worldbody.add_body(name=f"{colour}-plate-1")
            body.add_geom(name=f"{colour}-plate-1", type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                          size=[cfg.plate_radius, cfg.plate_half_height, 0], rgba=rgba,
                          pos=[0, 0, cfg.plate_half_height], solref=[0.005, 1.0],
                          friction=[1.0, 0.01, 0.001], condim=4)

    def reset(self, scene: SceneState, rng: np.random.Generator,
              instruction_category: str | None) -> None:
        """Sample plates, piles, the target plate, the order and the instruction."""
        cfg = self.config
        count = int(rng.choice(cfg.cube_counts))
        self._active = [str(c) for c in rng.choice(list(CUBE_COLOURS), count, replace=False)]
        self._order = [str(c) for c in rng.permutation(self._active)]
        self._target = str(rng.choice(self.plates))
        slots = rng.permutation(len(cfg.plate_slots))
        plate_xy = {colour: np.asarray(cfg.plate_slots[slot])
                    + rng.uniform(-cfg.plate_jitter, cfg.plate_jitter, 2)
                    for colour, slot in zip(self.plates, slots, strict=True)}
        piles: dict[str, list[str]] = {plate: [] for plate in self.plates}
        for colour in rng.permutation(self._active):
            piles[self.plates[int(rng.integers(len(self.plates)))]].append(str(colour))
        self._place_fixtures(scene, plate_xy)
        self._place_piles(scene, plate_xy, piles, rng)
        self._instruction = choose_instruction(self.instructions(), rng, instruction_category)

    def _place_fixtures(self, scene: SceneState, plate_xy: dict[str, np.ndarray]) -> None:
        for colour, xy in plate_xy.items():
            body = scene.model.body(f"{colour}-plate-1").id
            scene.model.body_pos[body] = scene.base_pos + [xy[0], xy[1], 0.0]
        self._plate_xy = {colour: [float(v) for v in xy] for colour, xy in plate_xy.items()}

    def _place_piles(self, scene: SceneState, plate_xy: dict[str, np.ndarray],
                     piles: dict[str, list[str]], rng: np.random.Generator) -> None:
        cfg = self.config
        size = 2 * cfg.cube_half_size
        for plate, pile in piles.items():
            for level, colour in enumerate(pile):
                z = 2 * cfg.plate_half_height + cfg.cube_half_size + level * (size + 1e-3) + 1e-3
                position = np.array([*plate_xy[plate], z])
                scene.set_free_body_pose(self.cubes[colour].name, position,
                                         rng.uniform(-cfg.yaw_jitter, cfg.yaw_jitter))
        # unused cubes rest on the floor behind the robot, out of the workspace
        for index, colour in enumerate(c for c in CUBE_COLOURS if c not in self._active):
            parked = np.array([-0.6, -0.6 + 0.1 * index, cfg.cube_half_size - TABLE_HEIGHT])
            scene.set_free_body_pose(self.cubes[colour].name, parked, 0.0)

    # -- trial state ------------------------------------------------------------------------

    def trial_state(self) -> dict[str, Any]:
        """Plate positions and the active cubes."""
        return {"plate_xy": self._plate_xy, "cubes": list(self._active)}

    def apply_trial(self, scene: SceneState, trial: TrialSpec) -> None:
        """Restore plates, cubes, goal and instruction from ``trial``."""
        state, goal = trial.task_state, trial.goal
        unknown = set(goal["order"]) - set(CUBE_COLOURS)
        if unknown or goal["plate"] not in PLATE_COLOURS:
            raise InvalidConfigError(
                f"stacking trial names unknown colours {sorted(unknown)} or plate "
                f"{goal['plate']!r}; cubes: {', '.join(CUBE_COLOURS)}; plates: "
                f"{', '.join(PLATE_COLOURS)}"
            )
        self._active = list(state["cubes"])
        self._order = list(goal["order"])
        self._target = goal["plate"]
        self._place_fixtures(scene, {c: np.asarray(xy) for c, xy in state["plate_xy"].items()})
        self._instruction = Instruction(trial.instruction, trial.instruction_category)

    def goal(self) -> dict[str, Any]:
        """``{"plate": colour, "order": [colours bottom to top]}``."""
        return {"plate": self._target, "order": list(self._order)}

    # -- language ---------------------------------------------------------------------------

    def instructions(self) -> list[Instruction]:
        """Instructions for the current goal, at least one per category."""
        plate, order = self._target, [c.capitalize() for c in self._order]
        lower = list(self._order)
        riddles = [_COLOUR_RIDDLES[c] for c in lower]
        return [
            Instruction(f"Stack the cubes on the {plate} plate from bottom to top: "
                        f"{join_words(order)}.", "paper"),
            Instruction(f"Stack the {join_words(lower)} cubes on the {plate} plate, with "
                        f"{lower[0]} at the bottom and {lower[-1]} on top.", "canonical"),
            Instruction(f"Pile the blocks onto the {plate} dish so that, from the base up, "
                        f"they read {join_words(lower)}.", "lexical"),
            Instruction(f"Could you build a tower on the {plate} plate with the {lower[0]} cube "
                        f"at the bottom and the others in this order above it: "
                        f"{join_words(lower[1:])}?", "syntactic"),
            Instruction(f"hey, quick one pls - stack em on the {plate} plate: {lower[0]} first, "
                        f"then {join_words(lower[1:], 'then')} on top. thx!!", "semantic"),
            Instruction(f"On the plate the colour of {_COLOUR_RIDDLES[plate]}, stack the cubes "
                        f"from bottom to top in the colours of {join_words(riddles)}.",
                        "high_level"),
        ]

    def instruction(self) -> Instruction:
        """The episode's instruction."""
        return self._instruction

    # -- symbolic model ---------------------------------------------------------------------

    def pddl_objects(self) -> dict[str, str]:
        """Active cubes (typed by colour, as in Fig. 9) and the plates (type plate)."""
        objects = {self.cubes[c].name: f"{c}-cube" for c in self._active}
        objects.update({f"{p}-plate-1": "plate" for p in self.plates})
        objects[TABLE] = "object"
        return objects

    def facts(self, scene: SceneState) -> set[str]:
        """on-top-of / clear / holding / hand-empty over the active cubes and plates.

        A cube resting on the bare table is ``on-top-of`` the object ``table``, which is
        always ``clear`` (it has room), so a knocked-off cube can be picked up again.
        """
        cubes = [self.cubes[c].name for c in self._active]
        supports = cubes + [f"{p}-plate-1" for p in self.plates]
        facts: set[str] = set()
        facts.update(hand_facts(scene, cubes))
        for cube in cubes:
            on_support = False
            for support in supports:
                if on_top_of(scene, cube, support):
                    facts.add(f"on-top-of {cube} {support}")
                    on_support = True
            if not on_support and on_table(scene, cube):
                facts.add(f"on-top-of {cube} {TABLE}")
        for support in supports:
            if clear(scene, support, cubes):
                facts.add(f"clear {support}")
        facts.add(f"clear {TABLE}")
        return facts

    def goal_facts(self) -> list[str]:
        """on-top-of facts of the ordered stack on the target plate."""
        names = [f"{self._target}-plate-1"] + [self.cubes[c].name for c in self._order]
        return [f"on-top-of {upper} {lower}" for lower, upper in zip(names, names[1:],
                                                                      strict=False)]

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """Success when every goal fact holds; progress = fraction holding."""
        terms = {}
        for fact in self.goal_facts():
            _, upper, lower = fact.split()
            terms[fact] = float(on_top_of(scene, upper, lower))
        return TaskEvaluation(all(v > 0.5 for v in terms.values()),
                              float(np.mean(list(terms.values()))), terms)

    def primitive_for(self, step: PlanStep, scene: SceneState) -> dict[str, Any]:
        """``pick`` at the cube's pose; ``place-on-object`` centred on the target's top."""
        cfg = self.config
        if step.name == "pick":
            cube = step.args[0]
            position = scene.body_position(cube)
            position[2] = max(position[2], body_box(scene, cube).low[2] + TCP_TO_FINGERTIP
                              + 0.008)
            return pick(top_down_pose(position, self._roomiest_yaw(scene, cube)),
                        width=2 * cfg.cube_half_size)
        if step.name == "place-on-object" and step.args[1] == TABLE:
            return place(top_down_pose(self._free_table_spot(scene), 0.0))
        if step.name == "place-on-object":
            target = step.args[1]
            top = body_box(scene, target).high[2]
            centre = scene.body_position(target)
            position = np.array([centre[0], centre[1], top + cfg.cube_half_size + 0.008])
            on_cube = target in {cube.name for cube in self.cubes.values()}
            yaw = box_top_grasp_yaw(scene.body_rotation(target)) if on_cube else 0.0
            return place(top_down_pose(position, yaw))
        raise InvalidConfigError(f"stacking has no primitive for {step}; valid: pick, "
                                 "place-on-object")

    def _roomiest_yaw(self, scene: SceneState, cube: str) -> float:
        """Of the two grasp yaws across the cube's faces, the one whose fingers land
        farthest from other objects and plates (fingers sit beside the cube, ~3 cm out)."""
        base_yaw = box_top_grasp_yaw(scene.body_rotation(cube))
        centre = scene.body_position(cube)[:2]
        others = [body_box(scene, self.cubes[c].name) for c in self._active
                  if self.cubes[c].name != cube]
        others += [body_box(scene, f"{p}-plate-1") for p in self.plates]
        others = [box for box in others if not box.contains_xy(centre)]  # not what it sits on

        def room(yaw: float) -> float:
            closing = np.array([-np.sin(yaw), np.cos(yaw)])
            fingers = [centre + sign * 0.035 * closing for sign in (-1.0, 1.0)]
            return min((_distance_xy(box, finger) for box in others for finger in fingers),
                       default=np.inf)

        candidates = (base_yaw, base_yaw + np.pi / 2 if base_yaw < 0 else base_yaw - np.pi / 2)
        return max(candidates, key=room)

    def _free_table_spot(self, scene: SceneState) -> np.ndarray:
        """TCP position for setting a cube down on the table away from plates and cubes."""
        cfg = self.config
        xs, ys = np.meshgrid(np.linspace(0.35, 0.65, 7), np.linspace(-0.35, 0.35, 15))
        candidates = np.stack([xs.ravel(), ys.ravel()], axis=1)
        occupied = [scene.body_position(self.cubes[c].name)[:2] for c in self._active]
        occupied += [np.asarray(xy) for xy in self._plate_xy.values()]
        clearance = np.min(np.linalg.norm(candidates[:, None] - np.array(occupied)[None],
                                          axis=2), axis=1)
        best = candidates[int(np.argmax(clearance))]
        return np.array([*best, cfg.cube_half_size + TCP_TO_FINGERTIP + 0.01])

    def expert_actions(self, scene: SceneState) -> Iterator[dict[str, Any]]:
        """Execute the Fast Downward reference plan with ground-truth poses."""
        return symbolic.expert_actions(self, scene)


def _distance_xy(box: Box, point: np.ndarray) -> float:
    """Horizontal distance from ``point`` (x, y) to ``box``'s footprint (0 inside)."""
    gap = np.maximum(np.maximum(box.low[:2] - point, point - box.high[:2]), 0.0)
    return float(np.linalg.norm(gap))
