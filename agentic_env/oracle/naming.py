"""Name alignment: which scene object a model means by the name it uses (privileged).

A real model names what it sees ("the orange tray", "red-cube-left", "square-2"), not the
simulator's ids (``bowl``, ``red-cube-1``, ``slot-2``). Everything that compares a model's
names with the simulator's truth goes through this one step: the sim-oracle's modules when
another module's model introduced the names, the module benchmark's graders, the Reflector's
and judges' truth, and the episode's report.

* :func:`scene_things` describes each PDDL object of the task the way a person would see it:
  nouns (with synonyms from ``scenes/words/things.toml``), colour family, category labels, the letter
  on a crossword block, the number of a board slot, and where it is in the shoulder camera's
  view (for "left", "right", "nearest"...).
* :func:`align` binds a set of :class:`Mention` s (a name and, where the role gives them, a
  description and a type) to those things one-to-one, and reports unbound and ambiguous names.
* :class:`NameBook` keeps an episode's bindings. It learns them from every answered model call
  (:meth:`NameBook.observe`): the objects a model introduced (entries with a ``name`` and a
  ``description`` / ``type`` / ``kind``) and the model's own detections (the point it gave for
  a name lands on a scene object), and binds a name met for the first time by matching its words.
  The sim-oracle rewrites each query into ids (:meth:`NameBook.to_ids`) and its answers back
  into the names the agent knows (:meth:`NameBook.from_ids`), so every mixed configuration of
  models and oracles speaks one language.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np
from scipy.optimize import linear_sum_assignment

from agentic_env.pddl.planning import load_domain
from agentic_env.sim.cameras import camera_pose_in_world
from agentic_env.tasks.catalogue import entries
from agentic_env.tasks.vocabulary import thing_words

if TYPE_CHECKING:
    from agentic_env.agents.models.base import CallRecord
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
    catalogue = {e.kind: e for e in entries()}.get(stem)
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


def _entries_with_names(value: Any) -> Iterable[list[dict[str, Any]]]:
    """Lists of objects with a ``name`` anywhere in a JSON value."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _entries_with_names(item)
    elif isinstance(value, list):
        named = [v for v in value if isinstance(v, dict) and isinstance(v.get("name"), str)
                 and any(k in v for k in ("description", "type", "kind"))]
        if named:
            yield named
        for item in value:
            yield from _entries_with_names(item)


