"""Sorting rules: rule and class names, container names, their words, tunables, groups.

The words are data (``scenes/tasks/sorting.toml``); positions are in the robot base frame,
metres.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentic_env.sim.props import BinSpec, ContainerSpec
from agentic_env.tasks.vocabulary import task_vocabulary

RULES: tuple[str, ...] = ("fruit", "food_toys", "colour", "category")
#: Classes of the ``category`` rule and ``food_toys``: label -> catalogue categories.
CLASSES: dict[str, tuple[str, ...]] = {
    "fruit": ("fruit",),
    "toy": ("toy", "block"),
    "tool": ("tool",),
    "packaged": ("food",),
}
#: Colours the ``colour`` rule may name.
RULE_COLOURS: tuple[str, ...] = ("red", "yellow", "green", "blue")
WHITE_BIN, BLUE_BIN, BOWL = "white-bin", "blue-bin", "bowl"

_VOCABULARY = task_vocabulary("sorting")
#: How each group of objects is named, per paraphrase style (plain, lexical, riddle).
GROUP_WORDS: dict[str, dict[str, str]] = _VOCABULARY["group_words"]
#: What a colour is "the colour of", for the riddle paraphrases.
COLOUR_RIDDLES: dict[str, str] = _VOCABULARY["colour_riddles"]
#: Container names per paraphrase style.
CONTAINER_WORDS: dict[str, dict[str, str]] = _VOCABULARY["container_words"]


@dataclass(frozen=True)
class SortingConfig:
    """Tunables of the sorting task.

    Attributes:
        item_counts: allowed numbers of objects on the table (sampled uniformly).
        rules: allowed rules (sampled uniformly), from :data:`RULES`.
        containers: the three containers (names are PDDL objects): two square bins and a
            round bowl with sloping sides.
        container_slots: nominal container centres (x, y), base frame, metres.
        container_jitter: uniform jitter of each container centre per axis, metres.
        item_area: (x_min, x_max, y_min, y_max) that object footprints lie in, metres.
        item_gap: smallest gap between two object footprints at reset, metres.
        container_gap: smallest gap between an object footprint and a container's outer
            walls at reset (room for the open fingers), metres.
        finger_reach: how far the open fingers reach beyond half the grasp width on each side
            of the grasp point, along the closing axis (1 cm opening margin, the pads, and
            the carriages for tall neighbours), metres. At reset no other object lies in the
            fingers' way, so a top grasp never lands a finger on a neighbour.
        capacity: most objects one container receives.
        lane_offset: distance of each of a container's two lanes (along y) from its centre,
            and of a lane's two half slots from the lane's middle, metres.
        headroom: height above the rim that a container's interior box reaches, metres.
        drop_clearance: height of the held object's bottom (and the fingertips) above the
            rim when the expert releases it, metres.
        park_position: (x, y) of the first parked (unused) object, on the floor behind the
            robot, metres.
    """

    item_counts: tuple[int, ...] = (3, 4, 5, 6, 7)
    rules: tuple[str, ...] = RULES
    containers: tuple[BinSpec | ContainerSpec, ...] = field(default_factory=lambda: (
        BinSpec(WHITE_BIN, (0.10, 0.10), 0.06, 0.008, (0.93, 0.93, 0.91, 1.0)),
        BinSpec(BLUE_BIN, (0.10, 0.10), 0.06, 0.008, (0.15, 0.35, 0.80, 1.0)),
        # wide enough for two lanes of objects (a 10 cm pack in a half lane reaches 12.8 cm
        # from the centre, onto the foot of the side); sides 6 cm high as the bins' (a place
        # sees what rises 5 cm above a floor as walls and keeps the fingers off them) and
        # leaning out 0.15 rad, steeper than a salad bowl's
        ContainerSpec(BOWL, inner_radius=0.12, wall_height=0.06, wall_thickness=0.008,
                      rgba=(0.80, 0.52, 0.32, 1.0), flare=0.15),
    ))
    container_slots: tuple[tuple[float, float], ...] = ((0.44, -0.36), (0.66, 0.0),
                                                        (0.44, 0.36))
    container_jitter: float = 0.02
    item_area: tuple[float, float, float, float] = (0.26, 0.62, -0.30, 0.30)
    item_gap: float = 0.03
    container_gap: float = 0.045
    finger_reach: float = 0.03
    capacity: int = 4
    lane_offset: float = 0.05
    headroom: float = 0.03
    drop_clearance: float = 0.012
    park_position: tuple[float, float] = (-0.6, -0.8)


@dataclass(frozen=True)
class Group:
    """Objects of one rule group and their container.

    Attributes:
        label: a key of :data:`GROUP_WORDS` or a colour word.
        container: container name.
        items: body names.
    """

    label: str
    container: str
    items: tuple[str, ...]
