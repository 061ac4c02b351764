"""The sim-oracle's answer to the scene listing (the ``detector``'s typed list of what the
camera sees, :func:`~agentic_env.agents.runtime.listing.list_scene`).

Privileged: every object and fixture of the task's PDDL problem under its own name, typed by
its PDDL type (:data:`KIND_OF_TYPE`; a movable thing otherwise), plus the table top; an
oracle that sees only the image (an emulated model) lists only what the image sent shows
(:meth:`~agentic_env.oracle.visibility.Visibility.shown`: the visibility threshold,
never a closed drawer's inside). Errors are injected at the ``detector``'s seeded rate: one
listed thing gets a wrong kind (for an emulated model, the least visible one, at the rate
its sighting in the image sent gives).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentic_env.agents.models.base import ModelQuery
from agentic_env.agents.runtime.listing import Kind
from agentic_env.oracle.detection import sent_frame
from agentic_env.oracle.difficulty import Sighting
from agentic_env.oracle.image_quality import measure
from agentic_env.tasks.stacking import TABLE
from agentic_env.tasks.subtasks import object_words

if TYPE_CHECKING:
    from agentic_env.oracle.context import OracleContext

#: The kind of each PDDL type that is no movable thing (``None``: no thing in the scene, e.g.
#: reorientation's poses); the table top is listed as :attr:`Kind.TABLE` under ``table``.
KIND_OF_TYPE: dict[str, Kind | None] = {
    "slot": Kind.SLOT, "drawer": Kind.DRAWER, "container": Kind.CONTAINER,
    "bowl": Kind.CONTAINER, "plate": Kind.SURFACE, "mat": Kind.SURFACE,
    "cloth": Kind.SURFACE, "paper": Kind.SURFACE, "pose": None}


def true_kinds(objects: dict[str, str]) -> dict[str, Kind]:
    """Name -> kind of the scene things among a PDDL problem's ``objects`` (name -> type),
    the table top included."""
    kinds = {name: KIND_OF_TYPE.get(kind, Kind.OBJECT) for name, kind in objects.items()
             if name != TABLE}
    return {**{name: kind for name, kind in kinds.items() if kind is not None},
            TABLE: Kind.TABLE}


@dataclass(frozen=True)
class Shown:
    """The things of a scene listing that the image sent shows.

    Attributes:
        names: the things listed (every one asked about for an oracle that sees the truth;
            for one that sees only the image, those with at least the visibility threshold's
            pixels in it, or not measured there).
        hardest: the least visible of them (``None`` when none was measured in the image).
        seen: the lazy sighting of :attr:`hardest` (its pixels and the frame's quality,
            measured only when the error draw needs it), or ``None``.
    """

    names: list[str]
    hardest: str | None = None
    seen: Callable[[], Sighting] | None = None


def shown(oracle: OracleContext, query: ModelQuery, things: Sequence[str]) -> Shown:
    """Which of ``things`` a listing answering ``query`` holds, and the sighting its error
    follows (for an oracle that sees only the image: the least visible one's)."""
    names = sorted(things)
    if not oracle.sees_image_only:
        return Shown(names)
    size = query.images[0].pixels.shape[:2] if query.images else (0, 0)
    counts = oracle.sight.pixels(names, str(query.fields.get("camera", "shoulder")),
                                 (int(size[0]), int(size[1])))
    names = [n for n in names if n not in counts or counts[n] >= oracle.sight.min_visible_px]
    visible = {name: counts[name] for name in names if name in counts}
    if not visible:
        return Shown(names)
    hardest = min(visible, key=lambda name: (visible[name], name))
    px, frame = visible[hardest], sent_frame(query)

    def sighted() -> Sighting:  # measured only when the draw needs it
        return Sighting(px, 0, None if frame is None else measure(frame))

    return Shown(names, hardest, sighted)


def mistyped(oracle: OracleContext, listed: Shown) -> str | None:
    """The listed thing a listing gets the kind of wrong, drawn at the ``detector``'s error
    rate (its sighting's, for an oracle that sees only the image): the least visible thing,
    else a random one; ``None`` when the draw says right or nothing is listed."""
    if not listed.names or not oracle.wrong("detector", seen=listed.seen):
        return None
    return listed.hardest or listed.names[int(oracle.rng.integers(len(listed.names)))]


def answer(oracle: OracleContext, query: ModelQuery) -> dict[str, Any]:
    """The listing of the episode's scene: name, true kind and words of each thing (one
    wrong kind at the ``detector``'s error rate).

    An oracle that sees only the image lists what the image shows, and its error follows the
    image like a pointing's (:meth:`~agentic_env.oracle.context.OracleContext.wrong` with a
    :class:`~agentic_env.oracle.difficulty.Sighting`): the least visible listed thing's
    pixels and the frame's quality set the rate, and that thing is the one mistyped."""
    kinds = true_kinds(oracle.task.pddl_objects())
    listed = shown(oracle, query, [name for name in kinds if name != TABLE])
    kinds = {name: kind for name, kind in kinds.items() if name in listed.names or name == TABLE}
    name = mistyped(oracle, listed)
    if name is not None:
        others = [k for k in Kind if k not in (kinds[name], Kind.TABLE)]
        kinds[name] = others[int(oracle.rng.integers(len(others)))]
    words = object_words(sorted(kinds))
    return {"objects": [{"name": name, "kind": kind.value, "description": words[name]}
                        for name, kind in kinds.items()]}
