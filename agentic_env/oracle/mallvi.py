"""The sim-oracle's answers for MALLVI's roles, from simulator ground truth (privileged).

The sim-oracle backend hands the MALLVI queries to :func:`answer`. Each
answer is the JSON a real model must give (the agent's parsing and control code runs for
real); errors are injected per role at the oracle's seeded rates:

* ``decomposer``: the reference plan's moves (picks and places, turns into a pose, drawer
  moves, each with its typed ``kind``), with a plan error when injected (a move skipped,
  two moves swapped, a look-alike object, the plan cut short:
  :mod:`agentic_env.oracle.plan_errors`);
* ``descriptor``: every object of the task with its category, words, position on the table
  and relations (what it is in or on, its nearest neighbour's direction); one object is
  missed or one relation is wrong when injected;
* ``localizer``: answered by the oracle's detector (a wrong object when injected);
* ``thinker``: the pick candidates are ranked wrong-first, or the place mode is swapped
  (``on`` <-> ``in``, ``drawer`` -> ``on``);
* ``reflector``: the ``task_complete`` verdict is flipped (``false_fail`` / ``false_pass``);
* ``single_agent``: the decomposer's plan errors on its pick-and-place moves.

:func:`subtask_truth` is the simulator's truth of one move's outcome; the harness uses the
same function to score each Reflector verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.agents.models.base import ModelQuery
from agentic_env.agents.runtime.listing import Kind
from agentic_env.oracle.causes import crop_situation, verdict_sight
from agentic_env.oracle.detection import Detector, sent_frame
from agentic_env.oracle.difficulty import Sighting
from agentic_env.oracle.listing import true_kinds
from agentic_env.oracle.naming import describe, thing_geoms
from agentic_env.oracle.plan_errors import look_alike, plan_error, reshaped
from agentic_env.oracle.visibility import view_of
from agentic_env.robot.reorienting import handle_direction
from agentic_env.tasks.symbolic import reference_plan

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.oracle.context import OracleContext

#: Destination text of a move back to where the source first stood (Descriptor memory).
MEMORY_PREFIX = "memory:"
#: Horizontal distance (m) within which an object counts as set down at a remembered point.
POINT_TOLERANCE = 0.04
#: Destinations of a drawer move (``move(top-drawer, open)``) and the fact each one means.
DRAWER_FACTS = {"open": "drawer-open", "closed": "drawer-closed"}
#: Facts ``<relation> <object> ...`` that say an object rests somewhere (not held).
RESTING_RELATIONS = ("on-table", "on-top-of", "in", "in-drawer", "in-slot", "in-pose")
#: Rotation (degrees) a Decomposer move names for a turn that tips the object over.
TIP_OVER_DEG = 90.0
#: The Descriptor's position words: ``near`` below this x, ``far`` above that x, ``left`` /
#: ``right`` beyond this ``|y|`` (base frame, m).
NEAR_X, FAR_X, SIDE_Y = 0.42, 0.56, 0.12
#: The Descriptor's relation of each containment fact ``<fact> <object> <holder>``.
_HOLDING = {"in": "in", "in-drawer": "in", "in-slot": "in", "on-top-of": "on"}
#: Each relation's opposite (the Descriptor's injected error).
_OPPOSITE = {"in": "on", "on": "in", "left of": "right of", "right of": "left of",
             "behind": "in front of", "in front of": "behind"}


def place_mode(types: Mapping[str, str], destination: str) -> str:
    """How a move reaches ``destination``: ``point`` (a remembered spot), ``table``, ``in``
    (containers), ``drawer``, ``slot`` (a square marked on a board) or ``on``."""
    if destination.startswith(MEMORY_PREFIX):
        return "point"
    if destination == "table":
        return "table"
    kind = types.get(destination)
    if kind in ("slot", "drawer"):
        return str(kind)
    return "in" if kind == "container" else "on"


def _position_words(where: np.ndarray | None) -> str:
    """Where a base-frame position (m) lies on the table, seen from the robot: ``far`` /
    ``middle`` / ``near`` and ``left`` / ``centre`` / ``right``."""
    if where is None:
        return "unknown"
    depth = "near" if where[0] < NEAR_X else "far" if where[0] > FAR_X else "middle"
    side = "left" if where[1] > SIDE_Y else "right" if where[1] < -SIDE_Y else "centre"
    return f"{depth} {side}"


def _relations(name: str, where: Mapping[str, np.ndarray | None],
               facts: set[str]) -> list[dict[str, str]]:
    """``name``'s relations: what it is in or on (the task's facts), then the direction of
    it from its nearest other object, seen from the robot."""
    relations = []
    contained = {name}  # what it is in or on, and what is in or on it
    for fact in facts:
        words = fact.lower().split()
        if len(words) == 3 and words[0] in _HOLDING and name in words[1:]:
            contained.update(words[1:])
            if words[1] == name:
                relations.append({"relation": _HOLDING[words[0]], "object": words[2]})
    here = where.get(name)
    if here is None:  # no place of its own (the stacking table, a pose)
        return relations
    others = [(float(np.linalg.norm(p[:2] - here[:2])), other) for other, p in where.items()
              if other not in contained and p is not None]
    if others:
        other = min(others)[1]
        dx, dy = here[:2] - np.asarray(where[other])[:2]
        direction = (("left of" if dy > 0 else "right of") if abs(dy) > abs(dx)
                     else ("behind" if dx > 0 else "in front of"))
        relations.append({"relation": direction, "object": other})
    return relations


def subtask_truth(env: SimEnv, source: str, destination: str,
                  point: Sequence[float] | None = None, pose: str | None = None) -> bool:
    """Whether the move of ``source`` to ``destination`` holds in ``env``'s state now.

    A drawer move (destination ``open`` / ``closed``) holds when the drawer is so; a turn
    (destination ``source``) when the source rests in ``pose``, or, turned about the
    vertical without a pose, when it rests anywhere (its first yaw is not known here, so
    the angle is not checked).

    Args:
        point: (x, y) base frame, m: where a ``memory:`` destination put the source.
        pose: the named pose a turn ends in.
    """
    facts = {f.lower() for f in env.task.facts(env.scene_state)}  # type: ignore[attr-defined]
    if destination in DRAWER_FACTS:
        return f"{DRAWER_FACTS[destination]} {source}" in facts
    if destination == source:
        if pose:
            return f"in-pose {source} {pose}" in facts
        return any(f.split()[:2] == [relation, source] for f in facts
                   for relation in RESTING_RELATIONS)
    if destination.startswith(MEMORY_PREFIX) or destination == "table":
        tables = [t for t, k in true_kinds(env.task.pddl_objects()).items()  # type: ignore[attr-defined]
                  if k is Kind.TABLE]
        on_table = f"on-table {source}" in facts or any(  # stacking's table is an object
            f"on-top-of {source} {table}" in facts for table in tables)
        if point is None or not destination.startswith(MEMORY_PREFIX):
            return on_table
        try:
            where = env.scene_state.body_position(source)
        except KeyError:
            return False
        return on_table and float(np.linalg.norm(where[:2] - np.asarray(point)[:2])) \
            < POINT_TOLERANCE
    return any(f"{relation} {source} {destination}" in facts
               for relation in ("in", "in-drawer", "on-top-of", "in-slot"))


def _move_literal(source: str, destination: str) -> str:
    """The literal a move's outcome asserts (for the Reflector's cause): ``(drawer-open
    d)``, ``(in-pose s)`` for a turn, ``(on-table s)`` for the table or a remembered point,
    else ``(on s d)``."""
    if destination in DRAWER_FACTS:
        return f"({DRAWER_FACTS[destination]} {source})"
    if destination == source:
        return f"(in-pose {source})"
    if destination == "table" or destination.startswith(MEMORY_PREFIX):
        return f"(on-table {source})"
    return f"(on {source} {destination})"


def reference_moves(env: SimEnv) -> list[dict[str, Any]]:
    """The task's reference plan (from the state now) as MALLVI moves ``{"source",
    "destination", "rotation_deg", "pose", "from_drawer"}``: a pick and the place of the
    same object become one move (``place-in-pose`` a turn: the object is its own
    destination), ``open-drawer`` / ``close-drawer`` a drawer move."""
    plan = reference_plan(env.task, env.scene_state)  # type: ignore[arg-type]
    kinds = true_kinds(env.task.pddl_objects())  # type: ignore[attr-defined]
    moves: list[dict[str, Any]] = []
    for index, step in enumerate(plan):
        name = step.name.lower()
        if name in ("open-drawer", "close-drawer"):
            opening = name == "open-drawer"
            moves.append(_move(step.args[0], "open" if opening else "closed",
                               kind="open_drawer" if opening else "close_drawer"))
            continue
        following = plan[index + 1] if index + 1 < len(plan) else None
        if not name.startswith("pick") or following is None \
                or not following.name.lower().startswith("place") \
                or following.args[:1] != step.args[:1]:
            continue
        source, placing = step.args[0], following.name.lower()
        from_drawer = step.args[1] if name == "pick-from-drawer" else None
        if placing == "place-in-pose":
            goal = following.args[1]
            moves.append(_move(source, source, _turn_deg(env, source, goal), goal,
                               kind="turn"))
        elif placing == "place-on-table" or len(following.args) < 2 \
                or kinds.get(following.args[1]) is Kind.TABLE:  # stacking's table object
            moves.append(_move(source, "table", from_drawer=from_drawer, kind="table"))
        else:
            moves.append(_move(source, following.args[1], from_drawer=from_drawer))
    return moves


def _move(source: str, destination: str, rotation_deg: float = 0.0, pose: str | None = None,
          from_drawer: str | None = None, kind: str = "place") -> dict[str, Any]:
    return {"kind": kind, "source": source, "destination": destination,
            "rotation_deg": rotation_deg, "pose": pose, "from_drawer": from_drawer,
            "memory_of": None}


def _turn_deg(env: SimEnv, body: str, goal: str) -> float:
    """Degrees a turn of ``body`` into ``goal`` goes: a mug's handle turn about the
    vertical (positive clockwise from above), else a tip over (:data:`TIP_OVER_DEG`)."""
    if not goal.startswith("handle-"):
        return TIP_OVER_DEG
    scene = env.scene_state
    handle = scene.body_rotation(body)[:2, 0]
    wanted = handle_direction(goal.removeprefix("handle-"), scene.body_position(body))
    counter = np.arctan2(handle[0] * wanted[1] - handle[1] * wanted[0],
                         float(handle @ wanted[:2]))
    return round(-float(np.degrees(counter)), 1)


def answer(oracle: OracleContext, query: ModelQuery) -> dict[str, Any]:
    """The sim-oracle's answer to a query of one of MALLVI's roles."""
    roles = oracle.part(MallviOracle)
    handlers = {"decomposer": roles.decomposer, "descriptor": roles.descriptor,
                "localizer": lambda fields: roles.localizer(fields, sent_frame(query)),
                "thinker": roles.thinker, "reflector": roles.reflector,
                "single_agent": roles.single_agent}
    return handlers[query.module](query.fields)


class MallviOracle:
    """MALLVI's roles answered from ``oracle``'s simulator (see the module docstring)."""

    def __init__(self, oracle: OracleContext) -> None:
        self._oracle = oracle

    @property
    def _env(self) -> SimEnv:
        return self._oracle.env

    @property
    def _detector(self) -> Detector:
        """The detections every agent's answers share."""
        return self._oracle.part(Detector)

    def _types(self) -> dict[str, str]:
        return self._oracle.task.pddl_objects()

    def decomposer(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Ordered moves of the reference plan (a subtask lost when injected)."""
        moves = self._corrupt(reference_moves(self._env), "decomposer")
        return {"subtasks": moves,
                "reasoning": f"{len(moves)} moves reach the instruction's goal"}

    def _corrupt(self, moves: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
        """``moves`` with ``role``'s plan error made when one is drawn
        (:mod:`agentic_env.oracle.plan_errors`): a move left out, two neighbours swapped, a
        look-alike moved instead (or to instead), or the plan cut short."""
        kind = plan_error(self._oracle, role) if moves else None
        if kind == "wrong_object":
            return self._mistaken_move(moves)
        made = reshaped(moves, kind, self._oracle) if kind else None
        return moves if made is None else made

    def _mistaken_move(self, moves: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``moves`` with one move's source (else destination) a look-alike of it (a turn
        turns the look-alike)."""
        for end in ("source", "destination"):
            order = [int(i) for i in self._oracle.rng.permutation(len(moves))]
            for index in order:
                alike = look_alike(self._oracle, moves[index][end])
                if alike is not None and alike not in (moves[index]["source"],
                                                       moves[index]["destination"]):
                    turn = moves[index]["source"] == moves[index]["destination"]
                    moves[index] = {**moves[index], end: alike,
                                    **({"source": alike, "destination": alike} if turn else {})}
                    return moves
        return moves

    def descriptor(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Every object of the task as it stands now, named by its simulator id: category
        (its PDDL type), words, position on the table and relations (one object missed or
        one relation wrong when injected); an oracle that sees only the image describes
        only what it shows. An emulated Descriptor errs by its hardest object: the detector's
        difficulty (:mod:`agentic_env.oracle.difficulty`) at the fewest visible pixels of
        any object it describes."""
        types = {name: kind for name, kind in self._types().items() if kind != "pose"}
        camera, size = view_of((), fields)
        if self._oracle.sees_image_only:
            shown = self._oracle.shown(types, camera, size)
            types = {name: kind for name, kind in types.items() if name in shown}
        where = {name: self._where(name) for name in types}  # no thing: the task's poses
        facts = self._env.task.facts(self._env.scene_state)  # type: ignore[attr-defined]
        objects = [{"name": name, "category": kind, "description": describe(name),
                    "position": _position_words(where[name]),
                    "relations": _relations(name, where, facts)}
                   for name, kind in types.items()]
        if objects and self._oracle.wrong("descriptor", seen=lambda: self._hardest(
                types, camera, size)):
            self._mislead(objects)
        return {"objects": objects,
                "summary": f"{len(objects)} objects on the table, before anything moved"}

    def _hardest(self, names: Iterable[str], camera: str, size: tuple[int, int]) -> Sighting:
        """The :class:`~agentic_env.oracle.difficulty.Sighting` of the least visible of
        ``names`` in the image of ``camera`` at ``size`` (no look-alike term: the
        Descriptor names every object, it does not pick one)."""
        counts = [px for px in self._oracle.sight.pixels(names, camera, size).values()
                  if px >= self._oracle.sight.min_visible_px]
        return Sighting(min(counts, default=0), 0)

    def _where(self, name: str) -> np.ndarray | None:
        """Base-frame position (3,) of ``name``, m: its body's, else the mean of its
        inside's geoms (a drawer's floor); ``None`` when it has neither."""
        scene = self._env.scene_state
        try:
            return scene.body_position(name)
        except KeyError:
            geoms = thing_geoms(self._env, name, "interior")
            if not geoms:
                return None
            return np.asarray(self._env.data.geom_xpos[geoms]).mean(axis=0) - scene.base_pos

    def _mislead(self, objects: list[dict[str, Any]]) -> None:
        """The injected Descriptor error, in place: one relation turned into its opposite,
        or (half the time, or with no relation to turn) one object left out."""
        rng = self._oracle.rng
        related = [o for o in objects if o["relations"]]
        if related and rng.random() < 0.5:
            relation = related[int(rng.integers(len(related)))]["relations"][0]
            relation["relation"] = _OPPOSITE[relation["relation"]]
            return
        objects.pop(int(rng.integers(len(objects))))

    def localizer(self, fields: Mapping[str, Any],
                  frame: np.ndarray | None = None) -> dict[str, Any]:
        """The detector's answer, with the localizer's error rate (``frame``: the image
        sent, whose quality counts)."""
        return self._detector.detect(fields, "localizer", frame)

    def thinker(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Pick phase: candidates that truly grasp the source, best first. Place phase: the
        place mode of the destination's type (or the remembered point)."""
        if fields.get("phase") == "pick":
            source = str(fields.get("source", ""))
            good, bad, poses = [], [], []
            for index, candidate in enumerate(fields.get("candidates", [])):
                pose = np.asarray(candidate.get("pose"), float).reshape(4, 4)
                correct, clear = self._oracle.sight.grasp_truth(source, pose)
                (good if correct and clear else bad).append(index)
                poses.append(pose)
            # a wrong ranking puts a bad candidate first: judged in the first one's crop
            wrong = self._oracle.wrong("thinker", cause=(lambda: crop_situation(
                self._oracle.sight.crop(source, poses[0], self._types()), False))
                if poses else None)
            order = bad[:1] + good if wrong and bad else good
            return {"decision": "SUCCESS" if order else "FAILURE", "pick_candidates": order,
                    "rotation_degrees": 0.0,
                    "reasoning": "candidates inside the source's outline, clear of the table"
                    if order else "no candidate grasps the source"}
        wrong = self._oracle.wrong("thinker")
        destination = str(fields.get("destination", ""))
        mode = place_mode(self._types(), destination)
        if wrong and mode in ("on", "in", "drawer"):
            mode = {"on": "in", "in": "on", "drawer": "on"}[mode]
        point = fields.get("memory_point") if mode == "point" else None
        return {"decision": "SUCCESS", "place_mode": mode, "place_point": point,
                "rotation_degrees": 0.0,
                "reasoning": f"place {mode} the {destination}"}

    def reflector(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The true outcome of the move (flipped when injected)."""
        source, destination = str(fields.get("source", "")), str(fields.get("destination", ""))
        truth = subtask_truth(self._env, source, destination, fields.get("place_point"),
                              fields.get("pose"))
        height, width = (int(v) for v in fields.get("image_size", (0, 0)))
        # judged by what the after shoulder image shows of the move's source and destination
        verdict = truth != self._oracle.wrong(
            "reflector", "false_fail" if truth else "false_pass",
            cause=lambda: verdict_sight(self._oracle.sight, [_move_literal(
                source, destination)], truth, "shoulder", (height, width)))
        return {"task_complete": verdict, "confidence": 0.9,
                "verification_result": f"the {fields.get('source')} is "
                f"{'' if verdict else 'not '}at the {fields.get('destination')}"}

    def single_agent(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The whole plan with pick and place pixels in the first shoulder image."""
        image_size = fields.get("image_size", (0, 0))
        types = self._types()
        plan = []
        moves = [m for m in reference_moves(self._env) if m["kind"] in ("place", "table")]
        for move in self._corrupt(moves, "single_agent"):  # it can only pick and place
            pixels = {}
            for end in ("source", "destination"):
                seen = self._detector.detect({"target": move[end], "camera": "shoulder",
                                         "image_size": image_size}, "none")
                pixels[end] = (seen["point"], seen["box"])
            plan.append({**move, "pick_point": pixels["source"][0],
                         "pick_box": pixels["source"][1],
                         "place_point": pixels["destination"][0],
                         "place_box": pixels["destination"][1],
                         "place_mode": place_mode(types, move["destination"])})
        return {"plan": plan, "coordinates": "pixels",
                "reasoning": f"{len(plan)} moves from the first image"}
