"""``AgenticEnv/Crossword-v0``: fill the numbered slots of a crossword board with letter blocks.

**Description.** A dark board lies flat on one side of the table. Light square tiles on it are
the crossword's numbered slots (1, 2, ... in reading order; each tile shows its number large
in the middle, where the block goes, and small in its top-left corner); they form one to three
intersecting words from a built-in list of common 3-5 letter words (:data:`WORDS`), words
crossing at a shared slot. Letter blocks (4 cm cubes showing their capital on every face) lie
on the other side of the table: one block per slot plus two or three distractors whose
letters are not in the puzzle. Sometimes a slot starts filled with its correct block (a given
letter), or with a distractor block that must be taken out first. The instruction gives the
words and their slots, or only clues (``high_level``: "1 across (slots 1, 2, 3): a pet that
barks"), which need world knowledge. PDDL domain: ``assets/pddl/crossword.pddl``;
the goal says which block fills which slot (:meth:`CrosswordTask.goal_facts`), blocks of the
same letter being interchangeable for success.

**Randomizations.** The number of words (1-3), the words and how they cross (uniform over
the valid placements: words only touch where they cross); the distractor count (2 or 3) and
letters; which block carries which letter (block names say nothing about letters) and each
block's tint; the board side (left or right of the robot), its centre (+-2 cm) and yaw
(+-4.6 deg); the blocks' table positions (a 4 x 4 grid of spots 11 cm apart on the other side,
each jittered by +-1.5 cm) and yaws (+-23 deg, letters facing the shoulder camera); a given
letter (25 %) and a misplaced distractor in a slot (25 %); the instruction's paraphrase
category.

**Success conditions.** Every slot holds a block with the slot's letter: ``in-slot`` (see
:func:`in_slot`) holds for it and some block of that letter. Progress is the fraction of
slots so filled.

Geometry of ``in-slot`` (part of the benchmark's definition of success): the block's centre
lies within ``slot_tolerance`` (1.5 cm) of the slot's centre in x-y, its lowest point is
within the ``contact_gap`` (12 mm) of the board top, one of its faces is up (a body axis within
15 deg of vertical), its faces are within ``yaw_tolerance_deg`` (20 deg) of the slot's axes
(modulo 90 deg: any face may point any way, the letter is on all of them) and it is not held.
``on-table`` holds for a block that rests (lowest point within the contact gap) on the table
or loose on the board outside every slot; ``slot-empty`` for a slot no block is in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.actions import pick, place, top_down_pose
from agentic_env.contract.trial import TrialSpec
from agentic_env.contract.workcell import ROBOT_PREFIX, TABLE_HEIGHT
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.rotations import yaw_of
from agentic_env.pddl.planning import PlanStep
from agentic_env.robot.constants import (
    ARM_JOINTS,
    HOME_JOINT_POSITIONS,
    TCP_SITE,
    TCP_TO_FINGERTIP,
)
from agentic_env.sim.letters import (
    LETTERS,
    add_letter_textures,
    add_slot_textures,
    letter_texture_name,
    slot_texture_name,
)
from agentic_env.sim.props import PROP_FRICTION, PROP_SOLREF
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import SceneState, body_box, holding
from agentic_env.tasks import symbolic
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.instructions import Instruction, choose_instruction
from agentic_env.tasks.predicates import DEFAULT_TOLERANCES

#: Common words (capitals) and a clue for each, for the high-level instructions.
WORDS: dict[str, str] = {
    "ANT": "a tiny insect that lives in a colony",
    "ARM": "the limb between your shoulder and your hand",
    "BED": "the furniture you sleep in",
    "BEE": "an insect that makes honey",
    "BOX": "a container with six flat sides",
    "BUS": "a long vehicle that carries many passengers",
    "CAT": "a pet that purrs",
    "COW": "a farm animal that gives milk",
    "CUP": "you drink tea from it",
    "DOG": "a pet that barks",
    "EAR": "you hear with it",
    "EGG": "a hen lays it",
    "EYE": "you see with it",
    "HAT": "you wear it on your head",
    "ICE": "frozen water",
    "KEY": "it opens a lock",
    "MAP": "a drawing that shows the way",
    "OAK": "a tree that grows acorns",
    "OWL": "a bird that hoots at night",
    "PEN": "you write with it",
    "PIG": "a pink farm animal that oinks",
    "RED": "the colour of a ripe tomato",
    "SEA": "a large body of salt water",
    "SUN": "the star at the centre of our solar system",
    "TEA": "a hot drink brewed from leaves",
    "TEN": "the number after nine",
    "TOE": "one of the five digits on your foot",
    "BEAR": "a big furry animal that hibernates",
    "BELL": "it rings",
    "BIRD": "an animal with feathers and wings",
    "BOAT": "it floats on water and carries people",
    "BOOK": "you read it",
    "CAKE": "a sweet baked treat for a birthday",
    "COAT": "you wear it over your clothes when it is cold",
    "CORN": "a tall crop with yellow kernels on a cob",
    "DOOR": "you open it to enter a room",
    "DUCK": "a bird that quacks",
    "FISH": "an animal that swims and breathes through gills",
    "FROG": "a green amphibian that croaks",
    "GOAT": "a farm animal with horns and a beard",
    "HAND": "it has five fingers",
    "KITE": "it flies on a string in the wind",
    "LAMP": "it gives light on a desk",
    "LION": "the king of the jungle",
    "MILK": "a white drink from cows",
    "MOON": "it circles the Earth and lights the night",
    "NINE": "the number after eight",
    "NOSE": "you smell with it",
    "RAIN": "water falling from the clouds",
    "ROSE": "a fragrant flower with thorns",
    "SALT": "white crystals that make food salty",
    "SHOE": "you wear it on your foot",
    "SNOW": "white flakes that fall in winter",
    "SOAP": "you wash your hands with it",
    "STAR": "it twinkles in the night sky",
    "TREE": "a tall plant with a trunk and branches",
    "WOLF": "a wild animal that howls at the moon",
    "APPLE": "a fruit that keeps the doctor away",
    "BEACH": "sandy land at the edge of the sea",
    "BREAD": "a baked loaf you slice for sandwiches",
    "CHAIR": "you sit on it",
    "CLOCK": "it tells the time",
    "CLOUD": "a white puff floating in the sky",
    "EARTH": "the planet we live on",
    "GRAPE": "a small fruit that grows in bunches and makes wine",
    "HEART": "the organ that pumps blood",
    "HORSE": "an animal you can ride",
    "HOUSE": "a building people live in",
    "LEMON": "a sour yellow fruit",
    "OCEAN": "a vast body of salt water, like the Pacific",
    "ONION": "a vegetable that makes you cry when you cut it",
    "PIANO": "an instrument with black and white keys",
    "PLANT": "a living thing that grows from a seed",
    "RIVER": "a stream of fresh water that flows to the sea",
    "SEVEN": "the number after six",
    "SHEEP": "a farm animal that gives wool",
    "SPOON": "you eat soup with it",
    "TABLE": "furniture with a flat top and legs",
    "TIGER": "a big striped cat",
    "TRAIN": "it runs on rails",
    "WATER": "you drink it when you are thirsty",
    "ZEBRA": "a striped African horse",
}

#: Tints of the block faces (multiplied with the white face; the letters stay dark).
BLOCK_TINTS: tuple[tuple[float, float, float, float], ...] = (
    (1.00, 0.93, 0.62, 1.0),  # butter
    (0.72, 0.86, 1.00, 1.0),  # sky
    (0.74, 0.95, 0.72, 1.0),  # mint
    (1.00, 0.78, 0.82, 1.0),  # rose
    (1.00, 0.82, 0.62, 1.0),  # apricot
    (0.86, 0.80, 1.00, 1.0),  # lavender
    (0.93, 0.86, 0.72, 1.0),  # wood
    (0.96, 0.96, 0.96, 1.0),  # white
)
BOARD_RGBA = (0.16, 0.16, 0.18, 1.0)
#: Static bodies not in use are moved this far below the table (out of sight), metres.
_HIDDEN_DEPTH = 5.0
_ACROSS, _DOWN = "across", "down"
_TCP = ROBOT_PREFIX + TCP_SITE
_WRIST_JOINT = ROBOT_PREFIX + ARM_JOINTS[5]
_WRIST_HOME = float(HOME_JOINT_POSITIONS[5])
#: Largest wrist-3 angle the expert plans for (the joint stops at +-2 pi), rad.
_WRIST_LIMIT = 2 * np.pi - 0.6


@dataclass(frozen=True)
class Entry:
    """One word of a puzzle.

    Attributes:
        word: capitals.
        direction: ``across`` (along the board's x axis) or ``down`` (along its -y axis).
        cells: (column, row) of each letter, rows growing downwards.
    """

    word: str
    direction: str
    cells: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Puzzle:
    """A crossword: its words and its slots.

    Attributes:
        entries: the words, in the order they were placed.
        cells: (column, row) of slot ``k + 1`` at index ``k`` (reading order: rows top to
            bottom, columns left to right), normalised so the smallest column and row are 0.
    """

    entries: tuple[Entry, ...]
    cells: tuple[tuple[int, int], ...]

    @property
    def size(self) -> tuple[int, int]:
        """(columns, rows) of the bounding grid."""
        return (max(c for c, _ in self.cells) + 1, max(r for _, r in self.cells) + 1)

    def letter(self, slot: int) -> str:
        """Letter of slot ``slot`` (1-based)."""
        cell = self.cells[slot - 1]
        for entry in self.entries:
            if cell in entry.cells:
                return entry.word[entry.cells.index(cell)]
        raise InvalidConfigError(f"slot {slot} is in no word")

    def slots_of(self, entry: Entry) -> list[int]:
        """Slot numbers (1-based) of ``entry``'s letters, in reading order of the word."""
        return [self.cells.index(cell) + 1 for cell in entry.cells]

    def crossings(self) -> set[int]:
        """Slot numbers shared by two words."""
        shared = set()
        for slot, cell in enumerate(self.cells, start=1):
            if sum(cell in entry.cells for entry in self.entries) > 1:
                shared.add(slot)
        return shared

    def clue_order(self) -> list[Entry]:
        """Entries sorted like a crossword's clue list: by first slot, across first."""
        return sorted(self.entries,
                      key=lambda e: (self.slots_of(e)[0], e.direction != _ACROSS))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (:meth:`from_dict` inverts it)."""
        return {"entries": [{"word": e.word, "direction": e.direction,
                             "cells": [list(c) for c in e.cells]} for e in self.entries],
                "cells": [list(c) for c in self.cells]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Puzzle:
        """Inverse of :meth:`to_dict`."""
        entries = tuple(Entry(e["word"], e["direction"], tuple(tuple(c) for c in e["cells"]))
                        for e in data["entries"])
        return cls(entries, tuple(tuple(c) for c in data["cells"]))


def _word_cells(word: str, direction: str, start: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    dc, dr = (1, 0) if direction == _ACROSS else (0, 1)
    return tuple((start[0] + i * dc, start[1] + i * dr) for i in range(len(word)))


def _consistent(entries: Sequence[Entry], max_size: tuple[int, int], max_slots: int) -> bool:
    """Letters agree where words share a cell; cells touch only within a word; size fits."""
    letters: dict[tuple[int, int], str] = {}
    owner: dict[tuple[tuple[int, int], str], int] = {}
    for index, entry in enumerate(entries):
        for cell, letter in zip(entry.cells, entry.word, strict=True):
            if letters.setdefault(cell, letter) != letter:
                return False
            if (cell, entry.direction) in owner:  # two words along the same line overlap
                return False
            owner[(cell, entry.direction)] = index
    cols = [c for c, _ in letters]
    rows = [r for _, r in letters]
    if (max(cols) - min(cols) + 1 > max_size[0] or max(rows) - min(rows) + 1 > max_size[1]
            or len(letters) > max_slots):
        return False
    for (col, row) in letters:
        for neighbour, direction in (((col + 1, row), _ACROSS), ((col, row + 1), _DOWN)):
            if neighbour in letters:
                # adjacent cells must be consecutive letters of one word along that line
                a, b = owner.get(((col, row), direction)), owner.get((neighbour, direction))
                if a is None or a != b:
                    return False
    return True


def generate_puzzle(rng: np.random.Generator, word_count: int,
                    max_size: tuple[int, int] = (5, 5), max_slots: int = 10,
                    words: Sequence[str] | None = None, attempts: int = 50) -> Puzzle:
    """A random crossword of ``word_count`` distinct words crossing each other.

    The first word runs across; each further word crosses a letter of the puzzle so far at a
    matching letter, perpendicular to the word it crosses, and is chosen uniformly among all
    placements that keep the puzzle consistent (words touch only where they cross) within
    ``max_size`` (columns, rows) and ``max_slots`` slots.

    Raises:
        InvalidConfigError: if no such puzzle was found in ``attempts`` tries.
    """
    vocabulary = sorted(words if words is not None else WORDS)
    for _ in range(attempts):
        first = vocabulary[int(rng.integers(len(vocabulary)))]
        entries = [Entry(first, _ACROSS, _word_cells(first, _ACROSS, (0, 0)))]
        while len(entries) < word_count:
            options = _placements(entries, vocabulary, max_size, max_slots)
            if not options:
                break
            entries.append(options[int(rng.integers(len(options)))])
        if len(entries) == word_count and _consistent(entries, max_size, max_slots):
            return _normalised(entries)
    raise InvalidConfigError(
        f"found no crossword of {word_count} words within {max_size[0]} x {max_size[1]} cells "
        f"and {max_slots} slots; raise max_size or max_slots"
    )


def _placements(entries: list[Entry], vocabulary: Sequence[str], max_size: tuple[int, int],
                max_slots: int) -> list[Entry]:
    used = {entry.word for entry in entries}
    options = []
    for existing in entries:
        direction = _DOWN if existing.direction == _ACROSS else _ACROSS
        for cell, letter in zip(existing.cells, existing.word, strict=True):
            for word in vocabulary:
                if word in used:
                    continue
                for index, candidate in enumerate(word):
                    if candidate != letter:
                        continue
                    dc, dr = (index, 0) if direction == _ACROSS else (0, index)
                    entry = Entry(word, direction,
                                  _word_cells(word, direction, (cell[0] - dc, cell[1] - dr)))
                    if _consistent([*entries, entry], max_size, max_slots):
                        options.append(entry)
    return options


def _normalised(entries: list[Entry]) -> Puzzle:
    cells = {cell for entry in entries for cell in entry.cells}
    col0 = min(c for c, _ in cells)
    row0 = min(r for _, r in cells)
    moved = tuple(Entry(e.word, e.direction, tuple((c - col0, r - row0) for c, r in e.cells))
                  for e in entries)
    ordered = tuple(sorted(((c - col0, r - row0) for c, r in cells), key=lambda c: (c[1], c[0])))
    return Puzzle(moved, ordered)


@dataclass(frozen=True)
class CrosswordConfig:
    """Tunables of the crossword task.

    Attributes:
        word_counts: allowed numbers of words (sampled uniformly).
        max_grid: largest puzzle (columns, rows); the board is this size.
        max_slots: most slots of a puzzle.
        distractor_counts: allowed numbers of extra blocks with letters not in the puzzle.
        block_half_size: half edge of the letter cubes, metres.
        block_mass: kilograms.
        slot_pitch: distance between neighbouring slot centres, metres.
        board_margin: board rim around the largest grid, metres.
        board_half_height: half thickness of the board, metres.
        board_centre: nominal board centre (x, |y|) in the base frame, metres; the side
            (sign of y) is random and the blocks lie on the other side.
        layout_shift_y: added to the y of the board and of every table spot, metres (keeps
            the layout inside the settings' task area, y in [-0.54, 0.43]).
        board_jitter: uniform jitter of the board centre per axis, metres.
        board_yaw_jitter: uniform jitter of the board's yaw, radians.
        block_grid_x: x of the rows of table spots for the blocks, metres.
        block_grid_y: |y| of the columns of table spots, metres (on the side away from the
            board), before ``layout_shift_y``.
        block_jitter: uniform jitter of each block's spot per axis, metres.
        finger_room: room the fingers need around a block's centre, metres (for the clutter
            keep-out).
        block_yaw_jitter: uniform jitter of each block's yaw, radians.
        given_probability: chance that one slot starts filled with its correct block.
        misplaced_probability: chance that one slot starts filled with a distractor.
        slot_tolerance: largest x-y distance of a block's centre from its slot's, metres.
        yaw_tolerance_deg: largest angle between a block's faces and its slot's axes, degrees.
        words: the vocabulary (keys of :data:`WORDS`, which holds their clues).
    """

    word_counts: tuple[int, ...] = (1, 2, 3)
    max_grid: tuple[int, int] = (5, 5)
    max_slots: int = 10
    distractor_counts: tuple[int, ...] = (2, 3)
    block_half_size: float = 0.02
    block_mass: float = 0.05
    slot_pitch: float = 0.065
    board_margin: float = 0.015
    board_half_height: float = 0.004
    board_centre: tuple[float, float] = (0.5, 0.23)
    layout_shift_y: float = -0.04
    board_jitter: float = 0.02
    board_yaw_jitter: float = 0.08
    block_grid_x: tuple[float, ...] = (0.33, 0.44, 0.55, 0.66)
    block_grid_y: tuple[float, ...] = (0.07, 0.18, 0.29, 0.40)
    block_jitter: float = 0.015
    finger_room: float = 0.05
    block_yaw_jitter: float = 0.4
    given_probability: float = 0.25
    misplaced_probability: float = 0.25
    slot_tolerance: float = 0.015
    yaw_tolerance_deg: float = 20.0
    words: tuple[str, ...] = field(default_factory=lambda: tuple(WORDS))

    @property
    def max_blocks(self) -> int:
        """Blocks in the catalogue: a full puzzle plus the most distractors."""
        return self.max_slots + max(self.distractor_counts)

    @property
    def board_half_extent(self) -> tuple[float, float]:
        """Half sizes (x, y) of the board, metres."""
        return (self.max_grid[0] * self.slot_pitch / 2 + self.board_margin,
                self.max_grid[1] * self.slot_pitch / 2 + self.board_margin)

    @property
    def board_top(self) -> float:
        """Height of the board's top above the table, metres."""
        return 2.0 * self.board_half_height


BOARD = "crossword-board"


def block_name(index: int) -> str:
    """Body (and PDDL object) name of catalogue block ``index`` (1-based)."""
    return f"block-{index}"


def slot_name(number: int) -> str:
    """Body (and PDDL object) name of slot ``number`` (1-based)."""
    return f"slot-{number}"


def _wrap(angle: float) -> float:
    """``angle`` wrapped into (-pi, pi]."""
    return float(-((-angle + np.pi) % (2 * np.pi) - np.pi))


def _bearing_change(start: np.ndarray, end: np.ndarray) -> float:
    """Change of bearing (rad) about the robot base from point ``start`` to ``end`` (x, y)."""
    return _wrap(np.arctan2(end[1], end[0]) - np.arctan2(start[1], start[0]))


def face_up_axis(rotation: np.ndarray) -> int:
    """Index of the body axis closest to vertical (up or down)."""
    return int(np.argmax(np.abs(rotation[2])))


def face_yaw(rotation: np.ndarray) -> float:
    """Yaw (rad) of a cube's side faces, folded into [-pi/4, pi/4), whichever face is up."""
    up = face_up_axis(rotation)
    yaw = yaw_of(rotation, (up + 1) % 3)
    return (yaw + np.pi / 4) % (np.pi / 2) - np.pi / 4


def in_slot(scene: SceneState, block: str, slot: str, config: CrosswordConfig,
            held: bool | None = None) -> bool:
    """``block`` sits in ``slot`` (see the module docstring for the tolerances).

    ``held``: whether the block is held, if already known (saves a contact scan).
    """
    centre = scene.body_position(block)
    target = scene.body_position(slot)
    if np.linalg.norm(centre[:2] - target[:2]) > config.slot_tolerance:
        return False
    low = body_box(scene, block).low[2]
    if abs(low - config.board_top) > DEFAULT_TOLERANCES.contact_gap:
        return False
    rotation = scene.body_rotation(block)
    up = face_up_axis(rotation)
    if np.degrees(np.arccos(min(abs(rotation[2, up]), 1.0))) > DEFAULT_TOLERANCES.upright_angle:
        return False
    slot_yaw = yaw_of(scene.body_rotation(slot), 0)
    offset = (face_yaw(rotation) - slot_yaw + np.pi / 4) % (np.pi / 2) - np.pi / 4
    if np.degrees(abs(offset)) > config.yaw_tolerance_deg:
        return False
    return not (holding(scene, block) if held is None else held)


def resting(scene: SceneState, block: str, config: CrosswordConfig) -> bool:
    """The block's lowest point is within the contact gap of the table or the board top."""
    low = body_box(scene, block).low[2]
    gap = DEFAULT_TOLERANCES.contact_gap
    return low <= gap or abs(low - config.board_top) <= gap


class CrosswordTask:
    """Fill a crossword's slots with letter blocks (see the module docstring)."""

    name = "crossword"
    domain = "crossword"

    def __init__(self, config: CrosswordConfig | None = None) -> None:
        self.config = config or self.default_config()
        cfg = self.config
        unknown = sorted({c for word in cfg.words for c in word} - set(LETTERS))
        if unknown or any(not 3 <= len(w) <= max(cfg.max_grid) for w in cfg.words):
            raise InvalidConfigError(
                f"crossword words must be 3..{max(cfg.max_grid)} capitals A-Z; "
                f"bad characters: {unknown}"
            )
        if not cfg.words or any(w not in WORDS for w in cfg.words):
            raise InvalidConfigError(
                f"crossword words must come from WORDS (they need clues): "
                f"{sorted(set(cfg.words) - set(WORDS))}"
            )
        cells = cfg.max_grid[0] * cfg.max_grid[1]
        spots = len(cfg.block_grid_x) * len(cfg.block_grid_y)
        if cfg.max_blocks >= spots:
            raise InvalidConfigError(
                f"{cfg.max_blocks} blocks need more than the {spots} table spots of "
                "block_grid_x x block_grid_y (one stays free for put-downs)"
            )
        if cfg.max_slots > cells:
            raise InvalidConfigError(f"max_slots {cfg.max_slots} exceeds the grid's {cells}")
        self.blocks = [block_name(i + 1) for i in range(cfg.max_blocks)]
        self.slots = [slot_name(i + 1) for i in range(cfg.max_slots)]
        self._puzzle = Puzzle((Entry("CAT", _ACROSS, ((0, 0), (1, 0), (2, 0))),),
                              ((0, 0), (1, 0), (2, 0)))
        self._letters: dict[str, str] = {}
        self._tints: dict[str, list[float]] = {}
        self._assignment: dict[str, str] = {}
        self._board_xy = np.array(cfg.board_centre, float)
        self._board_yaw = 0.0
        self._side = 1.0
        self._instruction = Instruction("", "canonical")

    @staticmethod
    def default_config() -> CrosswordConfig:
        """The configuration used by ``AgenticEnv/Crossword-v0``."""
        return CrosswordConfig()

    # -- scene ------------------------------------------------------------------------------

    def build(self, builder: SceneBuilder) -> None:
        """Add the letter and tile textures, the blocks (one material each), the board and
        the slot tiles (static bodies moved at reset; unused ones hidden under the table)."""
        cfg = self.config
        spec = builder.spec
        add_letter_textures(spec)
        add_slot_textures(spec, range(1, cfg.max_slots + 1))
        half = cfg.block_half_size
        for name in self.blocks:
            material = spec.add_material(name=f"{name}/face", rgba=BLOCK_TINTS[0])
            material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = letter_texture_name("A")
            body = spec.worldbody.add_body(name=name)
            body.add_freejoint(name=f"{name}_free")
            body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=[half] * 3,
                          material=f"{name}/face", mass=cfg.block_mass, condim=4,
                          friction=PROP_FRICTION, solref=PROP_SOLREF)
        hx, hy = cfg.board_half_extent
        board = spec.worldbody.add_body(name=BOARD)
        board.add_geom(name=BOARD, type=mujoco.mjtGeom.mjGEOM_BOX,
                       size=[hx, hy, cfg.board_half_height], pos=[0, 0, cfg.board_half_height],
                       rgba=BOARD_RGBA, solref=PROP_SOLREF, friction=PROP_FRICTION, condim=4)
        tile = (cfg.slot_pitch - 0.004) / 2
        for number, name in enumerate(self.slots, start=1):
            material = spec.add_material(name=f"{name}/tile", rgba=[1, 1, 1, 1])
            material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = slot_texture_name(number)
            body = spec.worldbody.add_body(name=name)
            # visual only, 0.5 mm proud of the board: blocks rest on the board itself
            body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=[tile, tile, 0.0005],
                          pos=[0, 0, cfg.board_top], material=f"{name}/tile",
                          contype=0, conaffinity=0, mass=0.0)

    def reset(self, scene: SceneState, rng: np.random.Generator,
              instruction_category: str | None) -> None:
        """Sample the puzzle, letters, board, block layout, presets and the instruction."""
        cfg = self.config
        count = int(rng.choice(cfg.word_counts))
        self._puzzle = generate_puzzle(rng, count, cfg.max_grid, cfg.max_slots, cfg.words)
        puzzle = self._puzzle
        slot_letters = [puzzle.letter(k) for k in range(1, len(puzzle.cells) + 1)]
        spare = sorted(set(LETTERS) - set(slot_letters))
        distractors = [str(c) for c in rng.choice(spare, int(rng.choice(cfg.distractor_counts)),
                                                  replace=False)]
        letters = slot_letters + distractors
        order = rng.permutation(len(letters))  # block k carries letters[order[k]]
        self._letters = {block_name(k + 1): letters[i] for k, i in enumerate(order)}
        self._tints = {block: list(BLOCK_TINTS[int(rng.integers(len(BLOCK_TINTS)))])
                       for block in self._letters}
        self._assignment = self._assign(slot_letters)
        self._side = float(rng.choice([-1.0, 1.0]))
        self._board_xy = (np.array([cfg.board_centre[0],
                                    self._side * cfg.board_centre[1] + cfg.layout_shift_y])
                          + rng.uniform(-cfg.board_jitter, cfg.board_jitter, 2))
        self._board_yaw = float(rng.uniform(-cfg.board_yaw_jitter, cfg.board_yaw_jitter))
        self._place_fixtures(scene)
        self._place_blocks(scene, rng, distractors)
        self._instruction = choose_instruction(self.instructions(), rng, instruction_category)

    def _assign(self, slot_letters: list[str]) -> dict[str, str]:
        """Goal block of every slot: blocks of a letter in name order, slots in order."""
        free = sorted(self._letters, key=lambda b: int(b.split("-")[1]))
        assignment = {}
        for number, letter in enumerate(slot_letters, start=1):
            block = next(b for b in free if self._letters[b] == letter)
            free.remove(block)
            assignment[slot_name(number)] = block
        return assignment

    def _place_fixtures(self, scene: SceneState) -> None:
        """Board and slot tiles to their poses; letters and tints to the block materials."""
        model = scene.model
        yaw = self._board_yaw
        quat = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        board = model.body(BOARD).id
        model.body_pos[board] = scene.base_pos + [*self._board_xy, 0.0]
        model.body_quat[board] = quat
        slot_xy = self.slot_positions()
        for name in self.slots:
            body = model.body(name).id
            if name in slot_xy:
                model.body_pos[body] = scene.base_pos + [*slot_xy[name], 0.0]
            else:
                model.body_pos[body] = scene.base_pos + [0.0, 0.0, -_HIDDEN_DEPTH]
            model.body_quat[body] = quat
        rgb = int(mujoco.mjtTextureRole.mjTEXROLE_RGB)
        for block in self.blocks:
            material = model.material(f"{block}/face").id
            letter = self._letters.get(block, "A")
            model.mat_texid[material, rgb] = model.texture(letter_texture_name(letter)).id
            model.mat_rgba[material] = self._tints.get(block, BLOCK_TINTS[0])

    def slot_positions(self) -> dict[str, np.ndarray]:
        """Centre (x, y) of every slot of the puzzle, base frame, metres."""
        cfg = self.config
        cols, rows = self._puzzle.size
        c, s = np.cos(self._board_yaw), np.sin(self._board_yaw)
        positions = {}
        for number, (col, row) in enumerate(self._puzzle.cells, start=1):
            local = np.array([(col - (cols - 1) / 2) * cfg.slot_pitch,
                              -(row - (rows - 1) / 2) * cfg.slot_pitch])
            positions[slot_name(number)] = self._board_xy + np.array(
                [c * local[0] - s * local[1], s * local[0] + c * local[1]])
        return positions

    @property
    def dressing_keepout(self) -> list[list[float]]:
        """Base-frame rectangles ``[x0, x1, y0, y1]`` the setting's clutter must avoid: the
        (turned) board, and the blocks' table spots with room for the fingers."""
        cfg = self.config
        hx, hy = cfg.board_half_extent
        c, s = abs(np.cos(self._board_yaw)), abs(np.sin(self._board_yaw))
        bx, by = hx * c + hy * s, hx * s + hy * c
        x, y = self._board_xy
        spots = np.array(self.table_spots())
        room = cfg.block_jitter + cfg.finger_room
        return [[x - bx, x + bx, y - by, y + by],
                [float(spots[:, 0].min() - room), float(spots[:, 0].max() + room),
                 float(spots[:, 1].min() - room), float(spots[:, 1].max() + room)]]

    def table_spots(self) -> list[np.ndarray]:
        """Nominal table spots (x, y) for blocks on the side away from the board, metres."""
        cfg = self.config
        return [np.array([x, -self._side * y + cfg.layout_shift_y]) for x in cfg.block_grid_x
                for y in cfg.block_grid_y]

    def _place_blocks(self, scene: SceneState, rng: np.random.Generator,
                      distractors: list[str]) -> None:
        cfg = self.config
        half = cfg.block_half_size
        presets = self._sample_presets(rng, distractors)
        slot_xy = self.slot_positions()
        on_table = [b for b in self._letters if b not in presets]
        spots = self.table_spots()
        chosen = rng.choice(len(spots), len(on_table), replace=False)
        for block, spot in zip(on_table, chosen, strict=True):
            xy = spots[int(spot)] + rng.uniform(-cfg.block_jitter, cfg.block_jitter, 2)
            scene.set_free_body_pose(block, np.array([*xy, half + 1e-3]),
                                     float(rng.uniform(-cfg.block_yaw_jitter,
                                                       cfg.block_yaw_jitter)))
        for block, slot in presets.items():
            xy = slot_xy[slot] + rng.uniform(-0.003, 0.003, 2)
            yaw = self._board_yaw + float(rng.uniform(-0.08, 0.08))
            scene.set_free_body_pose(block, np.array([*xy, cfg.board_top + half + 1e-3]), yaw)
        for index, block in enumerate(b for b in self.blocks if b not in self._letters):
            parked = np.array([-0.6, -0.6 + 0.07 * index, half - TABLE_HEIGHT])
            scene.set_free_body_pose(block, parked, 0.0)

    def _sample_presets(self, rng: np.random.Generator,
                        distractors: list[str]) -> dict[str, str]:
        """Blocks that start in a slot: maybe a given letter, maybe a misplaced distractor.

        Only slots that are not crossings qualify, and never two next to the same crossing
        along different axes, so the expert can fill every crossing with its fingers along a
        free axis.
        """
        cfg = self.config
        puzzle = self._puzzle
        crossings = puzzle.crossings()
        candidates = [n for n in range(1, len(puzzle.cells) + 1) if n not in crossings]
        rng.shuffle(candidates)
        presets: dict[str, str] = {}
        wants = []
        if rng.random() < cfg.given_probability:
            wants.append("given")
        if distractors and rng.random() < cfg.misplaced_probability:
            wants.append("misplaced")
        chosen: list[int] = []
        for kind in wants:
            for number in candidates:
                if number in chosen or not self._preset_ok([*chosen, number]):
                    continue
                chosen.append(number)
                slot = slot_name(number)
                if kind == "given":
                    presets[self._assignment[slot]] = slot
                else:
                    letter = distractors[0]
                    presets[next(b for b, c in self._letters.items() if c == letter)] = slot
                break
        return presets

    def _preset_ok(self, numbers: list[int]) -> bool:
        cells = [self._puzzle.cells[n - 1] for n in numbers]
        for crossing in self._puzzle.crossings():
            col, row = self._puzzle.cells[crossing - 1]
            along_x = any(abs(c - col) == 1 and r == row for c, r in cells)
            along_y = any(abs(r - row) == 1 and c == col for c, r in cells)
            if along_x and along_y:
                return False
        return True

    # -- trial state ------------------------------------------------------------------------

    def trial_state(self) -> dict[str, Any]:
        """Board pose, the puzzle, each block's letter and tint."""
        return {"board_xy": [float(v) for v in self._board_xy], "board_yaw": self._board_yaw,
                "side": self._side, "puzzle": self._puzzle.to_dict(),
                "letters": dict(self._letters), "tints": dict(self._tints)}

    def apply_trial(self, scene: SceneState, trial: TrialSpec) -> None:
        """Restore the board, puzzle, letters, goal and instruction from ``trial``."""
        state = trial.task_state
        unknown = sorted(set(state["letters"]) - set(self.blocks))
        puzzle = Puzzle.from_dict(state["puzzle"])
        if unknown or len(puzzle.cells) > len(self.slots):
            raise InvalidConfigError(
                f"crossword trial names blocks {unknown} or {len(puzzle.cells)} slots; this "
                f"task has {len(self.blocks)} blocks and {len(self.slots)} slots"
            )
        self._puzzle = puzzle
        self._letters = dict(state["letters"])
        self._tints = {b: list(t) for b, t in state["tints"].items()}
        self._board_xy = np.asarray(state["board_xy"], float)
        self._board_yaw = float(state["board_yaw"])
        self._side = float(state["side"])
        self._assignment = dict(trial.goal["assignment"])
        self._place_fixtures(scene)
        self._instruction = Instruction(trial.instruction, trial.instruction_category)

    def goal(self) -> dict[str, Any]:
        """Words with their slots and clues, each slot's letter and its goal block."""
        puzzle = self._puzzle
        return {
            "words": [{"word": e.word, "direction": e.direction,
                       "slots": [slot_name(n) for n in puzzle.slots_of(e)],
                       "clue": WORDS[e.word]} for e in puzzle.clue_order()],
            "slots": {slot_name(n): puzzle.letter(n) for n in range(1, len(puzzle.cells) + 1)},
            "assignment": dict(self._assignment),
        }

    # -- language ---------------------------------------------------------------------------

    def instructions(self) -> list[Instruction]:
        """Instructions for the current puzzle, at least one per category.

        Each word is given with the numbers of its slots in the word's reading order (a
        crossing slot appears in two words); ``paper`` and ``high_level`` give clues instead
        of the words.
        """
        puzzle = self._puzzle
        entries = puzzle.clue_order()

        def numbers(entry: Entry, separator: str = ", ") -> str:
            return separator.join(str(n) for n in puzzle.slots_of(entry))

        def series(items: list[str]) -> str:  # items hold commas: separate with semicolons
            return items[0] if len(items) == 1 else "; ".join(items[:-1]) + "; and " + items[-1]

        clues = "; ".join(f"{puzzle.slots_of(e)[0]} {e.direction} (slots {numbers(e)}): "
                          f"{WORDS[e.word]}" for e in entries)
        spelled = series([f"{e.word} {e.direction} in slots {numbers(e)}" for e in entries])
        squares = series([f"squares {numbers(e)} read {e.word}" for e in entries])
        runs = series([f"the word {e.word} runs {e.direction} through slots {numbers(e)}"
                       for e in entries])
        casual = " + ".join(f"{e.word} goes {e.direction} in {numbers(e, ',')}"
                            for e in entries)
        return [
            Instruction("Fill the numbered slots using the provided blocks to solve the "
                        "crossword puzzle. You do not need to use all blocks or all slots. "
                        f"Clues: {clues}.", "paper"),
            Instruction(f"Spell {spelled}, using the letter blocks.", "canonical"),
            Instruction(f"Put the lettered cubes into the numbered squares of the board so "
                        f"that {squares}.", "lexical"),
            Instruction(f"Could you arrange the letter blocks in the numbered slots so that "
                        f"{runs}?", "syntactic"),
            Instruction(f"hey, can u finish the lil crossword on the board w/ the letter "
                        f"blocks? {casual}. thx!!", "semantic"),
            Instruction(f"Solve the crossword on the board with the letter blocks. {clues}.",
                        "high_level"),
        ]

    def instruction(self) -> Instruction:
        """The episode's instruction."""
        return self._instruction

    # -- symbolic model ---------------------------------------------------------------------

    def active_blocks(self) -> list[str]:
        """Blocks of the episode (puzzle letters and distractors)."""
        return sorted(self._letters, key=lambda b: int(b.split("-")[1]))

    def active_slots(self) -> list[str]:
        """Slots of the episode's puzzle."""
        return [slot_name(n) for n in range(1, len(self._puzzle.cells) + 1)]

    def letters(self) -> dict[str, str]:
        """Letter of every active block."""
        return dict(self._letters)

    def pddl_objects(self) -> dict[str, str]:
        """Active blocks (type block) and the puzzle's slots (type slot)."""
        objects = {block: "block" for block in self.active_blocks()}
        objects.update({slot: "slot" for slot in self.active_slots()})
        return objects

    def _slot_contents(self, scene: SceneState, held: set[str]) -> dict[str, str]:
        """Block in each filled slot."""
        contents = {}
        slot_xy = self.slot_positions()
        for block in self.active_blocks():
            if block in held:
                continue
            centre = scene.body_position(block)[:2]
            for slot, xy in slot_xy.items():
                if (np.linalg.norm(centre - xy) <= self.config.slot_tolerance
                        and in_slot(scene, block, slot, self.config, held=False)):
                    contents[slot] = block
                    break
        return contents

    def facts(self, scene: SceneState) -> set[str]:
        """holding / hand-empty / in-slot / slot-empty / on-table over the active objects."""
        blocks = self.active_blocks()
        held = {b for b in blocks if holding(scene, b)}
        facts = {f"holding {b}" for b in held}
        if not held:
            facts.add("hand-empty")
        contents = self._slot_contents(scene, held)
        facts.update(f"in-slot {block} {slot}" for slot, block in contents.items())
        facts.update(f"slot-empty {slot}" for slot in self.active_slots()
                     if slot not in contents)
        placed = set(contents.values())
        facts.update(f"on-table {b}" for b in blocks
                     if b not in held and b not in placed and resting(scene, b, self.config))
        return facts

    def goal_facts(self) -> list[str]:
        """``in-slot`` of each slot's goal block (one of the blocks with its letter)."""
        return [f"in-slot {block} {slot}" for slot, block in self._assignment.items()]

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """Success when every slot holds a block of its letter; progress = fraction that do."""
        held = {b for b in self.active_blocks() if holding(scene, b)}
        contents = self._slot_contents(scene, held)
        terms = {}
        for number, slot in enumerate(self.active_slots(), start=1):
            letter = self._puzzle.letter(number)
            block = contents.get(slot)
            terms[f"{slot} holds {letter}"] = float(
                block is not None and self._letters[block] == letter)
        return TaskEvaluation(all(v > 0.5 for v in terms.values()),
                              float(np.mean(list(terms.values()))), terms)

    # -- expert -----------------------------------------------------------------------------

    def primitive_for(self, step: PlanStep, scene: SceneState) -> dict[str, Any]:
        """Ground-truth primitive of a plan step.

        ``pick`` / ``pick-from-slot``: a top grasp across the block's faces, fingers along
        the face axis with more room around the block. ``place-in-slot``: the block's centre
        onto the slot's, faces along the slot's axes, fingers along the axis without filled
        neighbours. ``place-on-table``: onto the free table spot farthest from other blocks.
        """
        if step.name in ("pick", "pick-from-slot"):
            return self._pick_action(scene, step.args[0])
        if step.name == "place-in-slot":
            return self._place_in_slot_action(scene, step.args[0], step.args[1])
        if step.name == "place-on-table":
            return self._place_on_table_action(scene, step.args[0])
        raise InvalidConfigError(f"crossword has no primitive for {step}; valid: pick, "
                                 "pick-from-slot, place-in-slot, place-on-table")

    def expert_actions(self, scene: SceneState) -> Iterator[dict[str, Any]]:
        """Execute the Fast Downward reference plan with ground-truth poses.

        The plan's pick-place pairs are independent, so they are reordered: blocks taken
        out of slots first, then crossing slots before the others (a crossing is filled
        before its neighbours, so its fingers never reach beside a block). Each pick turns
        its grasp so that the block's letter ends upright on the board, choosing between the
        two such grasps the one that keeps the wrist nearer its home angle (over a long
        episode the wrist would otherwise wind up to its +-2 pi stops).
        """
        plan = symbolic.reference_plan(self, scene)
        for pair in self._ordered_pairs(plan):
            if len(pair) == 2 and pair[1].name == "place-in-slot":
                block, slot = pair[1].args
                yield self._pick_action(scene, pair[0].args[0], target_slot=slot)
                yield self._place_in_slot_action(scene, block, slot)
            else:
                for step in pair:
                    yield self.primitive_for(step, scene)

    def _ordered_pairs(self, plan: list[PlanStep]) -> list[tuple[PlanStep, ...]]:
        pairs: list[tuple[PlanStep, ...]] = []
        index = 0
        while index < len(plan):
            step = plan[index]
            following = plan[index + 1] if index + 1 < len(plan) else None
            if step.name.startswith("pick") and following is not None and \
                    following.name.startswith("place"):
                pairs.append((step, following))
                index += 2
            else:
                pairs.append((step,))
                index += 1
        crossings = {slot_name(n) for n in self._puzzle.crossings()}

        def key(item: tuple[int, tuple[PlanStep, ...]]) -> tuple[int, int]:
            position, pair = item
            if len(pair) == 1:
                return (0, position)
            if pair[0].name == "pick-from-slot":
                return (1, position)
            target = pair[1].args[1] if pair[1].name == "place-in-slot" else ""
            return (2 if target in crossings else 3, position)

        # a leading single step (e.g. a place while already holding) stays first
        return [pair for _, pair in sorted(enumerate(pairs), key=key)]

    @staticmethod
    def _tcp_yaw(scene: SceneState) -> float:
        return yaw_of(scene.data.site(_TCP).xmat.reshape(3, 3), 0)

    def _neighbour_axes(self, scene: SceneState, xy: np.ndarray, exclude: str) -> list[bool]:
        """Whether a block stands next to ``xy`` along the board's x and y axes."""
        pitch = self.config.slot_pitch
        c, s = np.cos(self._board_yaw), np.sin(self._board_yaw)
        busy = [False, False]
        for block in self.active_blocks():
            if block == exclude:
                continue
            d = scene.body_position(block)[:2] - xy
            local = np.array([c * d[0] + s * d[1], -s * d[0] + c * d[1]])
            for axis in (0, 1):
                if abs(local[axis]) < 1.5 * pitch and abs(local[1 - axis]) < 0.5 * pitch:
                    busy[axis] = True
        return busy

    def _clearance(self, scene: SceneState, xy: np.ndarray, yaw: float, exclude: str) -> float:
        """Free distance beside ``xy`` along the closing axis of a grasp at ``yaw``."""
        closing = np.array([-np.sin(yaw), np.cos(yaw)])
        free = np.inf
        for block in self.active_blocks():
            if block == exclude:
                continue
            d = scene.body_position(block)[:2] - xy
            if abs(d @ closing) < 0.12 and abs(d @ np.array([closing[1], -closing[0]])) < 0.05:
                free = min(free, abs(d @ closing))
        return free

    def _pick_action(self, scene: SceneState, block: str,
                     target_slot: str | None = None) -> dict[str, Any]:
        cfg = self.config
        position = scene.body_position(block)
        rotation = scene.body_rotation(block)
        upright = face_up_axis(rotation) == 2 and rotation[2, 2] > 0
        if target_slot is not None and upright:
            # grasp so that the letter (the block's +y on its top face) ends along the
            # board's +y with the fingers across the slot's free axis; of the two such
            # grasps, the one that keeps the wrist nearer its home angle over pick and place
            free_axis = self._slot_grasp_axis(scene, target_slot, block)
            letter_up = yaw_of(rotation, 1)
            turn = self._board_yaw + np.pi / 2 - letter_up  # carried turn, pick to place
            slot_xy = scene.body_position(target_slot)[:2]

            def wrist_cost(yaw: float) -> float:
                at_pick = self._wrist_after(scene, position[:2], yaw)
                at_place = at_pick + _bearing_change(position[:2], slot_xy) - turn
                return max(abs(at_pick - _WRIST_HOME), abs(at_place - _WRIST_HOME))

            yaw = min((_wrap(free_axis * np.pi / 2 + letter_up - np.pi / 2 + k * np.pi)
                       for k in (0, 1)), key=wrist_cost)
        else:
            base = face_yaw(rotation)
            yaw = max((_wrap(base + k * np.pi / 2) for k in (-1, 0, 1, 2)),
                      key=lambda g: (min(self._clearance(scene, position[:2], g, block), 0.09),
                                     -abs(self._wrist_after(scene, position[:2], g)
                                          - _WRIST_HOME)))
        low = body_box(scene, block).low[2]
        position[2] = max(position[2], low + TCP_TO_FINGERTIP + 0.008)
        return pick(top_down_pose(position, yaw), width=2 * cfg.block_half_size)

    def _wrist_after(self, scene: SceneState, xy: np.ndarray, yaw: float) -> float:
        """Predicted wrist-3 angle (rad) once the TCP points down at ``xy`` with ``yaw``.

        For a top-down TCP the wrist angle follows the shoulder pan minus the TCP yaw; the
        primitives' Cartesian paths turn the TCP the short way round, so the prediction is
        the current angle plus the change of bearing minus the wrapped change of yaw. Choosing
        among grasps that are equivalent for the block by this keeps the wrist away from its
        +-2 pi limits over a long episode.
        """
        wrist = float(scene.data.joint(_WRIST_JOINT).qpos[0])
        tcp = scene.data.site(_TCP).xpos - scene.base_pos
        return wrist + _bearing_change(tcp[:2], xy) - _wrap(yaw - self._tcp_yaw(scene))

    def _slot_grasp_axis(self, scene: SceneState, slot: str, block: str) -> int:
        """0: fingers close along the board's y axis; 1: along its x axis."""
        xy = scene.body_position(slot)[:2]
        busy = self._neighbour_axes(scene, xy, block)
        if busy[0] != busy[1]:
            return 0 if busy[0] else 1  # keep the fingers off the axis with neighbours
        number = int(slot.split("-")[1])
        cell = self._puzzle.cells[number - 1]
        down_only = all(e.direction == _DOWN for e in self._puzzle.entries if cell in e.cells)
        return 1 if down_only else 0

    def _held_offset(self, scene: SceneState, block: str) -> tuple[np.ndarray, float, float]:
        """(block centre - TCP) in the base frame, the block's letter yaw and the TCP yaw."""
        tcp = scene.data.site(_TCP).xpos - scene.base_pos
        rotation = scene.body_rotation(block)
        return scene.body_position(block) - tcp, yaw_of(rotation, 1), self._tcp_yaw(scene)

    def _place_pose(self, scene: SceneState, block: str, xy: np.ndarray, surface: float,
                    yaw: float) -> np.ndarray:
        """TCP pose that puts the held block's centre over ``xy``, 4 mm above ``surface``."""
        cfg = self.config
        offset, _, tcp_yaw = self._held_offset(scene, block)
        turn = yaw - tcp_yaw
        c, s = np.cos(turn), np.sin(turn)
        shifted = np.array([c * offset[0] - s * offset[1], s * offset[0] + c * offset[1]])
        drop = np.clip(offset[2], -cfg.block_half_size, cfg.block_half_size)
        z = max(surface + cfg.block_half_size - drop + 0.004,
                surface + TCP_TO_FINGERTIP + 0.004)
        return top_down_pose(np.array([*(xy - shifted), z]), yaw)

    def _place_in_slot_action(self, scene: SceneState, block: str,
                              slot: str) -> dict[str, Any]:
        axis = self._slot_grasp_axis(scene, slot, block)
        _, letter_yaw, tcp_yaw = self._held_offset(scene, block)
        rotation = scene.body_rotation(block)
        # turn so that the letter points along the board's +y; among the four 90-degree
        # variants keep the fingers along the free axis and the wrist clear of its stops,
        # then the letter upright, then the wrist nearest its home angle
        ideal = tcp_yaw + (self._board_yaw + np.pi / 2 - letter_yaw)
        upright = face_up_axis(rotation) == 2 and rotation[2, 2] > 0
        if not upright:
            ideal = tcp_yaw + _wrap(self._board_yaw - face_yaw(rotation))

        xy = scene.body_position(slot)[:2]

        def cost(k: int) -> tuple[bool, bool, bool, float]:
            yaw = ideal + k * np.pi / 2
            axis_error = abs(_wrap(2 * (yaw - self._board_yaw - axis * np.pi / 2))) / 2
            wrist = self._wrist_after(scene, xy, yaw)
            return (axis_error > np.pi / 4, abs(wrist) > _WRIST_LIMIT, k != 0 and upright,
                    abs(wrist - _WRIST_HOME))

        k = min(range(4), key=cost)
        yaw = tcp_yaw + _wrap(ideal + k * np.pi / 2 - tcp_yaw)
        return place(self._place_pose(scene, block, xy, self.config.board_top, yaw))

    def _place_on_table_action(self, scene: SceneState, block: str) -> dict[str, Any]:
        others = [scene.body_position(b)[:2] for b in self.active_blocks() if b != block]
        spots = self.table_spots()
        best = max(spots, key=lambda p: min((np.linalg.norm(p - o) for o in others),
                                            default=np.inf))
        _, _, tcp_yaw = self._held_offset(scene, block)
        return place(self._place_pose(scene, block, best, 0.0, tcp_yaw))
