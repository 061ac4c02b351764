"""Crossword board: the task's tunables, body names, block tints and the slot predicates.

Positions are in the robot base frame, metres; yaws about its vertical, radians. The
``in-slot`` geometry is part of the benchmark's definition of success (see
:class:`agentic_env.tasks.crossword.CrosswordTask`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agentic_env.geometry.rotations import face_up_axis, face_yaw, yaw_of
from agentic_env.sim.state import SceneState, body_box, holding
from agentic_env.tasks.crossword.puzzles import WORDS
from agentic_env.tasks.predicates import DEFAULT_TOLERANCES
from agentic_env.tasks.vocabulary import task_vocabulary

#: Tints of the block faces (multiplied with the white face; the letters stay dark).
BLOCK_TINTS: tuple[tuple[float, float, float, float], ...] = tuple(
    tuple(tint) for tint in task_vocabulary("crossword")["tints"].values())
BOARD_RGBA = (0.16, 0.16, 0.18, 1.0)


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




def in_slot(scene: SceneState, block: str, slot: str, config: CrosswordConfig,
            held: bool | None = None) -> bool:
    """``block`` sits in ``slot`` (tolerances: see
    :class:`~agentic_env.tasks.crossword.CrosswordTask`).

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
