"""Own names for the sim-oracle: it can speak as a model does, naming things by what they look
like (``sim-oracle?names=described``).

A real model names what it sees: ``white-container``, ``left-red-block``, ``square-2``. With
``names=described`` the sim-oracle invents such names, once per episode, for every thing a
person would name (not the table, not the task's named poses) and answers under them: its
answers' ids become its names, its queries' names become ids again before it answers. The
other modules (oracles or models) learn the names only from its answers, through the
episode's :class:`~agentic_env.oracle.name_book.NameBook`, exactly as they would learn a real
model's, so a mixed configuration with this oracle in the naming role tests that every
module works with names that are not the simulator's. Things the agent already knows by a
name (another module named them first, with ids or its own words) keep it: a model reuses
the names its prompt gives.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.oracle.name_book import replace_names
from agentic_env.oracle.naming import Mention, SceneThing, scene_things
from agentic_env.tasks.vocabulary import thing_words

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv

_SIDES = {2: ("left", "right"), 3: ("left", "middle", "right")}
_ORDINAL = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def _noun(thing: SceneThing, rng: np.random.Generator, chosen: dict[str, str],
          kinds: frozenset[str]) -> str:
    """Another word for the thing: a synonym of its head noun that is neither a category label
    nor a PDDL type of the scene (``kinds``), e.g. ``bin`` -> ``tub``, else the noun itself;
    one word per head noun in an episode (``chosen``), as a person keeps calling the blocks
    blocks."""
    own = thing.id.replace("-", " ").split()
    head = next((w for w in reversed(own) if w in thing_words()["nouns"]), own[-1])
    if head not in chosen:
        words = thing_words()["nouns"].get(head, [])
        options = sorted(w for w in words if " " not in w and w not in own
                         and w not in thing.labels and w not in kinds)
        chosen[head] = str(rng.choice(options)) if options else head
    return chosen[head]


def described_names(things: list[SceneThing], rng: np.random.Generator) -> dict[str, Mention]:
    """A name and description per nameable thing, by id (see the module docstring); things
    that would share a name get left / middle / right (or first, second... from the left) by
    where the shoulder camera sees them."""
    bases: dict[str, list[tuple[SceneThing, str]]] = defaultdict(list)
    chosen: dict[str, str] = {}
    kinds = frozenset(t.kind for t in things) | {"container", "object", "item"}
    for thing in things:
        if thing.kind == "pose" or thing.id == "table":
            continue
        words = [w for w in ("top", "bottom") if w in thing.labels]
        colour = next((c for c in sorted(thing.colours) if c in thing.id.split("-")),
                      sorted(thing.colours)[0] if thing.colours else "")
        words += [colour] if colour else []
        words.append(_noun(thing, rng, chosen, kinds))
        if thing.letter:
            words += ["with", "letter", thing.letter.lower()]
        if thing.number:
            words.append(thing.number)
        bases["-".join(words)].append((thing, " ".join(words)))
    named: dict[str, Mention] = {}
    for base, members in bases.items():
        if len(members) == 1:
            thing, text = members[0]
            named[thing.id] = Mention(base, f"the {text}", thing.kind)
            continue
        members.sort(key=lambda m: m[0].view[0] if m[0].view else 0.0)
        sides = _SIDES.get(len(members))
        for index, (thing, text) in enumerate(members):
            side = sides[index] if sides else f"{_ORDINAL[min(index, 7)]} from the left"
            named[thing.id] = Mention(f"{side.split()[0]}-{base}", f"the {text} ({side})",
                                      thing.kind)
    return named


class DescribedNames:
    """One episode's invented names for ``env``'s things (made on first use, after reset).

    Args:
        env: the simulator.
        seed: seed of the word choices.
    """

    def __init__(self, env: SimEnv, seed: int) -> None:
        self._env = env
        self._seed = seed
        self._names: dict[str, str] | None = None

    def _table(self) -> dict[str, str]:
        if self._names is None:
            named = described_names(scene_things(self._env), np.random.default_rng(self._seed))
            self._names = {thing: mention.name for thing, mention in named.items()}
        return self._names

    def from_ids(self, value: Any, keep: Collection[str] = ()) -> Any:
        """``value`` with every id written as its invented name, but the ids in ``keep``
        (things the agent already knows by a name: a model reuses the names it was given)."""
        return replace_names(value, {t: n for t, n in self._table().items() if t not in keep})

    def to_ids(self, value: Any) -> Any:
        """``value`` with every invented name written as its id."""
        return replace_names(value, {n: t for t, n in self._table().items()})
