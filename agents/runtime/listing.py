"""The scene listing: one ``detector`` query that lists what the shoulder camera sees, each
thing with the name the model gives it and a typed :class:`Kind` (prompt
``prompts/scene_objects.md``), and the place mode a kind implies.

What a thing is (a slot, a drawer, a container, the table) comes from this typed answer,
never from how the model spelled the thing's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.runtime.manipulator import Place
from agentic_env.agents.runtime.prompts import ask_json, camera_image

#: Template of the listing query (the sim-oracle recognises it by this name).
LISTING_TEMPLATE = "scene_objects"


class Kind(StrEnum):
    """What a listed thing is, for manipulation.

    ``object``: a movable thing (it is picked; things may be stacked on it); ``container``:
    things go into it (bin, bowl, pot); ``surface``: a flat support things go onto (plate,
    mat); ``slot``: a marked cell of a board a block is set into; ``drawer``: a cabinet
    drawer (opened, closed, things go into it); ``table``: the table top itself.
    """

    OBJECT = "object"
    CONTAINER = "container"
    SURFACE = "surface"
    SLOT = "slot"
    DRAWER = "drawer"
    TABLE = "table"


_TEXT = {"type": "string"}
LISTING_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["objects"],
    "properties": {"objects": {"type": "array", "items": {
        "type": "object", "required": ["name", "kind"],
        "properties": {"name": _TEXT, "kind": {"type": "string", "enum": [k.value for k in Kind]},
                       "description": _TEXT}}}},
}


#: Place mode of a ``place`` onto a thing of each kind not put down on top of it.
_ONTO = {Kind.SLOT: Place.SLOT, Kind.TABLE: Place.TABLE, Kind.CONTAINER: Place.IN,
         Kind.DRAWER: Place.DRAWER}


@dataclass(frozen=True)
class Listed:
    """One thing of a scene listing.

    Attributes:
        name: the model's own short unique name for it.
        kind: what it is.
        description: words a detector can look for (the name's words when none given).
    """

    name: str
    kind: Kind
    description: str


def list_scene(ctx: ModuleContext, obs: Mapping[str, np.ndarray],
               camera: str = "shoulder") -> list[Listed]:
    """Everything ``camera``'s image shows that manipulation could involve, typed (one
    ``detector`` query); names repeated in the answer keep their first entry.

    Raises:
        ModuleFailedError: the detector's answer stayed malformed after its re-asks.
    """
    answer = ask_json(ctx, "agentic_env.agents.runtime", "detector",
                      (camera_image(obs, camera),), LISTING_SCHEMA,
                      {"list": True, "camera": camera}, template=LISTING_TEMPLATE,
                      camera=camera)
    listed: dict[str, Listed] = {}
    for entry in answer["objects"]:
        name = str(entry["name"]).strip()
        if name and name not in listed:
            listed[name] = Listed(name, Kind(entry["kind"]),
                                  str(entry.get("description") or name))
    return list(listed.values())


def place_mode(kind: Kind | None, into: bool) -> Place:
    """How a held object is put down at a thing of ``kind`` (``None``: not known).

    ``into`` is the agent's typed choice of putting it into the thing (``insert``) rather
    than onto it (``place``): into a drawer is :attr:`Place.DRAWER`, into anything else
    :attr:`Place.IN`; onto a slot is :attr:`Place.SLOT`, onto the table :attr:`Place.TABLE`,
    into a container named in a ``place`` :attr:`Place.IN`, onto anything else
    :attr:`Place.ON`.
    """
    if into:
        return Place.DRAWER if kind is Kind.DRAWER else Place.IN
    return _ONTO.get(kind, Place.ON) if kind is not None else Place.ON
