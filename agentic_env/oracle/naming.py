"""Name alignment: which scene object a model means by the name it uses (privileged).

A real model names what it sees ("the orange tray", "red-cube-left", "square-2"), not the
simulator's ids (``bowl``, ``red-cube-1``, ``slot-2``). Everything that compares a model's
names with the simulator's truth goes through this one step: the sim-oracle's modules when
another module's model introduced the names, the module benchmark's graders, the Reflector's
and judges' truth, and the episode's report.

* :func:`scene_things` describes each PDDL object of the task the way a person would see it:
  nouns (with synonyms from ``scenes/words/things.toml``), colour family, category labels,
  the letter on a crossword block, the number of a board slot, and where it is in the
  shoulder camera's view (for "left", "right", "nearest"...).
* :func:`align` binds a set of :class:`Mention` s (a name and, where the role gives them, a
  description and a type) to those things one-to-one, and reports unbound and ambiguous names.
* :class:`~agentic_env.oracle.name_book.NameBook` keeps an episode's bindings, learnt from
  every answered model call, so every mixed configuration of models and oracles speaks one
  language.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np
from scipy.optimize import linear_sum_assignment

from agentic_env.sim.cameras import camera_pose_in_world
from agentic_env.tasks.catalogue import CATALOGUE
from agentic_env.tasks.vocabulary import thing_words

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv

#: Query fields whose whole value names one thing.
NAME_FIELDS = frozenset({"target", "source", "destination", "object", "container", "surface",
                         "drawer", "from_drawer", "name", "subject"})
#: Query fields holding PDDL literals such as ``(in lemon-1 blue-bin)``.
LITERAL_FIELDS = frozenset({"conditions", "goal", "preconditions", "effects"})
#: Geom-name suffixes of the parts of a drawer (the cabinet's drawer body carries no id).
DRAWER_PARTS = {"handle": "_handle", "interior": "_drawer_floor", "object": "_drawer"}
_STOPWORDS = frozenset({"the", "an", "of", "on", "in", "at", "to", "with", "and", "that",
                        "is", "one", "object", "thing", "item", "its", "it", "which", "this"})
_ORDINALS = {"first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5",
             "sixth": "6", "seventh": "7", "eighth": "8"}
_LEFT, _RIGHT = frozenset({"left", "leftmost"}), frozenset({"right", "rightmost"})
_NEAR = frozenset({"front", "near", "nearest", "closest", "close", "nearer", "closer"})
_FAR = frozenset({"back", "far", "farthest", "furthest", "behind", "rear", "farther"})
_MIDDLE = frozenset({"middle", "center", "centre", "central"})
#: Score of a mention that names nothing of a thing (or contradicts it).
_NO_MATCH = -1.0


def describe(name: str) -> str:
    """A natural-language description of a PDDL object name: ``red-cube-1`` -> ``red cube``."""
    return re.sub(r"-\d+$", "", name).replace("-", " ").replace("_", " ")


@cache
def _colour_words() -> frozenset[str]:
    return frozenset(w for words in thing_words()["colours"].values() for w in words)


def tokens(text: str) -> list[str]:
    """Lower-case words of ``text``, plurals made singular (``boxes`` -> ``box``)."""
    return [_singular(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def _singular(word: str) -> str:
    if len(word) <= 3 or word.endswith("ss"):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("shes", "ches", "xes", "oes", "sses")):
        return word[:-2]
    return word[:-1] if word.endswith("s") else word


def _has_phrase(words: Sequence[str], phrase: str) -> bool:
    wanted = tokens(phrase)
    span = len(wanted)
    return span > 0 and any(list(words[i:i + span]) == wanted
                            for i in range(len(words) - span + 1))


@dataclass(frozen=True)
class SceneThing:
    """A PDDL object as a person would describe it.

    Attributes:
        id: the PDDL object name (the simulator's id).
        kind: its PDDL type (``item``, ``container``, ``slot``, ``drawer``...).
        nouns: what it may be called (``bin``, ``container``, ``tub``...).
        colours: the words of its colour family (empty: no colour of its own).
        labels: other words that fit it (category, attributes such as ``round``, ``top``).
        letter: the letter on it (crossword blocks), upper case.
        number: the number marked at it (crossword slots).
        view: (u, depth): its horizontal place in the shoulder camera's view (tan of the angle,
            left < right) and its distance from the camera, metres; ``None`` without a body.
    """

    id: str
    kind: str
    nouns: frozenset[str]
    colours: frozenset[str] = frozenset()
    labels: frozenset[str] = frozenset()
    letter: str | None = None
    number: str | None = None
    view: tuple[float, float] | None = None


@dataclass(frozen=True)
class Mention:
    """A name a model used, with what the role let it say about it.

    Attributes:
        name: the name (``red-cube-left``).
        description: its words for the thing (``"the red cube on the left"``), if any.
        kind: the type it gave (``container``), if any.
    """

    name: str
    description: str = ""
    kind: str = ""

    @property
    def text(self) -> str:
        """Name and description together."""
        return f"{self.name} {self.description}"


@dataclass
class Alignment:
    """Names bound to scene objects.

    Attributes:
        bound: name -> id.
        unbound: names no scene object matches.
        ambiguous: name -> the ids that matched it equally well (it is bound to one of them).
    """

    bound: dict[str, str] = field(default_factory=dict)
    unbound: list[str] = field(default_factory=list)
    ambiguous: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def merge(self, other: Alignment) -> None:
        """Add ``other``'s bindings (names already here keep theirs)."""
        for name, thing in other.bound.items():
            self.bound.setdefault(name, thing)
            if name in self.unbound:
                self.unbound.remove(name)
        self.unbound.extend(n for n in other.unbound
                            if n not in self.bound and n not in self.unbound)
        for name, things in other.ambiguous.items():
            self.ambiguous.setdefault(name, things)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (for traces and the results database)."""
        return {"bound": dict(self.bound), "unbound": list(self.unbound),
                "ambiguous": {k: list(v) for k, v in self.ambiguous.items()}}


def _colour_family(colour: str | None) -> frozenset[str]:
    if not colour:
        return frozenset()
    return frozenset(thing_words()["colours"].get(colour, [colour]))


def _thing(env: SimEnv, thing_id: str, kind: str, extra: Mapping[str, str]) -> SceneThing:
    table = thing_words()
    stem = re.sub(r"-\d+$", "", thing_id)
    if kind == "pose":
        return SceneThing(thing_id, kind, frozenset({stem.replace("-", " "),
                                                     *table["poses"].get(stem, [])}))
    catalogue = CATALOGUE.get(stem)
    parts = stem.split("-")
    colour = catalogue.colour if catalogue else None
    for size in (2, 1):  # colour words of the name itself: dark-blue-..., red-...
        if "-".join(parts[:size]) in table["colours"] and len(parts) > size:
            colour, parts = "-".join(parts[:size]), parts[size:]
            break
    place_words = {"top", "bottom", "upper", "lower"} & set(parts)
    parts = [p for p in parts if p not in place_words]
    phrase = " ".join(parts)
    head = parts[-1] if parts else stem
    nouns = {phrase, head, *table["nouns"].get(head, []), *table["nouns"].get(phrase, [])}
    if kind not in ("item", "object") and not kind.endswith("-cube"):
        nouns.add(kind)
    labels = set(place_words) | ({"upper"} if "top" in place_words else set())
    if catalogue is not None:
        labels |= {catalogue.category, *catalogue.attributes}
    return SceneThing(thing_id, kind, frozenset(nouns), _colour_family(colour),
                      frozenset(labels), extra.get("letter"), extra.get("number"),
                      _view(env, thing_id))


def _view(env: SimEnv, body: str) -> tuple[float, float] | None:
    try:
        world = env.data.body(body).xpos
    except KeyError:
        return None
    camera = mujoco.mj_name2id(env.model, mujoco.mjtObj.mjOBJ_CAMERA, "shoulder")
    if camera < 0:
        return None
    pose = camera_pose_in_world(env.data, camera)
    local = pose[:3, :3].T @ (np.asarray(world) - pose[:3, 3])
    depth = float(local[2])
    return (float(local[0]) / depth if depth > 1e-6 else 0.0), depth


def scene_things(env: SimEnv) -> list[SceneThing]:
    """Every PDDL object of ``env``'s task, described (see :class:`SceneThing`); where a
    thing is in the view is read now."""
    task = env.task
    labels: Mapping[str, Mapping[str, str]] = (
        task.visible_labels() if hasattr(task, "visible_labels") else {})
    return [_thing(env, name, kind, labels.get(name, {}))
            for name, kind in task.pddl_objects().items()]  # type: ignore[attr-defined]


def _letters(words: Sequence[str]) -> set[str]:
    found = {w for i, w in enumerate(words) if len(w) == 1 and w.isalpha()
             and (w not in ("a", "i") or (i > 0 and words[i - 1] == "letter"))}
    return {w.upper() for w in found}


def score(words: Sequence[str], thing: SceneThing, kind: str = "") -> float:
    """How well the words of a name (and description) fit ``thing``; :data:`_NO_MATCH`
    (negative) when they contradict it (another colour, letter or number) or name nothing of
    it."""
    if thing.kind == "pose":
        return 4.0 if any(_has_phrase(words, n) for n in thing.nouns) else _NO_MATCH
    noun_words = {w for n in thing.nouns for w in tokens(n)}
    noun = any(_has_phrase(words, n) for n in thing.nouns)
    colours = {w for w in words if w in _colour_words()} - noun_words - {"dark", "light"}
    colour = bool(colours & thing.colours)
    if colours and thing.colours and not colour:
        return _NO_MATCH
    letters = _letters(words)
    letter = thing.letter is not None and thing.letter in letters
    if thing.letter is not None and letters and not letter:
        return _NO_MATCH
    numbers = {w for w in words if w.isdigit()} | {_ORDINALS[w] for w in words if w in _ORDINALS}
    number = thing.number is not None and thing.number in numbers
    if thing.number is not None and numbers and not number:
        return _NO_MATCH
    labels = sum(1.0 for w in set(words) if w in thing.labels)
    if not (noun or letter or number or (colour and labels)):
        return _NO_MATCH
    return (4.0 * noun + 2.0 * colour + 4.0 * letter + 4.0 * number + labels
            + (1.0 if kind and kind == thing.kind else 0.0))


def _relation_bonus(words: Sequence[str], candidates: Sequence[SceneThing]) -> dict[str, float]:
    """A bonus in [0, 0.5] per candidate, ranking them by the relation words (left, right,
    nearest, farthest, middle, first...) among equally fitting candidates."""
    seen = [c for c in candidates if c.view is not None]
    if len(seen) < 2:
        return {}
    word_set = set(words)
    u = {c.id: c.view[0] for c in seen}  # type: ignore[index]
    depth = {c.id: c.view[1] for c in seen}  # type: ignore[index]
    middle = float(np.median(list(u.values())))
    keys: list[dict[str, float]] = []
    if word_set & _LEFT:
        keys.append(u)
    if word_set & _RIGHT:
        keys.append({k: -v for k, v in u.items()})
    if word_set & _NEAR:
        keys.append(depth)
    if word_set & _FAR:
        keys.append({k: -v for k, v in depth.items()})
    if word_set & _MIDDLE:
        keys.append({k: abs(v - middle) for k, v in u.items()})
    if not keys:
        return {}
    total = {k: sum(key[k] for key in keys) for k in u}
    order = sorted(total, key=total.__getitem__)
    return {k: 0.5 * (1.0 - rank / (len(order) - 1)) for rank, k in enumerate(order)}


def align(mentions: Sequence[Mention], things: Sequence[SceneThing]) -> Alignment:
    """Bind ``mentions`` to ``things``, one thing per name (a thing's own id binds to it
    directly): the best total fit, relation words breaking ties between equally fitting
    things. Names that fit nothing are unbound; a name bound to one of several equally fitting
    things is also reported ambiguous."""
    result = Alignment()
    by_id = {t.id.lower(): t for t in things}
    open_mentions = []
    for mention in mentions:
        thing = by_id.get(mention.name.strip().lower())
        if thing is not None:
            result.bound[mention.name] = thing.id
        else:
            open_mentions.append(mention)
    free = [t for t in things if t.id not in result.bound.values()]
    if not open_mentions:
        return result
    if not free:
        result.unbound.extend(m.name for m in open_mentions)
        return result
    scores = np.full((len(open_mentions), len(free)), _NO_MATCH)
    ties: dict[int, tuple[str, ...]] = {}
    for row, mention in enumerate(open_mentions):
        words = [w for w in tokens(mention.text) if w not in _STOPWORDS]
        base = np.array([score(words, t, mention.kind) for t in free])
        best = base.max()
        if best <= 0:
            continue
        tied = [t for t, s in zip(free, base, strict=True) if s == best]
        bonus = _relation_bonus(words, tied) if len(tied) > 1 else {}
        if len(tied) > 1 and len(set(bonus.values())) < len(tied):
            ties[row] = tuple(t.id for t in tied)
        scores[row] = base + np.array([bonus.get(t.id, 0.0) for t in free])
    rows, cols = linear_sum_assignment(-np.where(scores > 0, scores, -100.0))
    assigned = dict(zip(rows.tolist(), cols.tolist(), strict=True))
    for row, mention in enumerate(open_mentions):
        col = assigned.get(row)
        if col is None or scores[row, col] <= 0:
            result.unbound.append(mention.name)
            continue
        result.bound[mention.name] = free[col].id
        if row in ties:
            result.ambiguous[mention.name] = ties[row]
    return result


def thing_geoms(env: SimEnv, thing_id: str, part: str = "object") -> list[int]:
    """Ids of the geoms that render ``thing_id`` (for a drawer: its ``part``, ``object``,
    ``handle`` or ``interior``)."""
    model = env.model
    if env.task.pddl_objects().get(thing_id) == "drawer":  # type: ignore[attr-defined]
        suffix = DRAWER_PARTS.get(part, DRAWER_PARTS["object"])
        return [g for g in range(model.ngeom) if (model.geom(g).name or "").endswith(suffix)
                or (part == "object" and "_handle" in (model.geom(g).name or ""))]
    try:
        root = model.body(thing_id).id
    except KeyError:
        return []
    return [g for g in range(model.ngeom) if _in_subtree(model, int(model.geom_bodyid[g]), root)]


def _in_subtree(model: mujoco.MjModel, body: int, root: int) -> bool:
    while body > 0:
        if body == root:
            return True
        body = int(model.body_parentid[body])
    return root == 0
