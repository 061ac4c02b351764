"""Task vocabularies as data: ``scenes/tasks/<task>.toml``, read once per process.

A task's word lists, palettes, riddles and instruction templates live in a TOML file of the
``agentic_env.scenes`` package (folder ``scenes/tasks/``); the task module keeps the logic
that combines them. Tables keep the file's order (``tomllib`` preserves it), so lists drawn
from with the episode RNG are drawn in the same order as they are written.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from agentic_env.errors import InvalidConfigError


@cache
def task_vocabulary(task: str) -> dict[str, Any]:
    """The parsed ``scenes/tasks/<task>.toml`` (cached: treat it as read-only).

    Raises:
        InvalidConfigError: if the task has no vocabulary file.
    """
    folder = resources.files("agentic_env.scenes").joinpath("tasks")
    path = folder.joinpath(f"{task}.toml")
    if not path.is_file():
        known = sorted(p.name.removesuffix(".toml") for p in folder.iterdir()
                       if p.name.endswith(".toml"))
        raise InvalidConfigError(f"no vocabulary scenes/tasks/{task}.toml; known: "
                                 f"{', '.join(known)}")
    return tomllib.loads(path.read_text(encoding="utf-8"))


@cache
def thing_words() -> dict[str, Any]:
    """The parsed ``scenes/words/things.toml`` (cached: treat it as read-only): ``nouns`` (a noun ->
    other nouns for the same kind of thing), ``colours`` (a colour word -> the words of its
    family) and ``poses`` (a named resting pose -> its other names)."""
    path = resources.files("agentic_env.scenes").joinpath("words", "things.toml")
    return tomllib.loads(path.read_text(encoding="utf-8"))


def noun_synonyms(noun: str) -> tuple[str, ...]:
    """Other nouns for ``noun`` (a phrase's own entry, else its last word's): ``bin`` ->
    ``container``, ``box``..."""
    nouns = thing_words()["nouns"]
    return tuple(nouns.get(noun) or nouns.get(noun.split()[-1], ()))