class NameBook:
    """An episode's bindings of model names to scene objects (see the module docstring).

    Args:
        env: the simulator whose task's objects the names are bound to.
    """

    def __init__(self, env: SimEnv) -> None:
        self._env_ref = weakref.ref(env)  # weak: _BOOKS is keyed by the env itself
        self.alignment = Alignment()
        self._names_of: dict[str, str] = {}
        self._domain: frozenset[str] | None = None

    _env = property(lambda self: self._env_ref())

    @property
    def ids(self) -> frozenset[str]:
        """The task's PDDL object names."""
        return frozenset(self._ids)

    @property
    def _ids(self) -> set[str]:
        """The task's PDDL object names (read live: the episode's objects are drawn at reset)."""
        return {str(name) for name in self._env.task.pddl_objects()}  # type: ignore[attr-defined]

    # -- learning ------------------------------------------------------------------------

    def introduce(self, mentions: Sequence[Mention]) -> Alignment:
        """Bind names a model introduced together (names bound before keep their thing)."""
        new = [m for m in mentions if m.name and m.name not in self.alignment.bound]
        if not new:
            return Alignment()
        found = align(new, scene_things(self._env))
        self._learn(found)
        return found

    def observe(self, record: CallRecord) -> None:
        """Learn from one answered call: the objects it introduced, and where its detection of
        a name not yet bound landed."""
        if record.reply is None:
            return
        parsed = record.reply.parsed
        for named in _entries_with_names(parsed):
            self.introduce([Mention(str(e["name"]), str(e.get("description") or ""),
                                    str(e.get("type") or e.get("kind") or "")) for e in named])
        self._resolve_named(parsed)
        for call in record.reply.tool_calls:
            self._resolve_named(dict(call.arguments))
        fields = record.query.fields
        target, point = fields.get("target"), parsed.get("point")
        if (isinstance(target, str) and target and parsed.get("found") is True
                and isinstance(point, list) and len(point) >= 2
                and target not in self._ids and target not in self.alignment.bound):
            thing = self._seen_at(str(fields.get("camera", "shoulder")), point,
                                  fields.get("image_size"))
            if thing is not None:
                self._learn(Alignment(bound={target: thing}))

    def _resolve_named(self, value: Any, key: str = "") -> None:
        """Bind, while the scene is as the model saw it, every name an answer gives in a
        field that holds names (:data:`NAME_FIELDS`, and ``params`` lists of short names)."""
        if isinstance(value, dict):
            for k, v in value.items():
                self._resolve_named(v, str(k))
        elif isinstance(value, list):
            for item in value:
                self._resolve_named(item, key)
        elif isinstance(value, str) and key in (*NAME_FIELDS, "params") \
                and 0 < len(value.split()) <= 6:
            self.resolve(value)
        elif isinstance(value, str):  # names written into free text: plans, reflections
            for word in set(re.findall(r"(?<![\w-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])",
                                       value)):
                if word not in self._domain_words() and word not in self.alignment.bound \
                        and word not in self._ids:
                    found = align([Mention(word)], scene_things(self._env))
                    if word in found.bound and word not in found.ambiguous:
                        self._learn(found)  # other hyphenated words are just words

    def _domain_words(self) -> frozenset[str]:
        """The hyphenated words of the task's PDDL domain (actions, predicates, types), which
        name no object."""
        if self._domain is None:
            text = load_domain(self._env.task.domain)  # type: ignore[attr-defined]
            self._domain = frozenset(re.findall(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+",
                                                text.lower()))
        return self._domain

    def _learn(self, found: Alignment) -> None:
        self.alignment.merge(found)
        for name, thing in found.bound.items():
            if name != thing:
                self._names_of.setdefault(thing, name)

    def _seen_at(self, camera: str, point: Sequence[Any], image_size: Any) -> str | None:
        try:
            segmentation = self._env.segmentation(camera)
            height, width = segmentation.shape
            sent_h, sent_w = (int(v) for v in image_size) if image_size else (height, width)
            col = int(float(point[0]) * width / max(sent_w, 1))
            row = int(float(point[1]) * height / max(sent_h, 1))
        except (ValueError, TypeError, KeyError):
            return None
        if not (0 <= row < height and 0 <= col < width):
            return None
        geom = int(segmentation[row, col])
        if geom < 0:
            return None
        return next((t for t in sorted(self._ids) if geom in thing_geoms(self._env, t)), None)

    # -- using -----------------------------------------------------------------------------

    def resolve(self, name: str, hint: str = "") -> str | None:
        """The id ``name`` means: itself if it is one, its binding if it has one, else the one
        thing its words (and ``hint``) fit best, learnt for the episode; ``None`` when none or
        several fit."""
        text = name.strip()
        if text in self._ids:
            return text
        lowered = {i.lower(): i for i in self._ids}
        if text.lower() in lowered:
            return lowered[text.lower()]
        if text in self.alignment.bound:
            return self.alignment.bound[text]
        if not text:
            return None
        found = align([Mention(text, hint)], scene_things(self._env))
        if text in found.ambiguous:
            found = Alignment(unbound=[text])
        self._learn(found)
        return found.bound.get(text)

    def pddl_in_ids(self, text: str) -> str:
        """A PDDL problem a model wrote, with its objects (its ``:objects`` section, typed)
        bound and every bound name written as its id."""
        section = re.search(r"\(\s*:objects(.*?)\)", text, re.S | re.I)
        if section is not None:
            mentions, pending = [], []
            words = section.group(1).split()
            index = 0
            while index < len(words):
                if words[index] == "-" and index + 1 < len(words):
                    mentions += [Mention(w, kind=words[index + 1]) for w in pending]
                    pending, index = [], index + 2
                    continue
                pending.append(words[index])
                index += 1
            self.introduce([*mentions, *(Mention(w) for w in pending)])
        bound = {n: t for n, t in self.alignment.bound.items() if n != t}
        previous = ""

        def rewrite(match: re.Match[str]) -> str:
            nonlocal previous
            word, after_dash = match.group(0), previous == "-"
            previous = word
            return word if after_dash else bound.get(word, word)  # a type stays a type

        return re.sub(r"[^\s()]+", rewrite, text)

    def summary(self) -> dict[str, Any]:
        """The models' own names of the episode: ``bound`` (name -> id, names that are not
        ids), ``unbound`` and ``ambiguous`` (name -> the ids it fitted equally well)."""
        found = self.alignment.as_dict()
        found["bound"] = {n: t for n, t in found["bound"].items() if n != t}
        return found

    def name_for(self, thing: str) -> str:
        """The name the agent knows ``thing`` by (the first a model introduced), else the id."""
        return self._names_of.get(thing, thing)

    def to_ids(self, value: Any, key: str = "") -> Any:
        """``value`` (a query's fields) with every known model name written as its id; whole
        values of :data:`NAME_FIELDS` and the arguments of literals in :data:`LITERAL_FIELDS`
        met for the first time are resolved by their words."""
        if isinstance(value, dict):
            return {k: self.to_ids(v, str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.to_ids(v, key) for v in value]
        if not isinstance(value, str):
            return value
        if key in NAME_FIELDS and value.strip() and value.strip() not in self._ids:
            bound = self.resolve(value)
            if bound is not None:
                return bound
        if key in LITERAL_FIELDS:
            return re.sub(r"\(([^()]*)\)", lambda m: "(" + self._literal(m.group(1)) + ")",
                          value)
        return replace_names(value, {n: t for n, t in self.alignment.bound.items() if n != t})

    def _literal(self, body: str) -> str:
        words = body.split()
        if not words or words[0].lower() == "not":
            return body
        return " ".join([words[0], *(self.resolve(w) or w for w in words[1:])])

    def from_ids(self, value: Any) -> Any:
        """``value`` (an answer) with every id written as the name the agent knows it by."""
        return replace_names(value, self._names_of)


def replace_names(value: Any, table: Mapping[str, str]) -> Any:
    """``value`` (text, or a JSON value) with every whole name of ``table`` replaced by its
    entry (a name is whole when no letter, digit or hyphen touches it)."""
    if isinstance(value, dict):
        return {k: replace_names(v, table) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [replace_names(v, table) for v in value]
    if not isinstance(value, str) or not table or not value:
        return value
    pattern = "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))
    return re.sub(rf"(?<![\w-])(?:{pattern})(?![\w-])", lambda m: table[m.group(0)], value)


_BOOKS: weakref.WeakKeyDictionary[SimEnv, NameBook] = weakref.WeakKeyDictionary()


def name_book(env: SimEnv) -> NameBook:
    """The episode's :class:`NameBook` of ``env`` (made on first use; :func:`new_name_book`
    starts a new one at an episode's start)."""
    book = _BOOKS.get(env)
    if book is None:
        book = _BOOKS[env] = NameBook(env)
    return book


def new_name_book(env: SimEnv) -> NameBook:
    """A fresh :class:`NameBook` for ``env``'s next episode (after ``reset``)."""
    _BOOKS[env] = NameBook(env)
    return _BOOKS[env]
