"""ALRM's eight functions as the ``alrm`` tool set: thin wrappers on the shared skills.

``get_objects``, ``get_reference_names``, ``get_pose``, ``compute_grasp``, ``pick``,
``place``, ``move_to`` and ``move_to_home_pos`` (ALRM, section III-B), plus ``open_drawer``
and ``close_drawer`` for the kitchen's drawer (ALRM's scenes had none). The signatures match
the dry-run mock's (:mod:`agentic_env.harness.dry_run`): objects and places are named by the
names ``get_objects`` / ``get_reference_names`` give (e.g. ``lemon-1``, ``blue-bin``), and
``place`` puts down whatever the gripper holds. Results are short texts such as
``"OK: The lemon was successfully picked"`` or ``"NOT_FOUND: Object orange not found"``.

Perception goes through the model layer only: the scene's object list (names, kinds and the
properties a detector reports: category, colour, size, weight) is one ``detector`` query,
and every located object is the detector's point lifted onto the camera's depth. Positions
are in the robot base frame, metres.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentic_env.agents import skills
from agentic_env.agents.alrm.planner import PACKAGE
from agentic_env.agents.runtime import Manipulator, Place, ask_json, camera_image, detect
from agentic_env.agents.skills import Detection, Target, holding, spots
from agentic_env.agents.skills.result import SkillCode, SkillResult, fail, ok
from agentic_env.agents.tools.registry import ToolFunction, register_tool_set
from agentic_env.agents.tools.robot import ToolContext
from agentic_env.contract import actions

#: Template of the object-listing query (the sim-oracle recognises it by this name).
OBJECTS_TEMPLATE = "alrm_objects"
#: The table as a place.
TABLE = "table"
#: Place mode of a listed place by its kind (what the detector said it is); any other
#: place is a container, an object on top.
PLACE_KINDS = {"drawer": Place.DRAWER, "slot": Place.SLOT, "plate": Place.ON}
OBJECTS_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["objects"],
    "properties": {"objects": {"type": "array", "items": {
        "type": "object", "required": ["name", "kind", "place"],
        "properties": {"name": {"type": "string"}, "kind": {"type": "string"},
                       "place": {"type": "boolean"}, "description": {"type": "string"}}}}},
}


class AlrmWorld:
    """What ALRM's functions share in one episode: the detector's object list and the
    named-object manipulator (what the gripper holds).

    Args:
        context: the episode's tool context (its ``models`` answer the detector, its
            ``episode`` is the robot access within the limits).
        seed: seed of the grasp sampling.
    """

    def __init__(self, context: ToolContext, seed: int = 0) -> None:
        self.context = context
        self.io = context.episode
        self.hands = Manipulator(context.episode, self.detector, np.random.default_rng(seed))
        self._listing: list[dict[str, Any]] | None = None

    # -- perception through the model layer -------------------------------------------------

    def listing(self) -> list[dict[str, Any]]:
        """The detector's list of what is in the scene (asked once; ``[]`` without models)."""
        if self._listing is None:
            models = self.context.models
            if models is None:
                return []
            answer = ask_json(models, PACKAGE, "detector", (camera_image(self.io.obs, "shoulder"),),
                              OBJECTS_SCHEMA, {"list": True}, template=OBJECTS_TEMPLATE)
            self._listing = [dict(entry) for entry in answer["objects"]]
        return self._listing

    def resolve(self, name: str) -> dict[str, Any] | None:
        """The listed entry called ``name`` (or described so, e.g. ``lemon`` for ``lemon-1``)."""
        wanted = " ".join(str(name).lower().replace("_", " ").replace("-", " ").split())
        for entry in self.listing():
            if entry["name"].lower() == str(name).lower():
                return entry
        for entry in self.listing():
            words = {entry["name"].lower().replace("-", " "),
                     str(entry.get("description", "")).lower()}
            if wanted in words or wanted.rstrip(" 1") in words:
                return entry
        return None

    def find(self, name: str) -> tuple[dict[str, Any], Target | None]:
        """The listed entry ``name`` resolves to (``{}`` for none) and where it is seen
        (``None`` when it is not listed or not found)."""
        entry = self.resolve(name)
        if entry is None:
            return {}, None
        found = self.hands.locate(entry["name"])
        return entry, found.data["target"] if found.ok else None

    def detector(self, obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> Detection | None:
        """The skills' detector: the ``detector`` module pointing at ``name``."""
        entry = self.resolve(name) or {}
        models = self.context.models
        if models is None:
            return None
        return detect(models, obs, camera, name, str(entry.get("description", name)), part)

    def drawer_yaw(self, inside: str) -> float | None:
        """Yaw (rad) pointing the wrist out of the scene's drawer when ``inside`` lies within
        the drawer's interior as seen, else ``None``."""
        drawer = next((e["name"] for e in self.listing() if e["kind"] == "drawer"), None)
        if drawer is None:
            return None
        thing, interior = self.hands.locate(inside), self.hands.locate(drawer, "interior")
        if not (thing.ok and interior.ok):
            return None
        seen, room = thing.data["target"], interior.data["target"]
        box = room.detection.box
        u, v = seen.detection.point
        if seen.camera != room.camera or box is None or not (
                box[0] <= u <= box[2] and box[1] <= v <= box[3]):
            return None
        outward = self.hands.outward_yaw(drawer)
        return outward.data["yaw"] if outward.ok else None


def _words(entry: Mapping[str, Any]) -> str:
    return str(entry.get("description") or entry["name"])


def _not_found(name: str) -> SkillResult:
    return fail(SkillCode.NOT_FOUND, f"Object {name} not found")


def alrm_tools(context: ToolContext, world: AlrmWorld | None = None) -> Sequence[ToolFunction]:
    """The ``alrm`` tool set's functions over ``context`` (``world``: shared state, built
    from ``context`` when not given)."""
    world = world or AlrmWorld(context)

    def get_objects() -> SkillResult:
        """Names of the objects the robot can manipulate, with what is seen of each: kind,
        category, colour, size (cm) and weight (g) where known."""
        listed = [e for e in world.listing() if not e["place"] and e["name"] != TABLE]
        if not listed:
            return fail(SkillCode.NOT_FOUND, "No objects found")
        details = {e["name"]: {k: v for k, v in e.items() if k not in ("name", "place")}
                   for e in listed}
        return ok("Objects: " + ", ".join(details), objects=details)

    def get_reference_names() -> SkillResult:
        """Names of the places objects can be put: bins, bowls, plates, drawers, the table."""
        places = [e["name"] for e in world.listing() if e["place"] or e["kind"] == "plate"]
        return ok("Reference names: " + ", ".join([*places, TABLE]))

    def get_pose(name: str) -> SkillResult:
        """Position of an object or place: the centre of its top, base frame, metres.

        Args:
            name: the object's or place's name, as get_objects or get_reference_names give it.
        """
        entry, found = world.find(name)
        if found is None:
            return _not_found(name)
        centre, top = spots.top_of(found.cloud)
        xyz = [round(float(v), 3) for v in (*centre, top)]
        return ok(f"The {_words(entry)} is at {xyz}", position=xyz)

    def compute_grasp(name: str) -> SkillResult:
        """A top-down grasp of an object: TCP position (m, base frame), yaw (rad), width (m).

        Args:
            name: the object's name, as get_objects gives it.
        """
        entry, found = world.find(name)
        if found is None:
            return _not_found(name)
        yaw = holding.tcp_yaw(world.io.obs["tcp_pose"])
        candidates, _, _ = skills.plan_grasps(world.io, found, yaw, world.hands.rng)
        if not candidates:
            return fail(SkillCode.GRASP_FAILED, f"No grasp found for the {_words(entry)}")
        best = candidates[0]
        xyz = [round(float(v), 3) for v in best.pose[:3, 3]]
        return ok(f"Grasp of the {_words(entry)} at {xyz}", position=xyz,
                  yaw=round(holding.tcp_yaw(actions.pose_to_vector(best.pose)), 3),
                  width=round(float(best.width), 3))

    def pick(name: str, pose: str = "") -> SkillResult:
        """Pick up an object: locate it, plan a grasp, grasp it and lift it.

        Args:
            name: the object's name, as get_objects gives it.
            pose: optional: the resting pose (a reference name such as upright or
                handle-left) the object will then be placed in; the grasp is one from which
                place can turn it there. Empty for an ordinary pick.
        """
        entry = world.resolve(name)
        if entry is None or entry["place"]:
            return _not_found(name)
        held = world.hands.held
        if held is not None:
            return fail(SkillCode.BLOCKED, f"The gripper already holds the {held.name}; "
                        "place it first")
        if pose:
            goal = world.resolve(pose)
            if goal is None or goal["kind"] != "pose":
                return fail(SkillCode.BAD_ARGS, f"{pose!r} is no pose; the poses are: "
                            + ", ".join(e["name"] for e in world.listing()
                                        if e["kind"] == "pose"))
            result = world.hands.pick_to_turn(entry["name"], goal["name"])
        else:
            yaw = world.drawer_yaw(inside=entry["name"])  # out of a drawer: wrist points away
            result = world.hands.pick(entry["name"], yaw=yaw)
        if not result.ok:
            return fail(result.code, f"The {_words(entry)} could not be picked: "
                        f"{result.message}")
        return ok(f"The {_words(entry)} was successfully picked")

    def place(target: str) -> SkillResult:
        """Place the object in the gripper in, on or at a place or another object, or set it
        down turned into a pose.

        Args:
            target: a reference name (bin, bowl, plate, board slot, drawer, pose such as
                upright, table) or an object's name.
        """
        held = world.hands.held
        if held is None:
            return fail(SkillCode.BLOCKED, "The gripper holds nothing; pick an object first")
        entry = world.resolve(target)
        if entry is None and target.lower() != TABLE:
            return _not_found(target)
        if entry is None or entry["name"] == TABLE:
            result = world.hands.place(held.name, Place.TABLE)
        elif entry["kind"] == "pose":
            result = world.hands.place_turned(held.name, entry["name"])
        else:
            mode = PLACE_KINDS.get(entry["kind"], Place.IN if entry["place"] else Place.ON)
            result = world.hands.place(held.name, mode, entry["name"])
        where = "on the table" if entry is None else f"at the {_words(entry)}"
        if not result.ok:
            if result.code is SkillCode.NOT_FOUND:
                return _not_found(target)
            kept = world.hands.holding()
            return fail(result.code, f"The {held.name} could not be placed {where}: "
                        f"{result.message}; " + ("it is still in the gripper" if kept
                                                 else "the gripper no longer holds it"))
        return ok(f"The {held.name} was successfully placed {where}")

    def move_to(x: float, y: float, z: float) -> SkillResult:
        """Move the gripper, pointing straight down, to a position.

        Args:
            x: along the base x axis (forward), metres, in [0.15, 0.95].
            y: along the base y axis (left), metres, in [-0.65, 0.65].
            z: height above the table, metres, in [0.02, 0.7].
        """
        return context.send(actions.move_to(actions.top_down_pose(np.array([x, y, z]))),
                            "the motion", f"Moved to ({x:.3f}, {y:.3f}, {z:.3f})")

    def move_to_home_pos() -> SkillResult:
        """Move the arm to its home position (clear of the camera's view of the table)."""
        return context.send(actions.home(), "the motion", "Moved to the home position")

    def drawer(opening: bool) -> ToolFunction:
        def move(name: str) -> SkillResult:
            entry = world.resolve(name)
            if entry is None or entry["kind"] != "drawer":
                return fail(SkillCode.NOT_FOUND, f"Drawer {name} not found")
            result = world.hands.move_drawer(entry["name"], opening)
            verb = "opened" if opening else "closed"
            if result.code is SkillCode.NOT_FOUND:
                return fail(SkillCode.NOT_FOUND, f"The handle of the {_words(entry)} was "
                            "not found")
            if not result.ok:
                return fail(result.code, f"The {_words(entry)} could not be {verb}: "
                            f"{result.message}")
            return ok(f"The {_words(entry)} was successfully {verb}")

        move.__name__ = "open_drawer" if opening else "close_drawer"
        move.__doc__ = (f"{'Open' if opening else 'Close'} a drawer by pulling or pushing "
                        "its handle.\n\nArgs:\n    name: the drawer's reference name.\n")
        return move

    return (get_objects, get_reference_names, get_pose, compute_grasp, pick, place, move_to,
            move_to_home_pos, drawer(True), drawer(False))


register_tool_set("alrm", alrm_tools)
