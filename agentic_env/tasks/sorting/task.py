"""``AgenticEnv/Sorting-v0`` (:class:`SortingTask`): scene, reset, predicates, language.

Rules, words and tunables: :mod:`~agentic_env.tasks.sorting.rules`; expert:
:mod:`agentic_env.experts.sorting`.
"""


from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.trial import TrialSpec
from agentic_env.contract.workcell import TABLE_HEIGHT
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.planar import rects_overlap
from agentic_env.geometry.rotations import rotation_z, yaw_of
from agentic_env.sim.props import BinSpec, ContainerSpec, add_container
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import Box, SceneState
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.catalogue import CATALOGUE, CatalogueEntry
from agentic_env.tasks.instructions import Instruction, choose_instruction, join_words
from agentic_env.tasks.predicates import hand_facts, inside, on_table
from agentic_env.tasks.sorting.rules import (
    BLUE_BIN,
    BOWL,
    CLASSES,
    COLOUR_RIDDLES,
    CONTAINER_WORDS,
    GROUP_WORDS,
    RULE_COLOURS,
    RULES,
    WHITE_BIN,
    Group,
    SortingConfig,
)


class SortingTask:
    """``AgenticEnv/Sorting-v0``: sort everyday objects into containers by a semantic or
    colour rule.

    **Description.** Three to seven objects from :mod:`agentic_env.tasks.catalogue` (fruit, toy
    blocks, toys, tools, packaged food) lie on the table between three static containers: a white
    bin and a blue bin (square, upright walls) and a wide round bowl with sloping sides. The
    instruction states a sorting rule; the robot must put every object the rule selects into its
    container and leave the objects the rule does not mention on the table. Rules
    (``goal["rule"]``):

    * ``fruit``: the fruits into one bin, all other objects into the other (AgenticLab Table V:
      "Sort the fruits into the white bin and all other objects into the blue bin.");
    * ``food_toys``: the food (fruit and packaged food) into the bowl, the toys (toys and toy
      blocks) into a bin; tools stay on the table (the paper's VLA tasks "Grab the food to the
      bowl" / "Grab the toys to the bin");
    * ``colour``: the objects of one colour into one container, those of a second colour into
      another; objects of other colours stay;
    * ``category``: three of the classes fruit / toys / tools / packaged food, each into its own
      container; objects of the fourth class stay.

    PDDL domain: ``assets/pddl/sorting.pddl`` (items and containers; ``pick``, ``pick-from``,
    ``place-in``, ``place-on-table``).

    **Randomizations.** The rule; the object count (3-7) and which catalogue objects appear
    (uniform, rejected until every group of the rule is non-empty and each container receives at
    most four objects that fit its two lanes); for ``fruit`` which bin gets the fruit, for
    ``food_toys`` which bin gets the toys, for ``colour`` the two colours and containers, for
    ``category`` the three classes and their containers; which container stands in which of the
    three slots (one on each side of the object area, one behind it) and a +-2 cm jitter of
    each; each object's position (uniform in the free table area, footprints at least 3 cm apart
    and 4.5 cm from the containers, nothing where the open fingers go down to grasp another
    object; by rejection sampling) and yaw (uniform); the instruction's paraphrase category.

    **Success conditions.** Every object the rule selects is ``in`` its container: its centre lies
    in the container's interior (over the inner floor, a square or the bowl's circle, from the
    table up to 3 cm above the rim, so fruit poking out of the low bowl counts) and it is not
    held. Every object the rule leaves out is ``on-table``: it rests on the table top (within
    12 mm), outside every container and not held. Both kinds of facts are goal facts (so a plan
    that moves a distractor into a container is wrong, and the reference plan never touches one);
    progress is the fraction of goal facts that hold (distractor facts usually hold from the
    start).
    """

    name = "sorting"
    domain = "sorting"

    def __init__(self, config: SortingConfig | None = None) -> None:
        self.config = config or self.default_config()
        unknown = set(self.config.rules) - set(RULES)
        if unknown:
            raise InvalidConfigError(f"unknown sorting rules {sorted(unknown)}; valid: "
                                     f"{', '.join(RULES)}")
        self.items: dict[str, CatalogueEntry] = {e.name: e for e in CATALOGUE.values()}
        self.containers: dict[str, BinSpec | ContainerSpec] = {
            c.name: c for c in self.config.containers}
        self._active: list[str] = []
        self._rule = "fruit"
        self._groups: list[Group] = []
        self._stay: list[str] = []
        self._slots: dict[str, tuple[str, np.ndarray]] = {}
        self._container_xy: dict[str, np.ndarray] = {}
        self._instruction = Instruction("", "canonical")

    @staticmethod
    def default_config() -> SortingConfig:
        """The configuration used by ``AgenticEnv/Sorting-v0``."""
        return SortingConfig()

    # -- scene ------------------------------------------------------------------------------

    def build(self, builder: SceneBuilder) -> None:
        """Add every catalogue object (unused ones are parked off the table) and the
        containers (static bodies moved at reset)."""
        for entry in self.items.values():
            builder.add_object(entry.spec)
        for index, container in enumerate(self.config.containers):
            if isinstance(container, ContainerSpec):
                add_container(builder.spec, container)  # moved onto the table at reset
                continue
            x, y = self.config.container_slots[index]
            builder.add_bin(container, np.array([x, y, 0.0]))

    def reset(self, scene: SceneState, rng: np.random.Generator,
              instruction_category: str | None) -> None:
        """Sample the rule, the objects, the containers' slots, the layout, the instruction."""
        cfg = self.config
        for _ in range(100):
            self._sample_goal(rng)
            slots = rng.permutation(len(cfg.container_slots))
            container_xy = {
                c.name: np.asarray(cfg.container_slots[s]) + rng.uniform(
                    -cfg.container_jitter, cfg.container_jitter, 2)
                for c, s in zip(cfg.containers, slots, strict=True)}
            layout = self._sample_layout(rng, container_xy)
            if layout is not None:
                break
        else:  # pragma: no cover - the default areas always fit
            raise InvalidConfigError("sorting: no collision-free layout found; enlarge "
                                     "item_area or lower item_counts")
        self._place_containers(scene, container_xy)
        for name, (xy, yaw) in layout.items():
            self._set_pose(scene, name, xy, yaw)
        self._park(scene)
        self._instruction = choose_instruction(self.instructions(), rng, instruction_category)

    def _sample_goal(self, rng: np.random.Generator) -> None:
        cfg = self.config
        rule = str(rng.choice(cfg.rules))
        count = int(rng.choice(cfg.item_counts))
        for _ in range(2000):
            kinds = [str(k) for k in rng.choice(list(CATALOGUE), count, replace=False)]
            active = [CATALOGUE[k].name for k in kinds]
            groups = self._make_groups(rule, active, rng)
            if groups is not None and all(self._fits(g) for g in self._merge(groups)):
                break
        else:  # pragma: no cover
            raise InvalidConfigError(f"sorting: cannot sample {count} objects for rule {rule!r}")
        self._rule, self._active, self._groups = rule, active, groups
        chosen = {item for g in groups for item in g.items}
        self._stay = [name for name in active if name not in chosen]
        self._slots = self._allocate_slots()

    def _make_groups(self, rule: str, active: list[str],
                     rng: np.random.Generator) -> list[Group] | None:
        """The rule's groups over ``active`` objects, or ``None`` if a group would be empty."""
        entries = [self.items[name] for name in active]

        def members(predicate: Any) -> tuple[str, ...]:
            return tuple(e.name for e in entries if predicate(e))

        bins = [WHITE_BIN, BLUE_BIN]
        if rule == "fruit":
            fruit_bin, other_bin = (bins if rng.random() < 0.5 else bins[::-1])
            groups = [Group("fruit", fruit_bin, members(lambda e: e.category == "fruit")),
                      Group("other", other_bin, members(lambda e: e.category != "fruit"))]
        elif rule == "food_toys":
            toy_bin = bins[int(rng.integers(2))]
            groups = [Group("food", BOWL, members(lambda e: "edible" in e.attributes)),
                      Group("toy", toy_bin, members(lambda e: e.category in CLASSES["toy"]))]
        elif rule == "colour":
            present = [c for c in RULE_COLOURS if any(e.colour == c for e in entries)]
            if len(present) < 2:
                return None
            colours = rng.choice(present, 2, replace=False)
            targets = rng.choice(list(self.containers), 2, replace=False)
            groups = [Group(str(c), str(t), members(lambda e, c=c: e.colour == c))
                      for c, t in zip(colours, targets, strict=True)]
        else:  # category
            present = [label for label, cats in CLASSES.items()
                       if any(e.category in cats for e in entries)]
            if len(present) < 3:
                return None
            labels = rng.choice(present, 3, replace=False)
            targets = rng.permutation(list(self.containers))
            groups = [Group(str(label), str(t),
                            members(lambda e, label=label: e.category in CLASSES[str(label)]))
                      for label, t in zip(labels, targets, strict=True)]
        return groups if all(g.items for g in groups) else None

    @staticmethod
    def _merge(groups: Sequence[Group]) -> list[Group]:
        by_container: dict[str, list[str]] = {}
        for group in groups:
            by_container.setdefault(group.container, []).extend(group.items)
        return [Group("", c, tuple(items)) for c, items in by_container.items()]

    def _is_long(self, name: str) -> bool:
        return self.items[name].length > 2 * self.config.lane_offset

    def _fits(self, group: Group) -> bool:
        """At most ``capacity`` objects, and they fit the container's two lanes."""
        longs = sum(self._is_long(name) for name in group.items)
        shorts = len(group.items) - longs
        return len(group.items) <= self.config.capacity and longs + (shorts + 1) // 2 <= 2

    def _allocate_slots(self) -> dict[str, tuple[str, np.ndarray]]:
        """Drop point of each goal object, relative to its container's centre (x, y).

        Each container has two lanes along y; a long object takes a whole lane, two short
        ones share one (one per half).
        """
        d = self.config.lane_offset
        slots: dict[str, tuple[str, np.ndarray]] = {}
        for group in self._merge(self._groups):
            items = sorted(group.items, key=lambda n: (not self._is_long(n), n))
            lane, half = 0, 0
            for name in items:
                lane_x = (-d, d)[min(lane, 1)]
                if self._is_long(name):
                    slots[name] = (group.container, np.array([lane_x, 0.0]))
                    lane += 1
                    continue
                slots[name] = (group.container, np.array([lane_x, (-d, d)[half]]))
                half += 1
                if half == 2:
                    lane, half = lane + 1, 0
        return slots

    def _container_rect(self, name: str, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        return np.asarray(xy, dtype=float), np.asarray(self.containers[name].outer_half), 0.0

    def _item_rect(self, name: str, xy: np.ndarray,
                   yaw: float) -> tuple[np.ndarray, np.ndarray, float]:
        centre, half = self.items[name].footprint
        return np.asarray(xy) + rotation_z(yaw)[:2, :2] @ centre, half, yaw

    def _grip_rect(self, name: str, xy: np.ndarray,
                   yaw: float) -> tuple[np.ndarray, np.ndarray, float]:
        """Where the open fingers go down for the top grasp of ``name`` at (xy, yaw)."""
        entry = self.items[name]
        half = np.array([0.015, entry.grasp_width / 2 + self.config.finger_reach])
        return np.asarray(xy) + rotation_z(yaw)[:2, :2] @ np.asarray(entry.grasp_offset), half, yaw

    def _sample_layout(self, rng: np.random.Generator, container_xy: dict[str, np.ndarray]
                       ) -> dict[str, tuple[np.ndarray, float]] | None:
        """Collision-free (x, y, yaw) of every active object, or ``None``."""
        cfg = self.config
        x0, x1, y0, y1 = cfg.item_area
        walls = [self._container_rect(c, xy) for c, xy in container_xy.items()]
        order = sorted(self._active, key=lambda n: -float(np.prod(self.items[n].footprint[1])))
        for _ in range(50):
            placed: dict[str, tuple[np.ndarray, float]] = {}
            rects: list[tuple[np.ndarray, np.ndarray, float]] = []
            grips: list[tuple[np.ndarray, np.ndarray, float]] = []
            for name in order:
                for _ in range(200):
                    yaw = float(rng.uniform(-np.pi, np.pi))
                    xy = rng.uniform([x0, y0], [x1, y1])
                    rect = self._item_rect(name, xy, yaw)
                    corners = rect[0] + (rotation_z(yaw)[:2, :2] @ (rect[1] * np.array(
                        [[1, 1], [1, -1], [-1, 1], [-1, -1]])).T).T
                    if (corners.min(axis=0) < [x0, y0]).any() or (
                            corners.max(axis=0) > [x1, y1]).any():
                        continue
                    if any(rects_overlap(rect, w, cfg.container_gap) for w in walls):
                        continue
                    if any(rects_overlap(rect, r, cfg.item_gap) for r in rects):
                        continue
                    grip = self._grip_rect(name, xy, yaw)
                    if any(rects_overlap(grip, r, 0.005) for r in rects) or any(
                            rects_overlap(rect, g, 0.005) for g in grips):
                        continue
                    placed[name] = (xy, yaw)
                    rects.append(rect)
                    grips.append(grip)
                    break
                else:
                    break
            if len(placed) == len(order):
                return placed
        return None

    def _set_pose(self, scene: SceneState, name: str, xy: np.ndarray, yaw: float,
                  z: float | None = None) -> None:
        """Rest ``name`` at (x, y) turned by ``yaw`` about the vertical, 1 mm above ``z``."""
        entry = self.items[name]
        base = 0.0 if z is None else z
        scene.set_free_body_pose(name, np.array([xy[0], xy[1], base + entry.rest_height + 1e-3]),
                                 0.0)
        yaw_quat = np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
        quat = np.zeros(4)
        mujoco.mju_mulQuat(quat, yaw_quat, np.asarray(entry.rest_quat, dtype=float))
        adr = scene.model.jnt_qposadr[scene.model.body(name).jntadr[0]]
        scene.data.qpos[adr + 3: adr + 7] = quat

    def _park(self, scene: SceneState) -> None:
        """Unused objects wait 1 mm above the floor behind the robot, out of the workspace
        (:meth:`_float_parked`)."""
        x, y = self.config.park_position
        unused = [name for name in self.items if name not in self._active]
        for index, name in enumerate(unused):
            xy = np.array([x - 0.2 * (index % 2), y + 0.2 * (index // 2)])
            self._set_pose(scene, name, xy, 0.0, z=-TABLE_HEIGHT)
        self._float_parked(scene)

    def _float_parked(self, scene: SceneState) -> None:
        """Compensate gravity on the unused objects and on them alone: a parked object stays
        where it was put, 1 mm above the floor, and touches nothing, so the ten or so of
        them cost the physics no contacts (resting on the floor they made two thirds of the
        scene's contacts)."""
        for name in self.items:
            body = scene.model.body(name).id
            scene.model.body_gravcomp[body] = 0.0 if name in self._active else 1.0

    def _place_containers(self, scene: SceneState, container_xy: dict[str, np.ndarray]) -> None:
        for name, xy in container_xy.items():
            body = scene.model.body(name).id
            scene.model.body_pos[body] = scene.base_pos + [xy[0], xy[1], 0.0]
        self._container_xy = {name: np.asarray(xy, dtype=float)
                              for name, xy in container_xy.items()}

    @property
    def dressing_keepout(self) -> list[list[float]]:
        """Base-frame rectangles ``[x0, x1, y0, y1]`` a setting's clutter must avoid: the
        object area and each container (grown by 3 cm)."""
        x0, x1, y0, y1 = self.config.item_area
        rects = [[x0, x1, y0, y1]]
        for name, xy in self._container_xy.items():
            hx, hy = np.asarray(self.containers[name].outer_half) + 0.03
            rects.append([float(xy[0] - hx), float(xy[0] + hx), float(xy[1] - hy),
                          float(xy[1] + hy)])
        return rects

    # -- trial state ------------------------------------------------------------------------

    def trial_state(self) -> dict[str, Any]:
        """Container positions and the objects on the table."""
        return {"container_xy": {n: [float(v) for v in xy]
                                 for n, xy in self._container_xy.items()},
                "items": list(self._active)}

    def apply_trial(self, scene: SceneState, trial: TrialSpec) -> None:
        """Restore containers, objects on the table, goal and instruction from ``trial``."""
        state, goal = trial.task_state, trial.goal
        names = set(state["items"]) | set(goal["stay"]) | {
            i for g in goal["groups"] for i in g["items"]}
        containers = set(state["container_xy"]) | {g["container"] for g in goal["groups"]}
        if names - set(self.items) or containers - set(self.containers) or (
                goal["rule"] not in RULES):
            raise InvalidConfigError(
                f"sorting trial names unknown objects {sorted(names - set(self.items))}, "
                f"containers {sorted(containers - set(self.containers))} or rule "
                f"{goal['rule']!r}; objects: {', '.join(self.items)}; containers: "
                f"{', '.join(self.containers)}; rules: {', '.join(RULES)}")
        self._active = list(state["items"])
        self._rule = goal["rule"]
        self._groups = [Group(g["label"], g["container"], tuple(g["items"]))
                        for g in goal["groups"]]
        self._stay = list(goal["stay"])
        self._slots = self._allocate_slots()
        self._float_parked(scene)
        self._place_containers(scene, {n: np.asarray(xy)
                                       for n, xy in state["container_xy"].items()})
        self._instruction = Instruction(trial.instruction, trial.instruction_category)

    def goal(self) -> dict[str, Any]:
        """``{"rule", "groups": [{"label", "container", "items"}], "assignment": {object:
        container}, "stay": [objects left on the table]}``."""
        return {
            "rule": self._rule,
            "groups": [{"label": g.label, "container": g.container, "items": list(g.items)}
                       for g in self._groups],
            "assignment": self.assignment(),
            "stay": list(self._stay),
        }

    def assignment(self) -> dict[str, str]:
        """Goal object -> its container."""
        return {item: g.container for g in self._groups for item in g.items}

    # -- language ---------------------------------------------------------------------------

    def _group_words(self, group: Group, style: str) -> str:
        if group.label in GROUP_WORDS:
            return GROUP_WORDS[group.label][style]
        colour = group.label
        return {"plain": f"{colour} objects", "lexical": f"{colour} items",
                "riddle": f"everything the colour of {COLOUR_RIDDLES[colour]}"}[style]

    def instructions(self) -> list[Instruction]:
        """Instructions for the current goal, at least one per category."""
        groups = self._groups
        plain = [(self._group_words(g, "plain"), CONTAINER_WORDS[g.container]["plain"])
                 for g in groups]
        lexical = [(self._group_words(g, "lexical"), CONTAINER_WORDS[g.container]["lexical"])
                   for g in groups]
        riddle = [(self._group_words(g, "riddle"), CONTAINER_WORDS[g.container]["riddle"])
                  for g in groups]
        leave = "" if self._rule == "fruit" else " Leave everything else on the table."
        if self._rule == "fruit":
            paper = (f"Sort the fruits into the {plain[0][1]} and all other objects into the "
                     f"{plain[1][1]}.")
        elif self._rule == "food_toys":
            paper = f"Grab the food to the {plain[0][1]} and the toys to the {plain[1][1]}."
        else:
            paper = "Sort " + join_words([f"the {w} into the {c}" for w, c in plain]) + "."
        canonical = "Put " + join_words([self._the(w) + f" in the {c}" for w, c in plain])
        lexical_text = "Place " + join_words([self._the(w) + f" inside the {c}"
                                              for w, c in lexical])
        first, *rest = plain
        syntactic = (f"Could you move {self._the(first[0])} to the {first[1]}, and then "
                     + join_words([self._the(w) + f" to the {c}" for w, c in rest]) + "?")
        semantic = ("hey, quick tidy-up pls :) " + ", ".join(
            f"{w} -> {c}" for w, c in plain) + (", rest stays put" if leave else "")
            + ". thx!!")
        high = ("Tidy up: " + join_words([f"{w} goes into {c}" for w, c in riddle]) + "."
                + (" Anything else stays where it is." if leave else ""))
        return [
            Instruction(paper, "paper"),
            Instruction(canonical + "." + leave, "canonical"),
            Instruction(lexical_text + "." + leave.replace("Leave everything else on the table",
                                                           "Do not move the other items"),
                        "lexical"),
            Instruction(syntactic + (" The remaining objects should stay on the table."
                                     if leave else ""), "syntactic"),
            Instruction(semantic, "semantic"),
            Instruction(high, "high_level"),
        ]

    @staticmethod
    def _the(words: str) -> str:
        return words if words.startswith("all ") else f"the {words}"

    def instruction(self) -> Instruction:
        """The episode's instruction."""
        return self._instruction

    # -- symbolic model ---------------------------------------------------------------------

    def interior(self, scene: SceneState, container: str) -> Box:
        """A container's interior box (base frame): the box around its inner floor, from the
        table top up to ``headroom`` above the rim (a round container's interior is the
        cylinder inside it: :meth:`contains`)."""
        spec = self.containers[container]
        centre = scene.body_position(container)
        half = np.array([*spec.inner_size, 0.0])
        low = centre - half
        high = centre + half
        high[2] = centre[2] + spec.wall_height + self.config.headroom
        return Box(low, high)

    def contains(self, scene: SceneState, container: str, point: np.ndarray) -> bool:
        """Whether ``point`` (base frame (3,), metres) lies in the container's interior: over
        its inner floor (a square's or a circle's) and within :meth:`interior`'s heights."""
        offset = np.asarray(point) - scene.body_position(container)
        return (self.interior(scene, container).contains(point)
                and self.containers[container].holds_xy(offset[:2]))

    def in_container(self, scene: SceneState, item: str, container: str) -> bool:
        """``in item container`` (see :class:`SortingTask`)."""
        offset = scene.body_position(item) - scene.body_position(container)
        return (inside(scene, item, self.interior(scene, container))
                and self.containers[container].holds_xy(offset[:2]))

    def on_table_outside(self, scene: SceneState, item: str) -> bool:
        """``on-table item``: resting on the table top, outside every container, not held."""
        return on_table(scene, item) and not any(
            self.contains(scene, c, scene.body_position(item)) for c in self.containers)

    def pddl_objects(self) -> dict[str, str]:
        """The objects on the table (type item) and the three containers (type container)."""
        objects = {name: "item" for name in self._active}
        objects.update({name: "container" for name in self.containers})
        return objects

    def facts(self, scene: SceneState) -> set[str]:
        """holding / hand-empty / in / on-table over the objects on the table. An object
        outside every container that is not held is ``on-table``: loose, where the hand can
        take it again, whether it lies on the table top or was left leaning on a rim or on
        other objects (the domain has no other place for it, and a state that leaves an
        object without a place has no plan). Scoring reads the stricter
        :meth:`on_table_outside`."""
        facts = hand_facts(scene, self._active)
        for name in self._active:
            if f"holding {name}" in facts:
                continue
            position = scene.body_position(name)
            containing = [c for c in self.containers if self.contains(scene, c, position)]
            facts.update(f"in {name} {c}" for c in containing)
            if not containing:
                facts.add(f"on-table {name}")
        return facts

    def goal_facts(self) -> list[str]:
        """``in`` for every goal object, ``on-table`` for every object the rule leaves out."""
        return ([f"in {item} {c}" for item, c in self.assignment().items()]
                + [f"on-table {name}" for name in self._stay])

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """Success when every goal fact holds; progress = fraction holding."""
        terms = {}
        for fact in self.goal_facts():
            parts = fact.split()
            if parts[0] == "in":
                terms[fact] = float(self.in_container(scene, parts[1], parts[2]))
            else:
                terms[fact] = float(self.on_table_outside(scene, parts[1]))
        return TaskEvaluation(all(v > 0.5 for v in terms.values()),
                              float(np.mean(list(terms.values()))), terms)

    # -- poses and free space (used by the expert) -----------------------------------------

    def rest_yaw(self, scene: SceneState, name: str) -> float:
        """Yaw of the object's rest frame (x = long axis) about the vertical, radians."""
        rotation = scene.body_rotation(name) @ self.items[name].rest_rotation.T
        return yaw_of(rotation)


    def free_spot(self, scene: SceneState, name: str, near: np.ndarray) -> np.ndarray:
        """A table spot (x, y) in the item area where ``name`` at its current yaw touches
        nothing, nearest to ``near`` (x, y; the expert passes the TCP's), base frame, m."""
        cfg = self.config
        x0, x1, y0, y1 = cfg.item_area
        yaw = self.rest_yaw(scene, name)
        walls = [self._container_rect(c, scene.body_position(c)[:2]) for c in self.containers]
        others = [self._item_rect(o, scene.body_position(o)[:2], self.rest_yaw(scene, o))
                  for o in self._active if o != name]
        best, best_distance = np.array([(x0 + x1) / 2, (y0 + y1) / 2]), np.inf
        for x in np.arange(x0 + 0.03, x1 - 0.03, 0.02):
            for y in np.arange(y0 + 0.03, y1 - 0.03, 0.02):
                rect = self._item_rect(name, np.array([x, y]), yaw)
                if any(rects_overlap(rect, w, cfg.container_gap) for w in walls) or any(
                        rects_overlap(rect, o, cfg.item_gap) for o in others):
                    continue
                distance = float(np.linalg.norm(rect[0] - near))
                if distance < best_distance:
                    best, best_distance = rect[0], distance
        return best

    def drop_offset(self, item: str, container: str) -> np.ndarray:
        """Drop point (x, y) of ``item`` in ``container`` relative to the container's centre,
        metres: the item's lane slot there, else the centre (an item the goal does not put
        into that container)."""
        slot_container, offset = self._slots.get(item, (container, np.zeros(2)))
        if slot_container != container:
            offset = np.zeros(2)
        return offset


def cluttered_sorting_task() -> SortingTask:
    """Sorting in a cluttered scene (``sorting-cluttered``, the paper's Fig. 8a setting): five
    or six objects packed into a 24 x 36 cm patch with footprints only 8 mm apart, so a
    detector's box around one object takes in its neighbours. Everything else (rules,
    containers, goal, scoring, the PDDL domain) is the sorting task's."""
    task = SortingTask(replace(SortingTask.default_config(), item_counts=(5, 6),
                               item_area=(0.30, 0.54, -0.18, 0.18), item_gap=0.008))
    task.name = "sorting-cluttered"
    return task
