"""``AgenticEnv/Tabletop-v0`` (:class:`TabletopTask`): scene, reset, scoring, language.

The scripted expert is :mod:`agentic_env.experts.tabletop`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentic_env.contract.trial import TrialSpec
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.props import BinSpec, ObjectSpec
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.instructions import Instruction, join_words
from agentic_env.tasks.vocabulary import task_vocabulary

#: Cube colours (RGBA) the configuration may name.
_CUBE_COLOURS: dict[str, tuple[float, float, float, float]] = {
    colour: tuple(rgba) for colour, rgba in task_vocabulary("tabletop")["cube_colours"].items()}


@dataclass(frozen=True)
class TabletopConfig:
    """Tunables of the tabletop task.

    Attributes:
        cube_colours: names of the cubes' colours (one cube each, from red, green, blue,
            yellow).
        cube_half_size: half edge of the cubes, metres.
        cube_area: (x_min, x_max, y_min, y_max) where cubes start, base frame, metres.
        min_separation: smallest distance between cube centres at reset, metres.
        bin_position: nominal bin floor centre (x, y), base frame, metres.
        bin_jitter: uniform jitter of the bin position per axis, metres.
    """

    cube_colours: tuple[str, ...] = ("red", "green", "blue")
    cube_half_size: float = 0.02
    cube_area: tuple[float, float, float, float] = (0.35, 0.65, -0.05, 0.35)
    min_separation: float = 0.09
    bin_position: tuple[float, float] = (0.5, -0.32)
    bin_jitter: float = 0.03
    bin: BinSpec = field(default_factory=lambda: BinSpec("bin"))


class TabletopTask:
    """``AgenticEnv/Tabletop-v0``: put every cube in the bin.

    **Description.** A few coloured cubes lie on the table in front of the robot; a bin stands to
    its right. The robot must put every cube into the bin.

    **Randomizations.** Cube positions (uniform in a 30 x 40 cm area, at least 9 cm apart, by
    rejection sampling) and yaws (uniform); the bin's position jitters by +-3 cm.

    **Success conditions.** Every cube's centre lies inside the bin's inner footprint and below the
    top of its walls. Progress is the fraction of cubes in the bin.
    """

    name = "tabletop"

    def __init__(self, config: TabletopConfig | None = None) -> None:
        self.config = config or self.default_config()
        self.cubes = [
            ObjectSpec(f"{colour}_cube", "box", (self.config.cube_half_size,) * 3,
                       _CUBE_COLOURS[colour], mass=0.05, attributes={"colour": colour})
            for colour in self.config.cube_colours
        ]
        self._bin_position = np.array([*self.config.bin_position, 0.0])

    @staticmethod
    def default_config() -> TabletopConfig:
        """The configuration used by ``AgenticEnv/Tabletop-v0``."""
        return TabletopConfig()

    def build(self, builder: SceneBuilder) -> None:
        """Add the cubes (free) and the bin (a mocap-free static body moved at reset)."""
        for cube in self.cubes:
            builder.add_object(cube)
        builder.add_bin(self.config.bin, self._bin_position)

    def reset(self, scene: SceneState, rng: np.random.Generator,
              instruction_category: str | None = None) -> None:
        """Jitter the bin, then place cubes by rejection sampling."""
        cfg = self.config
        if instruction_category not in (None, "canonical"):
            raise InvalidConfigError(
                f"tabletop has only 'canonical' instructions, not {instruction_category!r}"
            )
        jitter = rng.uniform(-cfg.bin_jitter, cfg.bin_jitter, size=2)
        self._place_bin(scene, self._bin_position[:2] + jitter)
        x0, x1, y0, y1 = cfg.cube_area
        placed: list[np.ndarray] = []
        for cube in self.cubes:
            for _ in range(1000):
                xy = rng.uniform([x0, y0], [x1, y1])
                if all(np.linalg.norm(xy - other) >= cfg.min_separation for other in placed):
                    break
            placed.append(xy)
            position = np.array([*xy, cube.half_height + 1e-3])
            scene.set_free_body_pose(cube.name, position, rng.uniform(-np.pi, np.pi))

    def _place_bin(self, scene: SceneState, xy: np.ndarray) -> None:
        """Move the bin to ``xy`` (base frame, metres) and look up, once per episode, the body
        ids that the success check reads (by name, a lookup costs more than the check)."""
        self._bin_id = scene.model.body(self.config.bin.name).id
        self._cube_ids = np.array([scene.model.body(cube.name).id for cube in self.cubes])
        scene.model.body_pos[self._bin_id, :2] = scene.base_pos[:2] + xy
        self._bin_xy = [float(v) for v in xy]

    def trial_state(self) -> dict[str, Any]:
        """The bin position (x, y), base frame, metres."""
        return {"bin_xy": self._bin_xy}

    def apply_trial(self, scene: SceneState, trial: TrialSpec) -> None:
        """Restore the bin position."""
        self._place_bin(scene, np.asarray(trial.task_state["bin_xy"]))

    def goal(self) -> dict[str, Any]:
        """``{"in_bin": [cube names]}``."""
        return {"in_bin": [cube.name for cube in self.cubes]}

    def instruction(self) -> Instruction:
        """E.g. "Put the red, green and blue cubes in the bin."."""
        colours = join_words(list(self.config.cube_colours))
        return Instruction(f"Put the {colours} cubes in the bin.", "canonical")

    def bin_floor(self, scene: SceneState) -> np.ndarray:
        """Bin floor centre in the base frame (3,), metres (privileged). Read from the
        simulator at every call: a disturbance may shift the bin within an episode."""
        return scene.data.xpos[self._bin_id] - scene.base_pos

    def cubes_in_bin(self, scene: SceneState) -> np.ndarray:
        """Whether each cube of :attr:`cubes` (in order) has its centre inside the bin's
        footprint and below its rim, (n,) bool."""
        relative = (scene.data.xpos[self._cube_ids] - scene.base_pos) - self.bin_floor(scene)
        half = np.asarray(self.config.bin.inner_size)
        return (np.all(np.abs(relative[:, :2]) <= half, axis=1)
                & (relative[:, 2] > 0.0) & (relative[:, 2] < self.config.bin.wall_height))

    def cube_in_bin(self, scene: SceneState, cube: ObjectSpec) -> bool:
        """Whether ``cube``'s centre is inside the bin's footprint and below its rim."""
        return bool(self.cubes_in_bin(scene)[self.cubes.index(cube)])

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """Success when every cube is in the bin; progress = fraction in the bin."""
        inside = [bool(flag) for flag in self.cubes_in_bin(scene)]
        terms = {f"{cube.name}_in_bin": float(flag) for cube, flag in zip(self.cubes, inside,
                                                                             strict=True)}
        return TaskEvaluation(all(inside), float(np.mean(inside)), terms)
