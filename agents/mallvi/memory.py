"""MALLVI's scene memory: what the Descriptor saw of the initial scene (paper section 3,
"Descriptor").

At the start of an episode the Descriptor (a model role, :func:`~agentic_env.agents.mallvi.
roles.describe_scene`) describes the first shoulder view: every object with its attributes,
where it stands on the table and its spatial relations (:class:`SceneDescription`). That text
is the memory the Decomposer plans from and the Thinker consults for a move back to the first
scene. Once the moves are known, every object they name is localised in that same first view
(the Localizer, no active search) and its first position remembered, so a later move can
refer to the scene as it was ("put it back where it was": a ``memory`` move). The memory is
of the initial state, so it is never refreshed: the decomposition is made once. Base frame
(z up, table top z = 0), metres.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agentic_env.agents.skills import SkillIO, locate
from agentic_env.agents.skills.locate import Detector


@dataclass(frozen=True)
class DescribedObject:
    """One object as the Descriptor described it.

    Attributes:
        name: the Descriptor's name for it (the other roles are asked to use it).
        description: its look in words (colour, shape, size, material).
        position: where it stands on the table, in words (e.g. ``front left``).
        relations: ``(relation, other object)`` pairs, e.g. ``("left of", "bowl")``.
        category: what kind of thing it is (``fruit``, ``container``...), ``""`` if not said.
        color: its main colour, ``""`` if not said.
    """

    name: str
    description: str
    position: str
    relations: tuple[tuple[str, str], ...] = ()
    category: str = ""
    color: str = ""

    def text(self) -> str:
        """One line for a prompt: name, description, position and relations."""
        related = "; ".join(f"{relation} {other}" for relation, other in self.relations)
        kind = f" ({self.category})" if self.category else ""
        return (f"- {self.name}{kind}: {self.description}; at the {self.position} of the "
                f"table" + (f"; {related}" if related else ""))


@dataclass(frozen=True)
class SceneDescription:
    """The Descriptor's answer: the objects it saw and a one-sentence summary."""

    objects: tuple[DescribedObject, ...]
    summary: str = ""

    def names(self) -> list[str]:
        """The described objects' names, in the Descriptor's order."""
        return [o.name for o in self.objects]

    def find(self, name: str) -> DescribedObject | None:
        """The described object called ``name``, ``None`` when none is."""
        return next((o for o in self.objects if o.name == name), None)

    def text(self) -> str:
        """The description as prompt lines (the summary last)."""
        lines = [o.text() for o in self.objects] or ["(no objects described)"]
        return "\n".join(lines + ([self.summary] if self.summary else []))


@dataclass(frozen=True)
class Remembered:
    """One object's first position.

    Attributes:
        name: the object, as the moves name it.
        position: centre of its first-seen points (x, y) and their top z, m.
    """

    name: str
    position: tuple[float, float, float]


@dataclass
class SceneMemory:
    """The Descriptor's memory: its description of the first view and the first positions
    of the objects the moves name (object name -> :class:`Remembered`)."""

    objects: dict[str, Remembered] = field(default_factory=dict)
    scene: SceneDescription | None = None

    @classmethod
    def record(cls, io: SkillIO, detector: Detector, names: Iterable[str],
               scene: SceneDescription | None = None) -> SceneMemory:
        """Localise each of ``names`` (objects, never a table spot or a memory reference) in
        ``io``'s current shoulder view and remember it beside ``scene``, the Descriptor's
        description (names not found are left out)."""
        memory = cls(scene=scene)
        for name in dict.fromkeys(names):
            found = locate(io, detector, name, search=False)
            if found.ok:
                points = found.data["target"].cloud.points
                where = (*points[:, :2].mean(axis=0), points[:, 2].max())
                memory.objects[name] = Remembered(name, tuple(float(v) for v in where))
        return memory

    def resolve(self, name: str) -> tuple[float, float] | None:
        """Where ``name`` first stood (x, y), m; ``None`` when it was not remembered."""
        known = self.objects.get(name)
        return None if known is None else (known.position[0], known.position[1])

    def recall(self, name: str) -> str:
        """What the Descriptor said of ``name`` (its prompt line), ``""`` if nothing."""
        described = None if self.scene is None else self.scene.find(name)
        return "" if described is None else described.text()

    def describe(self) -> dict[str, object]:
        """JSON-ready summary for the trace: the description and the first positions."""
        scene = self.scene
        return {"description": None if scene is None else scene.text(),
                "positions": [{"name": r.name, "position": [round(v, 3) for v in r.position]}
                              for r in self.objects.values()]}
