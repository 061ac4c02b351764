"""MALLVI's model roles, each one function around one model call (paper section 3): the
Descriptor (:func:`describe_scene`), the Decomposer (:func:`decompose`), the Localizer
(:func:`localize`), the Thinker (:func:`think_pick` over the candidates drawn on a numbered
sheet, :func:`think_place`), the Reflector (:func:`reflect`) and the single-agent baseline's
one call (:func:`plan_single`).

Every role renders its packaged prompt template (``prompts/<role>.md``), attaches its images,
states the JSON schema of the answer and asks through the module context (bounded re-asks on
malformed output; :class:`~agentic_env.agents.models.context.ModuleFailedError` after them).
Answers that parse but cannot be used (an empty subtask name, a candidate index out of range)
raise :class:`RoleAnswerError`, so the caller can blame the role. The ``fields`` of each query
repeat the structured values the prompt was rendered from; only the privileged sim-oracle
reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.agents.mallvi.memory import DescribedObject, SceneDescription
from agentic_env.agents.models.base import ModelImage
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.coordinates import COORDINATES_SCHEMA
from agentic_env.agents.perception import numbered_sheet
from agentic_env.agents.runtime.detector import (
    COORDS,
    detection_from,
    pointing_format,
    words_for,
)
from agentic_env.agents.runtime.prompts import ask_json, camera_image
from agentic_env.agents.skills import Detection
from agentic_env.robot.reorienting import TURN_GOALS

_TEXT = {"type": "string"}
_NUMBER = {"type": "number"}
#: A place point of the Thinker: base-frame metres, (x, y) first.
_METRES = {"type": ["array", "null"], "items": _NUMBER, "minItems": 2, "maxItems": 4}
_DECISION = {"type": "string", "enum": ["SUCCESS", "FAILURE"]}
_NAME = {"type": ["string", "null"]}
#: Place modes a Thinker may choose (see :func:`think_place`).
PLACE_MODES: tuple[str, ...] = ("on", "in", "drawer", "slot", "table", "point")
#: Where the roles' prompt templates live.
PACKAGE = "agentic_env.agents.mallvi"
#: Destination prefix of a Descriptor-memory move's text (``memory:previous location``).
MEMORY_PREFIX = "memory:"
#: Kinds of a Decomposer move (its typed ``kind`` field): ``place`` the source on or in the
#: destination object, put it on a free ``table`` spot, put it back where the ``memory``
#: says an object first stood, ``turn`` it in place, ``open_drawer`` / ``close_drawer``.
MOVE_KINDS: tuple[str, ...] = ("place", "table", "memory", "turn", "open_drawer",
                               "close_drawer")
#: Destination text of each drawer move (``move(top-drawer, open, 0)``).
DRAWER_STATES: dict[str, str] = {"open_drawer": "open", "close_drawer": "closed"}

_MOVE = {"type": "object", "required": ["kind", "source"],
         "properties": {"kind": {"type": "string", "enum": list(MOVE_KINDS)},
                        "source": _TEXT, "destination": _NAME, "rotation_deg": _NUMBER,
                        "pose": {"type": ["string", "null"], "enum": [*TURN_GOALS, None]},
                        "from_drawer": _NAME, "memory_of": _NAME}}
DECOMPOSER_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["subtasks"],
    "properties": {"subtasks": {"type": "array", "items": _MOVE}, "reasoning": _TEXT}}
_DESCRIBED = {"type": "object", "required": ["name", "description", "position"],
              "properties": {"name": _TEXT, "category": _TEXT, "color": _TEXT,
                             "description": _TEXT, "position": _TEXT,
                             "relations": {"type": "array", "items": {
                                 "type": "object", "required": ["relation", "object"],
                                 "properties": {"relation": _TEXT, "object": _TEXT}}}}}
DESCRIPTOR_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["objects"],
    "properties": {"objects": {"type": "array", "items": _DESCRIBED}, "summary": _TEXT}}
LOCALIZER_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["found", "point"],
    "properties": {"found": {"type": "boolean"}, "point": COORDS, "box": COORDS,
                   "coordinates": COORDINATES_SCHEMA, "reasoning": _TEXT}}
THINKER_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["decision"],
    "properties": {"decision": _DECISION,
                   "pick_candidates": {"type": "array", "items": {"type": "integer"}},
                   "place_mode": {"type": ["string", "null"], "enum": [*PLACE_MODES, None]},
                   "place_point": _METRES, "rotation_degrees": _NUMBER, "reasoning": _TEXT}}
REFLECTOR_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["task_complete", "confidence"],
    "properties": {"task_complete": {"type": "boolean"}, "verification_result": _TEXT,
                   "confidence": _NUMBER}}
_PLANNED = {"type": "object",
            "required": ["source", "destination", "pick_point", "place_mode"],
            "properties": {"source": _TEXT, "destination": _TEXT, "rotation_deg": _NUMBER,
                           "pose": _NAME, "from_drawer": _NAME, "pick_point": COORDS,
                           "pick_box": COORDS, "place_point": COORDS, "place_box": COORDS,
                           "place_mode": {"type": "string",
                                          "enum": ["on", "in", "drawer", "slot", "table"]}}}
SINGLE_AGENT_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["plan"],
    "properties": {"plan": {"type": "array", "items": _PLANNED},
                   "coordinates": COORDINATES_SCHEMA, "reasoning": _TEXT}}
#: Grasp candidates per row of the Thinker's numbered sheet.
SHEET_COLUMNS = 3


class RoleAnswerError(ValueError):
    """A well-formed answer that cannot be used; ``role`` names the role at fault."""

    def __init__(self, role: str, detail: str) -> None:
        super().__init__(f"the {role} answered unusably: {detail}")
        self.role = role


@dataclass(frozen=True)
class Move:
    """One atomic subtask ``move(source, destination, rotation_deg)`` of a typed ``kind``
    (:data:`MOVE_KINDS`).

    Attributes:
        source: the object to pick (or the drawer to open or close).
        destination: the object to put it on or in (``place``); for the other kinds the
            text the move is shown with: ``table``, ``memory:previous location[ of X]``, the
            source itself (a turn), ``open`` / ``closed`` (a drawer move).
        rotation_deg: turn, degrees; about the vertical (positive clockwise from above) when
            no ``pose`` is named, else how far the turn into ``pose`` goes.
        pose: the named resting pose a turn ends in (``upright``, ``on-side``,
            ``upside-down``, ``handle-<direction>``), ``None`` for a turn about the vertical.
        from_drawer: the drawer the source is taken out of, ``None`` when it is not in one.
        kind: what the move does, one of :data:`MOVE_KINDS`.
        memory_of: a ``memory`` move: the object whose first position the source goes to
            (``None``: the source's own).
    """

    source: str
    destination: str
    rotation_deg: float = 0.0
    pose: str | None = None
    from_drawer: str | None = None
    kind: str = "place"
    memory_of: str | None = None

    @property
    def from_memory(self) -> bool:
        """Whether the destination is a point the Descriptor's memory gives."""
        return self.kind == "memory"

    @property
    def remembered(self) -> str:
        """The object whose first position a ``memory`` move goes to."""
        return self.memory_of or self.source

    @property
    def is_turn(self) -> bool:
        """Whether this is an in-place turn of the source."""
        return self.kind == "turn"

    @property
    def to_table(self) -> bool:
        """Whether the source goes to a free table spot."""
        return self.kind == "table"

    @property
    def drawer_state(self) -> str | None:
        """``open`` / ``closed`` for a drawer move, else ``None``."""
        return DRAWER_STATES.get(self.kind)

    def __str__(self) -> str:
        pose = f", {self.pose}" if self.pose else ""
        out = f" out of {self.from_drawer}" if self.from_drawer else ""
        return f"move({self.source}, {self.destination}, {self.rotation_deg:g}{pose}){out}"


def parse_move(item: Mapping[str, Any], role: str) -> Move:
    """One move of a ``role``'s answer (the :data:`DECOMPOSER_SCHEMA` item format); its
    destination text follows from its ``kind`` (see :class:`Move`).

    Raises:
        RoleAnswerError: an empty source, a ``place`` without a destination, a ``turn``
            with neither an angle nor a pose.
    """
    def optional(key: str) -> str | None:
        value = item.get(key)
        return None if value is None else (str(value).strip() or None)

    kind, source = str(item["kind"]), _name(item["source"], role, "source")
    rotation, pose, memory_of = float(item.get("rotation_deg") or 0.0), optional("pose"), None
    if kind == "place":
        destination = _name(item.get("destination") or "", role, "destination")
    elif kind == "memory":
        memory_of = optional("memory_of")
        memory_of = None if memory_of == source else memory_of
        destination = f"{MEMORY_PREFIX}previous location" + (f" of {memory_of}" if memory_of
                                                              else "")
    elif kind == "turn":
        if not rotation and pose is None:
            raise RoleAnswerError(role, f"a turn of {source} with no angle and no pose")
        destination = source
    elif kind == "table":
        destination = "table"
    else:
        destination = DRAWER_STATES[kind]
    return Move(source, destination, rotation, pose, optional("from_drawer"), kind, memory_of)


def _name(value: Any, role: str, what: str) -> str:
    text = str(value).strip()
    if not text:
        raise RoleAnswerError(role, f"an empty {what}")
    return text


def describe_scene(ctx: ModuleContext, obs: Mapping[str, np.ndarray]) -> SceneDescription:
    """Descriptor: the first shoulder image -> the objects on the table with their
    attributes, position on the table and spatial relations (the scene memory's text)."""
    height, width = obs["shoulder_rgb"].shape[:2]
    answer = ask_json(ctx, PACKAGE, "descriptor", (camera_image(obs, "shoulder"),),
                      DESCRIPTOR_SCHEMA, {"camera": "shoulder", "image_size": [height, width]})
    objects = tuple(
        DescribedObject(_name(o["name"], "descriptor", "object name"),
                        str(o.get("description", "")), str(o.get("position", "")),
                        tuple((str(r["relation"]), str(r["object"]))
                              for r in o.get("relations") or ()),
                        str(o.get("category", "")), str(o.get("color", "")))
        for o in answer["objects"])
    return SceneDescription(objects, str(answer.get("summary", "")))


def decompose(ctx: ModuleContext, obs: Mapping[str, np.ndarray], instruction: str,
              scene: SceneDescription | None = None) -> tuple[list[Move], str]:
    """Decomposer: instruction + first shoulder image + the Descriptor's ``scene``
    description (``None``: none was made) -> ordered moves, and its reasoning."""
    described = scene.text() if scene is not None else "(no description was made)"
    answer = ask_json(ctx, PACKAGE, "decomposer", (camera_image(obs, "shoulder"),),
                      DECOMPOSER_SCHEMA,
                      {"instruction": instruction,
                       "scene_objects": [] if scene is None else scene.names()},
                      instruction=instruction, scene=described)
    moves = [parse_move(m, "decomposer") for m in answer["subtasks"]]
    return moves, str(answer.get("reasoning", ""))


def localize(ctx: ModuleContext, obs: Mapping[str, np.ndarray], camera: str, target: str,
             part: str = "object") -> Detection | None:
    """Localizer's open-vocabulary detection of ``target`` in ``camera``'s image."""
    height, width = obs[f"{camera}_rgb"].shape[:2]
    description = words_for(target)
    fmt = pointing_format(ctx, "localizer")
    answer = ask_json(ctx, PACKAGE, "localizer", (camera_image(obs, camera),), LOCALIZER_SCHEMA,
                      {"target": target, "part": part, "camera": camera,
                       "image_size": [height, width], "coordinates": fmt.name},
                      target=target, description=description, camera=camera, width=width,
                      height=height, **fmt.prompt_values(height, width))
    if not answer["found"]:
        return None
    return detection_from(answer, fmt, height, width)


@dataclass(frozen=True)
class PickChoice:
    """The Thinker's pick: candidate indices, best first (empty on ``FAILURE``)."""

    order: tuple[int, ...]
    reasoning: str


def think_pick(ctx: ModuleContext, obs: Mapping[str, np.ndarray], move: Move,
               candidates: Sequence[Mapping[str, Any]],
               drawings: Sequence[np.ndarray]) -> PickChoice:
    """Thinker, pick phase: rank the grasp candidates (``pose`` 4x4 base frame, ``width``
    m, ``score``) of ``move``'s source, shown as ``drawings`` (one (H, W, 3) uint8 picture
    per candidate, in order: the gripper drawn over the local point cloud, see
    :func:`~agentic_env.agents.perception.render_grasp`) on one numbered sheet.

    Raises:
        RoleAnswerError: an index out of range.
        ValueError: not one drawing per candidate.
    """
    if len(drawings) != len(candidates):
        raise ValueError(f"{len(drawings)} drawings of {len(candidates)} grasp candidates")
    lines = "\n".join(
        f"{i}: grasp at {np.round(np.asarray(c['pose'])[:3, 3], 3).tolist()}, approach "
        f"{np.round(np.asarray(c['pose'])[:3, 2], 2).tolist()}, opening "
        f"{c['width'] * 1000:.0f} mm, geometric score {c['score']:.2f}"
        for i, c in enumerate(candidates)) or "(none)"
    shown = [{"pose": np.asarray(c["pose"]).tolist(), "width": float(c["width"])}
             for c in candidates]
    images = [camera_image(obs, "shoulder")]
    if drawings:
        images.append(ModelImage("grasp_candidates",
                                 numbered_sheet(drawings, columns=SHEET_COLUMNS)))
    answer = ask_json(ctx, PACKAGE, "thinker", images, THINKER_SCHEMA,
                      {"phase": "pick", "source": move.source, "candidates": shown},
                      template="thinker_pick", subtask=move, candidates=lines,
                      count=len(candidates), source=move.source)
    order = tuple(int(i) for i in answer.get("pick_candidates") or ())
    if any(not 0 <= i < len(candidates) for i in order):
        raise RoleAnswerError("thinker", f"pick candidates {list(order)} of "
                              f"{len(candidates)}")
    if answer["decision"] == "FAILURE":
        order = ()
    return PickChoice(order, str(answer.get("reasoning", "")))


@dataclass(frozen=True)
class PlaceChoice:
    """The Thinker's place: a mode of :data:`PLACE_MODES` and, for ``point``, (x, y) m."""

    mode: str | None
    point: tuple[float, float] | None
    reasoning: str


def think_place(ctx: ModuleContext, obs: Mapping[str, np.ndarray], move: Move,
                destination: str, memory_point: Sequence[float] | None) -> PlaceChoice:
    """Thinker, place phase: how to set the held source down at ``move``'s destination
    (``destination`` describes what the Localizer found; ``memory_point`` is the remembered
    (x, y) of a memory destination, base frame, m).

    Raises:
        RoleAnswerError: ``point`` mode without a point.
    """
    memory = None if memory_point is None else [round(float(v), 3) for v in memory_point]
    answer = ask_json(ctx, PACKAGE, "thinker", (camera_image(obs, "shoulder"),), THINKER_SCHEMA,
                      {"phase": "place", "source": move.source,
                       "destination": move.destination, "memory_point": memory},
                      template="thinker_place", subtask=move, destination=destination,
                      source=move.source)
    if answer["decision"] == "FAILURE":
        return PlaceChoice(None, None, str(answer.get("reasoning", "")))
    mode = answer.get("place_mode")
    point = answer.get("place_point")
    if mode is None or (mode == "point" and (point is None or len(point) < 2)):
        raise RoleAnswerError("thinker", f"place mode {mode!r} with point {point!r}")
    xy = (float(point[0]), float(point[1])) if mode == "point" else None
    return PlaceChoice(str(mode), xy, str(answer.get("reasoning", "")))


@dataclass(frozen=True)
class Verdict:
    """The Reflector's judgement of one subtask."""

    complete: bool
    explanation: str
    confidence: float


def reflect(ctx: ModuleContext, before: Mapping[str, np.ndarray],
            after: Mapping[str, np.ndarray], move: Move, report: str,
            place_point: Sequence[float] | None) -> Verdict:
    """Reflector: subtask + the Actor's report + before/after images -> verdict."""
    images = (camera_image(before, "shoulder", "before_shoulder_rgb"),
              camera_image(after, "shoulder", "after_shoulder_rgb"),
              camera_image(after, "wrist", "after_wrist_rgb"))
    point = None if place_point is None else [float(v) for v in place_point]
    answer = ask_json(ctx, PACKAGE, "reflector", images, REFLECTOR_SCHEMA,
                      {"source": move.source, "destination": move.destination,
                       "pose": move.pose, "actor_report": report, "place_point": point},
                      subtask=move, report=report)
    return Verdict(bool(answer["task_complete"]), str(answer.get("verification_result", "")),
                   float(np.clip(answer["confidence"], 0.0, 1.0)))


@dataclass(frozen=True)
class PlannedMove:
    """One move of the single-agent plan: pixels in the first shoulder image."""

    move: Move
    pick: Detection | None
    place: Detection | None
    place_mode: str


def plan_single(ctx: ModuleContext, obs: Mapping[str, np.ndarray], instruction: str
                ) -> list[PlannedMove]:
    """The single-agent baseline: one call plans every move's pick and place points (in the
    answering model's coordinate format, converted to pixels)."""
    height, width = obs["shoulder_rgb"].shape[:2]
    fmt = pointing_format(ctx, "single_agent")
    answer = ask_json(ctx, PACKAGE, "single_agent", (camera_image(obs, "shoulder"),),
                      SINGLE_AGENT_SCHEMA,
                      {"instruction": instruction, "image_size": [height, width],
                       "coordinates": fmt.name},
                      instruction=instruction, width=width, height=height,
                      **fmt.prompt_values(height, width))
    plan = []
    for item in answer["plan"]:
        kind = "table" if item["place_mode"] == "table" else "place"
        move = parse_move({**item, "kind": kind}, "single_agent")
        coordinates = {"coordinates": answer.get("coordinates"), **item}
        pick = detection_from(coordinates, fmt, height, width, "pick_point", "pick_box")
        place = detection_from(coordinates, fmt, height, width, "place_point", "place_box")
        plan.append(PlannedMove(move, pick, place, str(item["place_mode"])))
    return plan

