"""MALLVI's Descriptor: a memory of the initial scene (paper section 3, "Descriptor").

Before the first subtask runs, every object the decomposition names is localised in the
first shoulder view (the Localizer, no active search) and remembered with its first position
and its nearest neighbours, so a later subtask can refer to the scene as it was ("put it back
where it was": ``memory:previous location``). Base frame (z up, table top z = 0), metres.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from agentic_env.agents.skills import SkillIO, locate
from agentic_env.agents.skills.locate import Detector

#: Objects within this horizontal distance (m) of one another are neighbours.
NEIGHBOUR_RADIUS = 0.15
#: Most neighbours remembered per object.
MAX_NEIGHBOURS = 2


@dataclass(frozen=True)
class Remembered:
    """One object as first seen.

    Attributes:
        name: the object.
        position: centre of its first-seen points (x, y) and their top z, m.
        neighbours: the nearest other remembered objects, nearest first.
    """

    name: str
    position: tuple[float, float, float]
    neighbours: tuple[str, ...] = ()


@dataclass
class SceneMemory:
    """The Descriptor's memory: object name -> :class:`Remembered`."""

    objects: dict[str, Remembered] = field(default_factory=dict)

    @classmethod
    def record(cls, io: SkillIO, detector: Detector, names: Iterable[str]) -> SceneMemory:
        """Localise each of ``names`` in ``io``'s current shoulder view and remember it
        (names not found are left out)."""
        seen: dict[str, np.ndarray] = {}
        for name in dict.fromkeys(names):
            if name == "table" or name.startswith("memory:"):
                continue
            found = locate(io, detector, name, search=False)
            if found.ok:
                points = found.data["target"].cloud.points
                seen[name] = np.array([*points[:, :2].mean(axis=0), points[:, 2].max()])
        memory = cls()
        for name, where in seen.items():
            others = sorted((float(np.linalg.norm(p[:2] - where[:2])), other)
                            for other, p in seen.items() if other != name)
            near = tuple(o for d, o in others if d < NEIGHBOUR_RADIUS)[:MAX_NEIGHBOURS]
            memory.objects[name] = Remembered(name, tuple(float(v) for v in where), near)
        return memory

    def resolve(self, reference: str, source: str) -> tuple[float, float] | None:
        """The (x, y) a memory reference points at: ``memory:previous location`` is where
        ``source`` first stood; ``memory:previous location of X`` where ``X`` did. ``None``
        when that object was not remembered or the relation is not known."""
        relation = reference.removeprefix("memory:").strip().lower()
        if not relation.startswith("previous location"):
            return None
        name = relation.partition(" of ")[2].strip() or source
        known = self.objects.get(name)
        return None if known is None else (known.position[0], known.position[1])

    def describe(self) -> list[dict[str, object]]:
        """JSON-ready summary for the trace."""
        return [{"name": r.name, "position": [round(v, 3) for v in r.position],
                 "neighbours": list(r.neighbours)} for r in self.objects.values()]
