"""Language instructions with paraphrase categories (ALRM, section IV-C).

Instructions are generated from a trial's structured goal, never parsed back from text. Each
carries one category:

* ``paper``: the exact AgenticLab Table V sentence, where the task has one;
* ``canonical``: a direct imperative command;
* ``lexical``: nouns and verbs replaced by synonyms;
* ``syntactic``: another sentence structure (question, declarative, compound);
* ``semantic``: context or style changes (chit-chat, informal phrasing, a typo);
* ``high_level``: needs inference to identify the objects or the actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agentic_env.errors import InvalidConfigError

CATEGORIES: tuple[str, ...] = (
    "paper", "canonical", "lexical", "syntactic", "semantic", "high_level",
)


@dataclass(frozen=True)
class Instruction:
    """An instruction sentence and its paraphrase category (one of :data:`CATEGORIES`)."""

    text: str
    category: str

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise InvalidConfigError(
                f"instruction category {self.category!r}; valid: {', '.join(CATEGORIES)}"
            )


def choose_instruction(
    options: Sequence[Instruction], rng: np.random.Generator, category: str | None = None
) -> Instruction:
    """Pick one instruction: of ``category`` when given, else uniformly over categories.

    Raises:
        InvalidConfigError: if no option has the requested category (lists those available).
    """
    available = sorted({option.category for option in options})
    if category is None:
        category = available[int(rng.integers(len(available)))]
    matching = [option for option in options if option.category == category]
    if not matching:
        raise InvalidConfigError(
            f"no {category!r} instruction for this trial; available: {', '.join(available)}"
        )
    return matching[int(rng.integers(len(matching)))]


def join_words(words: Sequence[str], conjunction: str = "and") -> str:
    """'a', 'a and b', 'a, b and c'."""
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + f" {conjunction} " + words[-1]
