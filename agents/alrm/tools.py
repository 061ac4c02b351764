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
from importlib import resources
from typing import Any

import numpy as np

from agentic_env.agents import skills
from agentic_env.agents.agenticlab.modules import detect
from agentic_env.agents.models.base import ModelImage, ModelQuery
from agentic_env.agents.skills import grounding
from agentic_env.agents.skills.result import SkillCode, SkillResult, fail, ok
from agentic_env.agents.tools.registry import ToolFunction, register_tool_set
from agentic_env.agents.tools.robot import ToolContext
from agentic_env.contract import actions
from agentic_env.errors import AgenticEnvError, InvalidActionError

#: Template of the object-listing query (the sim-oracle recognises it by this name).
OBJECTS_TEMPLATE = "alrm_objects"
#: The table as a place.
TABLE = "table"
#: After a failed place the object counts as still held while the pads are within this of
#: their distance right after the pick, m (a release opens them 3 cm wider; a slip closes them).
HOLD_TOLERANCE = 0.005
OBJECTS_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["objects"],
    "properties": {"objects": {"type": "array", "items": {
        "type": "object", "required": ["name", "kind", "place"],
        "properties": {"name": {"type": "string"}, "kind": {"type": "string"},
                       "place": {"type": "boolean"}, "description": {"type": "string"}}}}},
}


class ToolSkillIO:
    """A :class:`~agentic_env.agents.skills.SkillIO` over a tool context: primitives count
    against the episode's action budget, and past it are refused without moving."""

    def __init__(self, context: ToolContext) -> None:
        self.context = context
        self.workspace = context.io.workspace
        self.obs = context.io.observe()
        self.events: list[dict[str, Any]] = []

    def act(self, action: dict[str, Any], why: str) -> dict[str, Any]:
        """Run one primitive (refused once the budget is spent); its status report."""
        refusal = self.context.action_refusal()
        if refusal is not None:
            return {"ok": False, "reason": "budget", "message": refusal.message}
        self.context.log.actions += 1
        self.obs, status = self.context.io.act(action)
        self.event("primitive", why=why, ok=status.get("ok"), reason=status.get("reason", ""))
        return status

    def event(self, kind: str, **details: Any) -> None:
        """Record one event."""
        self.events.append({"kind": kind, **details})


