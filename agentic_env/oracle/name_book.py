"""An episode's name book: the names its models introduced, bound to scene objects
(privileged; see :mod:`agentic_env.oracle.naming` for the alignment itself).

:class:`NameBook` learns bindings from every answered model call (:meth:`NameBook.observe`):
the objects a model introduced (entries with a ``name`` and a ``description`` / ``type`` /
``kind``), the model's own detections (the point it gave for a name lands on a scene object),
and names met in an answer's name fields or written into its free text (bound while the scene
is as the model saw it). The sim-oracle rewrites each query into ids (:meth:`NameBook.to_ids`)
and its answers back into the names the agent knows (:meth:`NameBook.from_ids`); graders and
judges read models' names through it.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentic_env.oracle.naming import (
    LITERAL_FIELDS,
    NAME_FIELDS,
    Alignment,
    Mention,
    align,
    scene_things,
    thing_geoms,
)
from agentic_env.pddl.planning import load_domain

if TYPE_CHECKING:
    from agentic_env.agents.models.base import CallRecord
    from agentic_env.envs.sim_env import SimEnv


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
        self._just_words: set[str] = set()

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
        # a tool query's parsed answer repeats its tool calls: a tool's name is no object's
        parsed = {k: v for k, v in record.reply.parsed.items() if k != "tool_calls"}
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
            words = set(re.findall(r"(?<![\w-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])", value))
            words -= self._domain_words() | self._just_words | self.alignment.bound.keys() \
                | self._ids
            for word in words:
                found = align([Mention(word)], scene_things(self._env))
                if word in found.bound and word not in found.ambiguous:
                    self._learn(found)
                else:  # a hyphenated word that names nothing: not looked at again
                    self._just_words.add(word)

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

    def named(self) -> frozenset[str]:
        """The ids the agent already knows by a name some model gave (its own, or the id
        itself when a model answered with ids)."""
        return frozenset(self.alignment.bound.values())

    def name_for(self, thing: str) -> str:
        """The name the agent knows ``thing`` by (the first a model introduced), else the id."""
        return self._names_of.get(thing, thing)

    def to_ids(self, value: Any, key: str = "", learn: bool = True) -> Any:
        """``value`` (a query's fields) with every known model name written as its id; whole
        values of :data:`NAME_FIELDS` and the arguments of literals in :data:`LITERAL_FIELDS`
        met for the first time are resolved by their words. ``learn=False`` (a conversation:
        its names were learnt when they were answered; a tool's ``name`` is no object's) only
        writes the known names."""
        if isinstance(value, dict):
            return {k: self.to_ids(v, str(k), learn) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.to_ids(v, key, learn) for v in value]
        if not isinstance(value, str):
            return value
        known = {n: t for n, t in self.alignment.bound.items() if n != t}
        if not learn:
            return replace_names(value, known)
        if key in NAME_FIELDS and value.strip() and value.strip() not in self._ids:
            bound = self.resolve(value)
            if bound is not None:
                return bound
        if key in LITERAL_FIELDS:
            return re.sub(r"\(([^()]*)\)", lambda m: "(" + self._literal(m.group(1)) + ")",
                          value)
        return replace_names(value, known)

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
