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

from collections.abc import Callable
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


def answer(oracle: OracleContext, query: ModelQuery) -> dict[str, Any]:
    """The listing of the episode's scene: name, true kind and words of each thing (one
    wrong kind at the ``detector``'s error rate).

    An oracle that sees only the image lists what the image shows, and its error follows the
    image like a pointing's (:meth:`~agentic_env.oracle.context.OracleContext.wrong` with a
    :class:`~agentic_env.oracle.difficulty.Sighting`): the least visible listed thing's
    pixels and the frame's quality set the rate, and that thing is the one mistyped."""
    kinds = true_kinds(oracle.task.pddl_objects())
    things = sorted(name for name in kinds if name != TABLE)
    hardest: str | None = None
    seen: Callable[[], Sighting] | None = None
    if oracle.sees_image_only:
        size = query.images[0].pixels.shape[:2] if query.images else (0, 0)
        counts = oracle.sight.pixels(things, str(query.fields.get("camera", "shoulder")),
                                     (int(size[0]), int(size[1])))
        things = [n for n in things
                  if n not in counts or counts[n] >= oracle.sight.min_visible_px]
        kinds = {name: kind for name, kind in kinds.items() if name in things or name == TABLE}
        visible = {name: counts[name] for name in things if name in counts}
        if visible:
            hardest = min(visible, key=lambda name: (visible[name], name))
            px, frame = visible[hardest], sent_frame(query)

            def sighted() -> Sighting:  # measured only when the draw needs it
                return Sighting(px, 0, None if frame is None else measure(frame))

            seen = sighted
    if things and oracle.wrong("detector", seen=seen):
        name = hardest or things[int(oracle.rng.integers(len(things)))]
        others = [k for k in Kind if k not in (kinds[name], Kind.TABLE)]
        kinds[name] = others[int(oracle.rng.integers(len(others)))]
    words = object_words(sorted(kinds))
    return {"objects": [{"name": name, "kind": kind.value, "description": words[name]}
                        for name, kind in kinds.items()]}