class AlrmWorld:
    """What ALRM's functions share in one episode: the robot, the detector, the object list
    and the object in the gripper.

    Args:
        context: the episode's tool context (its ``models`` answer the detector).
        seed: seed of the grasp sampling.
    """

    def __init__(self, context: ToolContext, seed: int = 0) -> None:
        self.context = context
        self.io = ToolSkillIO(context)
        self.rng = np.random.default_rng(seed)
        self.held: grounding.HeldObject | None = None
        self.held_width = 0.0  # distance between the pads right after the pick, m
        self._listing: list[dict[str, Any]] | None = None

    # -- perception through the model layer -------------------------------------------------

    def listing(self) -> list[dict[str, Any]]:
        """The detector's list of what is in the scene (asked once; ``[]`` without models)."""
        if self._listing is None:
            models = self.context.models
            if models is None:
                return []
            prompt = resources.files("agentic_env.agents.alrm").joinpath(
                f"prompts/{OBJECTS_TEMPLATE}.md").read_text()
            image = ModelImage("shoulder_rgb", self.io.obs["shoulder_rgb"])
            reply = models.ask(ModelQuery("detector", OBJECTS_TEMPLATE, prompt, (image,),
                                          OBJECTS_SCHEMA, {"list": True}))
            self._listing = [dict(entry) for entry in reply.parsed["objects"]]
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

    def detector(self, obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> Any:
        """The skills' detector: the ``detector`` module pointing at ``name``."""
        entry = self.resolve(name) or {}
        models = self.context.models
        if models is None:
            return None
        return detect(models, obs, camera, name, str(entry.get("description", name)), part)

    def locate(self, name: str, part: str = "object") -> SkillResult:
        """``locate`` with active perception, over the remaining action budget."""
        left = max(self.context.max_actions - self.context.log.actions - 2, 0)
        return skills.locate(self.io, self.detector, name, part, max_moves=left)

    def still_holding(self) -> bool:
        """Whether the gripper still holds what it picked, read from the pads' distance (after
        a failed place, which may have released the object or let it slip)."""
        width = float(self.io.obs["gripper_width"][0])
        return self.held is not None and abs(width - self.held_width) <= HOLD_TOLERANCE

    def drawer_yaw(self, inside: str | None = None) -> float | None:
        """Yaw (rad) pointing the wrist out of the scene's drawer, if it has one (and, with
        ``inside``, only when that object lies within the drawer's interior as seen)."""
        drawer = next((e["name"] for e in self.listing() if e["kind"] == "drawer"), None)
        if drawer is None:
            return None
        if inside is not None:
            thing, interior = self.locate(inside), self.locate(drawer, "interior")
            if not (thing.ok and interior.ok):
                return None
            seen, room = thing.data["target"], interior.data["target"]
            box = room.detection.box
            u, v = seen.detection.point
            if seen.camera != room.camera or box is None or not (
                    box[0] <= u <= box[2] and box[1] <= v <= box[3]):
                return None
        handle = self.locate(drawer, "handle")
        if not handle.ok:
            return None
        fitted = skills.handle_pose(self.io, handle.data["target"])
        return skills.outward_yaw(fitted.data["pose"]) if fitted.ok else None


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
        entry = world.resolve(name)
        if entry is None:
            return _not_found(name)
        found = world.locate(entry["name"])
        if not found.ok:
            return _not_found(name)
        centre, top = grounding.top_of(found.data["target"].cloud)
        xyz = [round(float(v), 3) for v in (*centre, top)]
        return ok(f"The {_words(entry)} is at {xyz}", position=xyz)

    def compute_grasp(name: str) -> SkillResult:
        """A top-down grasp of an object: TCP position (m, base frame), yaw (rad), width (m).

        Args:
            name: the object's name, as get_objects gives it.
        """
        entry = world.resolve(name)
        if entry is None:
            return _not_found(name)
        found = world.locate(entry["name"])
        if not found.ok:
            return _not_found(name)
        yaw = grounding.tcp_yaw(world.io.obs["tcp_pose"])
        candidates, _, _ = skills.plan_grasps(world.io, found.data["target"], yaw, world.rng)
        if not candidates:
            return fail(SkillCode.GRASP_FAILED, f"No grasp found for the {_words(entry)}")
        best = candidates[0]
        xyz = [round(float(v), 3) for v in best.pose[:3, 3]]
        return ok(f"Grasp of the {_words(entry)} at {xyz}", position=xyz,
                  yaw=round(grounding.tcp_yaw(best.pose), 3), width=round(best.width, 3))

    def pick(name: str) -> SkillResult:
        """Pick up an object: locate it, plan a grasp, grasp it and lift it.

        Args:
            name: the object's name, as get_objects gives it.
        """
        entry = world.resolve(name)
        if entry is None or entry["place"]:
            return _not_found(name)
        if world.held is not None:
            return fail(SkillCode.BLOCKED, f"The gripper already holds the {world.held.name}; "
                        "place it first")
        yaw = world.drawer_yaw(inside=entry["name"])  # out of a drawer: wrist points away
        result = skills.pick(world.io, world.detector, entry["name"], world.rng, yaw=yaw)
        if not result.ok:
            return fail(result.code, f"The {_words(entry)} could not be picked: "
                        f"{result.message}")
        world.held = result.data["held"]
        world.held_width = float(world.io.obs["gripper_width"][0])
        return ok(f"The {_words(entry)} was successfully picked")

    def place(target: str) -> SkillResult:
        """Place the object in the gripper in, on or at a place or another object.

        Args:
            target: a reference name (bin, bowl, plate, drawer, table) or an object's name.
        """
        held = world.held
        if held is None:
            return fail(SkillCode.BLOCKED, "The gripper holds nothing; pick an object first")
        entry = world.resolve(target)
        if entry is None and target.lower() != TABLE:
            return _not_found(target)
        if entry is None or entry["name"] == TABLE:
            result = skills.place_at(world.io, held)
        else:
            drawer = entry["kind"] == "drawer"
            yaw = world.drawer_yaw() if drawer else None
            found = world.locate(entry["name"], "interior" if drawer else "object")
            if not found.ok:
                return _not_found(target)
            if entry["place"] and entry["kind"] != "plate":
                result = skills.place_in(world.io, held, found.data["target"], yaw=yaw)
            else:
                result = skills.place_on(world.io, held, found.data["target"],
                                         align_faces=True)
        where = "on the table" if entry is None else f"at the {_words(entry)}"
        if not result.ok:
            kept = world.still_holding()
            if not kept:
                world.held = None
            return fail(result.code, f"The {held.name} could not be placed {where}: "
                        f"{result.message}; " + ("it is still in the gripper" if kept
                                                 else "the gripper no longer holds it"))
        world.held = None
        return ok(f"The {held.name} was successfully placed {where}")

    def move_to(x: float, y: float, z: float) -> SkillResult:
        """Move the gripper, pointing straight down, to a position.

        Args:
            x: along the base x axis (forward), metres, in [0.15, 0.95].
            y: along the base y axis (left), metres, in [-0.65, 0.65].
            z: height above the table, metres, in [0.02, 0.7].
        """
        return _primitive(world, actions.move_to(actions.top_down_pose(np.array([x, y, z]))),
                          f"Moved to ({x:.3f}, {y:.3f}, {z:.3f})")

    def move_to_home_pos() -> SkillResult:
        """Move the arm to its home position (clear of the camera's view of the table)."""
        return _primitive(world, actions.home(), "Moved to the home position")

    def drawer(opening: bool) -> ToolFunction:
        def move(name: str) -> SkillResult:
            entry = world.resolve(name)
            if entry is None or entry["kind"] != "drawer":
                return fail(SkillCode.NOT_FOUND, f"Drawer {name} not found")
            handle = world.locate(entry["name"], "handle")
            if not handle.ok:
                return fail(SkillCode.NOT_FOUND, f"The handle of the {_words(entry)} was "
                            "not found")
            skill = skills.open_drawer if opening else skills.close_drawer
            result = skill(world.io, handle.data["target"])
            verb = "opened" if opening else "closed"
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


def _primitive(world: AlrmWorld, action: dict[str, Any], done: str) -> SkillResult:
    try:
        status = world.io.act(action, done)
    except InvalidActionError as error:
        return fail(SkillCode.BAD_ARGS, f"Not run: {error}")
    except AgenticEnvError as error:  # a safety stop or a declined step on the real robot
        return fail(SkillCode.ESTOP, f"Stopped: {error}")
    return ok(done) if status.get("ok") else SkillResult.from_status(status, "the motion")


register_tool_set("alrm", alrm_tools)
