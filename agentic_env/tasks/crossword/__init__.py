"""``AgenticEnv/Crossword-v0``: fill the numbered slots of a crossword board with letter blocks.

:class:`~agentic_env.tasks.crossword.task.CrosswordTask` (its docstring gives the
description, randomizations and success conditions); :mod:`~agentic_env.tasks.crossword.board`
the tunables and slot predicates; :mod:`~agentic_env.tasks.crossword.puzzles` the word list and
the puzzle generator. The scripted expert is :mod:`agentic_env.experts.crossword`.
"""

from agentic_env.tasks.crossword.board import (
    BLOCK_TINTS,
    BOARD,
    CrosswordConfig,
    block_name,
    in_slot,
    resting,
    slot_name,
)
from agentic_env.tasks.crossword.puzzles import WORDS, Entry, Puzzle, generate_puzzle
from agentic_env.tasks.crossword.task import CrosswordTask

__all__ = [
    "BLOCK_TINTS",
    "BOARD",
    "WORDS",
    "CrosswordConfig",
    "CrosswordTask",
    "Entry",
    "Puzzle",
    "block_name",
    "generate_puzzle",
    "in_slot",
    "resting",
    "slot_name",
]
