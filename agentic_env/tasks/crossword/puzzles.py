"""Crossword puzzles: the word list with its clues, and the random puzzle generator.

Cells are (column, row) on the board's grid, columns growing along the board's x axis and
rows growing downwards (along its -y axis). The words and clues are data:
``scenes/tasks/crossword.toml``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.tasks.vocabulary import task_vocabulary

#: Common words (capitals) and a clue for each, for the high-level instructions.
WORDS: dict[str, str] = task_vocabulary("crossword")["words"]
ACROSS, DOWN = "across", "down"

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

    def down_only(self, slot: int) -> bool:
        """Whether every word through slot ``slot`` (1-based) runs down."""
        cell = self.cells[slot - 1]
        return all(e.direction == DOWN for e in self.entries if cell in e.cells)

    def clue_order(self) -> list[Entry]:
        """Entries sorted like a crossword's clue list: by first slot, across first."""
        return sorted(self.entries,
                      key=lambda e: (self.slots_of(e)[0], e.direction != ACROSS))

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
    dc, dr = (1, 0) if direction == ACROSS else (0, 1)
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
        for neighbour, direction in (((col + 1, row), ACROSS), ((col, row + 1), DOWN)):
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
        entries = [Entry(first, ACROSS, _word_cells(first, ACROSS, (0, 0)))]
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
        direction = DOWN if existing.direction == ACROSS else ACROSS
        for cell, letter in zip(existing.cells, existing.word, strict=True):
            for word in vocabulary:
                if word in used:
                    continue
                for index, candidate in enumerate(word):
                    if candidate != letter:
                        continue
                    dc, dr = (index, 0) if direction == ACROSS else (0, index)
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
