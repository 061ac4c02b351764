"""The perceived semantic snapshot: facts the robot saw, when it saw them, and which are stale.

Partial observability after the paper's section 5: facts such as ``on(x, surface)``,
``in(x, container)``, ``drawer_open(d)`` and ``arm_posture(robot, p)`` are written only by
perception (detections lifted to base-frame point clouds, related by their geometry) or by the
robot's own posture, each stamped with the step it was last seen at. They are never read from
the simulator, so the same builder runs on ``RealEnv``. What each perceived thing is (its
:class:`~agentic_env.agents.runtime.listing.Kind`: object, container, slot, drawer, table...)
is recorded from the detector's typed scene listing, under the names the listing gave. A fact
goes stale when the robot acts on one of its objects or a person changes the scene, and is
fresh again only after the next ``perceive``. Whether the gripper holds something is not
sensed (the agent tracks it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from agentic_env.agents.runtime.listing import Kind, Listed

#: The table top's name in facts while no listing has named it.
TABLE = "table"
#: Slack (m) around a support's footprint within which an object's centre counts as over it.
FOOTPRINT_SLACK = 0.01
#: An object whose lowest point is at most this high (m) stands on the table.
ON_TABLE_HEIGHT = 0.02
#: An object whose lowest point is this far (m) below a support's top is inside it.
INSIDE_DEPTH = 0.01
#: A support's lowest point lies at least this far (m) below the object's.
ABOVE = 0.003


@dataclass
class Fact:
    """One perceived fact.

    Attributes:
        text: the predicate, e.g. ``on(red-cube-1, table)``.
        seen_at: the agent step (tool call number) it was last perceived at.
        stale: something may have changed it since.
    """

    text: str
    seen_at: int
    stale: bool = False


def relate(clouds: Mapping[str, np.ndarray], table: str = TABLE) -> dict[str, str]:
    """The support relation of perceived objects: name -> ``on(x, y)`` / ``in(x, y)``.

    Args:
        clouds: object name -> its (N, 3) points, base frame, metres (table top z = 0).
        table: the table top's name in the facts.

    Each object rests on (or in) the perceived object whose footprint holds its centre and
    whose bottom is the highest one below the object's bottom (``in`` when the object's
    bottom lies below that support's top); an object without one whose bottom is
    near the table stands on the table; otherwise its support is ``unknown``.
    """
    boxes = {name: (pts.min(axis=0), pts.max(axis=0)) for name, pts in clouds.items()
             if len(pts)}
    facts: dict[str, str] = {}
    for name, (low, high) in boxes.items():
        centre = (low[:2] + high[:2]) / 2
        best: tuple[float, str, str] | None = None
        for other, (o_low, o_high) in boxes.items():
            if other == name or not np.all(np.abs(centre - (o_low[:2] + o_high[:2]) / 2)
                                           <= (o_high[:2] - o_low[:2]) / 2 + FOOTPRINT_SLACK):
                continue
            if low[2] < o_low[2] + ABOVE or high[2] <= o_low[2]:
                continue  # the other starts no lower: it is not what the object rests on
            kind = "in" if low[2] < o_high[2] - INSIDE_DEPTH else "on"
            if best is None or o_low[2] > best[0]:  # the closest support below
                best = (float(o_low[2]), other, kind)
        if best is not None:
            facts[name] = f"{best[2]}({name}, {best[1]})"
        elif low[2] <= ON_TABLE_HEIGHT:
            facts[name] = f"on({name}, {table})"
        else:
            facts[name] = f"on({name}, unknown)"
    return facts


class SemanticSnapshot:
    """The agent's perceived state: what each listed thing is, one location fact per
    object, drawer states, posture.

    Attributes:
        clock: the agent step now (advanced by :meth:`tick`).
    """

    def __init__(self) -> None:
        self.clock = 0
        self._objects: dict[str, Fact] = {}
        self._drawers: dict[str, Fact] = {}
        self._surfaces: dict[str, Fact] = {}
        self._posture: Fact | None = None
        self._listed: dict[str, Listed] = {}

    def tick(self) -> int:
        """Advance the clock by one step (one tool call); the new time."""
        self.clock += 1
        return self.clock

    # -- writers -----------------------------------------------------------------------------

    def listed(self, entries: Iterable[Listed]) -> None:
        """Record a scene listing: what each listed thing is (a later listing's entry of a
        name replaces the earlier one)."""
        self._listed.update({entry.name: entry for entry in entries})

    def doubt(self, name: str) -> None:
        """Drop what the listing said ``name`` is (e.g. after a place there failed), so the
        next use of it asks for a new listing."""
        self._listed.pop(name, None)

    def perceived(self, clouds: Mapping[str, np.ndarray], missing: Iterable[str] = ()) -> None:
        """Record a perception: objects seen (name -> base-frame points) and not seen."""
        for name, text in relate(clouds, self.table).items():
            self._objects[name] = Fact(text, self.clock)
            self._surfaces[name] = Fact(f"perceived({name})", self.clock)
        for name in missing:
            self._objects[name] = Fact(f"not_seen({name})", self.clock)

    def surface_perceived(self, name: str) -> None:
        """Record that ``name`` (the table, a container, a drawer's inside) was looked at."""
        self._surfaces[name] = Fact(f"perceived({name})", self.clock)

    def drawer(self, name: str, is_open: bool) -> None:
        """Record a drawer seen open or closed."""
        text = f"drawer_open({name})" if is_open else f"drawer_closed({name})"
        self._drawers[name] = Fact(text, self.clock)
        self.surface_perceived(name)

    def posture(self, name: str) -> None:
        """Record the arm's posture (``observe`` = out of the shoulder camera's view)."""
        self._posture = Fact(f"arm_posture(robot, {name})", self.clock)

    def changed(self, names: Iterable[str]) -> None:
        """The robot acted on ``names``: facts about them and the surfaces they left or
        reached go stale, as does the posture."""
        names = set(names)
        for table in (self._objects, self._drawers, self._surfaces):
            for key, fact in table.items():
                if key in names or any(f"{n})" in fact.text or f"{n}," in fact.text
                                       for n in names):
                    fact.stale = True
        if names:
            self._surfaces.get(self.table, Fact("", 0)).stale = True
        if self._posture is not None:
            self._posture.stale = True

    def invalidate(self) -> None:
        """A person (or an unknown event) changed the scene: every fact is stale."""
        for table in (self._objects, self._drawers, self._surfaces):
            for fact in table.values():
                fact.stale = True
        if self._posture is not None:
            self._posture.stale = True

    # -- readers -----------------------------------------------------------------------------

    def entry(self, name: str) -> Listed | None:
        """The listing's entry of ``name`` (``None``: no listing named it)."""
        return self._listed.get(name)

    def kind(self, name: str) -> Kind | None:
        """What ``name`` is, as the listing typed it (``None``: no listing named it)."""
        entry = self._listed.get(name)
        return entry.kind if entry is not None else None

    def of_kind(self, *kinds: Kind) -> list[str]:
        """Names the listing typed as one of ``kinds``, in listing order."""
        return [name for name, entry in self._listed.items() if entry.kind in kinds]

    @property
    def table(self) -> str:
        """The table top's name: the listing's entry of kind table, else :data:`TABLE`."""
        return next(iter(self.of_kind(Kind.TABLE)), TABLE)

    def perceived_names(self) -> set[str]:
        """Objects with a location fact (seen or looked for and not seen)."""
        return set(self._objects)

    def fresh(self, name: str) -> bool:
        """Whether ``name`` (an object or a surface) was perceived and is not stale."""
        fact = self._surfaces.get(name) or self._objects.get(name)
        return fact is not None and not fact.stale

    def facts(self) -> list[Fact]:
        """Every fact, objects first."""
        posture = [self._posture] if self._posture is not None else []
        return [*self._objects.values(), *self._drawers.values(), *posture]

    def render(self) -> str:
        """The snapshot as the planner reads it: one fact a line with its age and staleness."""
        lines = [f"time: step {self.clock}"]
        lines += [f"kind({name}, {entry.kind.value})  [{entry.description}]"
                  for name, entry in self._listed.items()]
        for fact in self.facts():
            state = "STALE" if fact.stale else "fresh"
            lines.append(f"{fact.text}  [seen at step {fact.seen_at}, {state}]")
        if len(lines) == 1:
            lines.append("(nothing perceived yet: act perceive first)")
        lines.append("gripper contents: not sensed (track what you picked yourself)")
        return "\n".join(lines)
