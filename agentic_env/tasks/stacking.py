"""``AgenticEnv/Stacking-v0`` (:class:`StackingTask`): scene, reset, scoring, language.

The scripted expert is :mod:`agentic_env.experts.stacking`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.trial import TrialSpec
from agentic_env.contract.workcell import TABLE_HEIGHT
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.props import ObjectSpec
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.instructions import CATEGORIES, Instruction, choose_instruction, join_words
from agentic_env.tasks.predicates import clear, hand_facts, on_table, on_top_of
from agentic_env.tasks.vocabulary import task_vocabulary

#: PDDL name of the bare table (an ``object``: the Fig. 9 domain has no table type).
TABLE = "table"
_VOCABULARY = task_vocabulary("stacking")
#: Cube colours (RGBA), one cube each.
CUBE_COLOURS: dict[str, tuple[float, float, float, float]] = {
    colour: tuple(rgba) for colour, rgba in _VOCABULARY["cube_colours"].items()}
#: Plate colours (RGBA), one plate each.
PLATE_COLOURS: dict[str, tuple[float, float, float, float]] = {
    colour: tuple(rgba) for colour, rgba in _VOCABULARY["plate_colours"].items()}


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
    """``AgenticEnv/Stacking-v0``: stack coloured cubes on a named plate in a given order.

    **Description.** Three plates (pink, turquoise, cream) stand on the table with three or four
    coloured cubes stacked on them in random piles (as in AgenticLab Fig. 10). The robot must
    build, on the named plate, a single stack with the cubes in the exact bottom-to-top order of
    the instruction, unstacking whatever is in the way. PDDL domain: ``assets/pddl/stacking.pddl``
    (AgenticLab Fig. 9).

    **Randomizations.** Cube count (3 or 4) and colours (from green, orange, blue, yellow,
    purple), the target plate and the order; plate positions (three slots along y, each jittered
    by +-2 cm, shuffled); which plate each cube starts on and the order of each pile (uniform,
    never the goal itself); each cube's yaw (+-20 deg); the instruction's paraphrase category.

    **Success conditions.** ``on-top-of`` holds for the target plate and the first cube, and for
    each consecutive pair of cubes in the order (tolerances in
    :mod:`agentic_env.tasks.predicates`). Progress is the fraction of those facts that hold.
    """

    name = "stacking"
    #: PDDL name of the bare table.
    table = TABLE
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
        piles = self.sample_piles(rng)
        self._place_fixtures(scene, plate_xy)
        self._place_piles(scene, plate_xy, piles, rng)
        self._instruction = choose_instruction(self.instructions(), rng, instruction_category)

    def sample_piles(self, rng: np.random.Generator) -> dict[str, list[str]]:
        """The cubes of each plate, bottom to top: each active cube on a uniformly drawn
        plate, the piles in uniform order; drawn again while they already are the goal (every
        cube on the target plate in the instruction's order: an episode with nothing to do,
        about 1 in 160 layouts with three cubes)."""
        while True:
            piles: dict[str, list[str]] = {plate: [] for plate in self.plates}
            for colour in rng.permutation(self._active):
                piles[self.plates[int(rng.integers(len(self.plates)))]].append(str(colour))
            if piles[self._target] != self._order:
                return piles

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
        """Instructions for the current goal, one per category (templates:
        ``scenes/tasks/stacking.toml``)."""
        lower = list(self._order)
        riddles = _VOCABULARY["colour_riddles"]
        fields = {"plate": self._target, "order": join_words([c.capitalize() for c in lower]),
                  "cubes": join_words(lower), "bottom": lower[0], "top": lower[-1],
                  "above": join_words(lower[1:]), "above_then": join_words(lower[1:], "then"),
                  "plate_riddle": riddles[self._target],
                  "riddles": join_words([riddles[c] for c in lower])}
        templates = _VOCABULARY["instructions"]
        return [Instruction(templates[category].format(**fields), category)
                for category in CATEGORIES]

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

    def active_cubes(self) -> list[str]:
        """Body (and PDDL) names of the episode's cubes."""
        return [self.cubes[c].name for c in self._active]

    def plate_bodies(self) -> list[str]:
        """Body (and PDDL) names of the plates."""
        return [f"{p}-plate-1" for p in self.plates]

    @property
    def plate_xy(self) -> dict[str, list[float]]:
        """Plate centres (x, y) by colour, base frame, metres."""
        return self._plate_xy
