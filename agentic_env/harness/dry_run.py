"""ALRM's dry-run protocol: a symbolic robot that accepts any well-formed call, no physics.

ALRM scored its agents against a mock robot API that answered every well-formed call with
success. :class:`DryRunWorld` reproduces that mock over a task's PDDL state, so the same
episode also has a symbolic world state to check the trace judge against: a call that names
known objects is always answered with success, exactly like the mock; the PDDL action it
stands for is applied to the facts only when its preconditions hold (a real robot could not
have done it otherwise), and recorded as *ignored* when they do not.

:meth:`DryRunWorld.tools` gives ALRM's eight functions over this world, returning short
texts such as ``"The lemon was successfully picked"`` or ``"Object orange not found"``
(plus ``open_drawer`` and ``close_drawer`` where the domain has drawers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentic_env.pddl.planning import PDDLError, PlanStep, load_domain, problem_text, simulate
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import SymbolicTask
from agentic_env.tasks.subtasks import object_words

#: Facts that locate an object -> the PDDL pick action that lifts it from there.
_PICK_FROM: Mapping[str, str] = {
    "on-top-of": "pick", "in": "pick-from", "in-drawer": "pick-from-drawer",
    "in-slot": "pick-from-slot", "in-pose": "pick", "on-table": "pick",
}
#: Type of the place target -> the PDDL place action.
_PLACE_INTO: Mapping[str, str] = {
    "container": "place-in", "drawer": "place-in-drawer", "slot": "place-in-slot",
    "pose": "place-in-pose",
}
#: Types of named places (ALRM's reference names) rather than objects to manipulate.
PLACE_TYPES = frozenset({"container", "drawer", "slot", "pose", "plate", "bowl", "mat"})
#: Name of the table as a place.
TABLE = "table"


@dataclass(frozen=True)
class DryRunStep:
    """One accepted call and what it did to the symbolic state.

    Attributes:
        call: the call as written, e.g. ``"pick('lemon-1')"``.
        step: the PDDL action it stands for.
        applied: whether its preconditions held and the facts changed.
        reason: why it was not applied (the failed preconditions), else ``None``.
    """

    call: str
    step: PlanStep
    applied: bool
    reason: str | None = None


class DryRunWorld:
    """The PDDL state of one episode under ALRM's accept-everything mock.

    Args:
        domain: the PDDL domain's name (``assets/pddl/<domain>.pddl``).
        objects: PDDL object name -> type.
        facts: the true facts at the start.
        goal: the goal facts.
        positions: object -> position, answered by ``get_pose`` (zeros when absent).
    """

    def __init__(self, domain: str, objects: Mapping[str, str], facts: Iterable[str],
                 goal: Iterable[str], positions: Mapping[str, Any] | None = None) -> None:
        self.domain = domain
        self.objects = dict(objects)
        self.facts = {" ".join(fact.strip("()").split()) for fact in facts}
        self.goal = list(goal)
        self.positions = {name: [float(v) for v in xyz]
                          for name, xyz in (positions or {}).items()}
        self.history: list[DryRunStep] = []
        self._domain_text = load_domain(domain)

    @classmethod
    def from_task(cls, task: SymbolicTask, scene: SceneState) -> DryRunWorld:
        """The world of ``task`` in the state ``scene`` (true facts, body positions)."""
        objects = task.pddl_objects()
        positions = {}
        for name in objects:
            try:
                positions[name] = scene.body_position(name)
            except KeyError:
                continue
        return cls(task.domain, objects, task.facts(scene), task.goal_facts(), positions)

    # -- state ---------------------------------------------------------------------------

    def _problem(self) -> str:
        return problem_text(self.domain, "dry-run", self.objects, sorted(self.facts), self.goal)

    def unmet_goals(self) -> tuple[str, ...]:
        """Goal facts that do not hold now (empty: the task is solved)."""
        return simulate(self._domain_text, self._problem(), []).unmet_goals

    def applied_steps(self) -> list[PlanStep]:
        """The PDDL steps that changed the world, in order (what really happened)."""
        return [entry.step for entry in self.history if entry.applied]

    def held(self) -> str | None:
        """The object in the gripper, if any."""
        return next((fact.split()[1] for fact in self.facts if fact.startswith("holding ")),
                    None)

    def apply(self, call: str, step: PlanStep) -> DryRunStep:
        """Record ``step`` and apply it when its preconditions hold."""
        try:
            result = simulate(self._domain_text, self._problem(), [step])
        except PDDLError as exc:
            record = DryRunStep(call, step, False, str(exc))
        else:
            self.facts = set(result.facts)
            record = DryRunStep(call, step, True)
        self.history.append(record)
        return record

    # -- actions -------------------------------------------------------------------------

    def pick_step(self, obj: str) -> PlanStep:
        """The PDDL pick of ``obj`` from where the facts say it is."""
        for fact in sorted(self.facts):
            words = fact.split()
            if len(words) >= 2 and words[1] == obj and words[0] in _PICK_FROM:
                return PlanStep(_PICK_FROM[words[0]], (obj, *words[2:]))
        return PlanStep("pick", (obj,))

    def place_step(self, obj: str, target: str) -> PlanStep:
        """The PDDL place of ``obj`` at ``target`` (a place or another object)."""
        kind = self.objects.get(target)
        if target == TABLE and kind is None:
            return PlanStep("place-on-table", (obj,))
        if kind in _PLACE_INTO:
            return PlanStep(_PLACE_INTO[kind], (obj, target))
        return PlanStep("place-on-object", (obj, target))

    def tools(self) -> dict[str, Callable[..., Any]]:
        """ALRM's eight functions over this world (see the module docstring)."""
        return _alrm_tools(self)


def _alrm_tools(world: DryRunWorld) -> dict[str, Callable[..., Any]]:
    words = object_words(sorted(world.objects))

    def known(name: str) -> bool:
        return name in world.objects or name == TABLE

    def get_objects() -> list[str]:
        """Names of the objects the robot can manipulate."""
        return [name for name, kind in world.objects.items()
                if kind not in PLACE_TYPES and name != TABLE]

    def get_reference_names() -> list[str]:
        """Names of the places objects can be put: containers, drawers, slots, the table."""
        return [name for name, kind in world.objects.items() if kind in PLACE_TYPES] + [TABLE]

    def get_pose(name: str) -> list[float] | str:
        """Position [x, y, z] of an object or place, in metres."""
        if not known(name):
            return f"Object {name} not found"
        return world.positions.get(name, [0.0, 0.0, 0.0])

    def compute_grasp(name: str) -> dict[str, Any] | str:
        """A grasp of an object: the gripper position and the object it holds."""
        if name not in world.objects:
            return f"Object {name} not found"
        return {"object": name, "position": world.positions.get(name, [0.0, 0.0, 0.0])}

    def pick(name: str, pose: str = "") -> str:
        """Pick up an object by name (``pose``: the resting pose it will be placed in)."""
        if name not in world.objects or (pose and world.objects.get(pose) != "pose"):
            return f"Object {name} not found"
        world.apply(f"pick({name!r})", world.pick_step(name))
        return f"The {words[name]} was successfully picked"

    def place(target: str) -> str:
        """Place the held object in, on or at a place or another object."""
        if not known(target):
            return f"Object {target} not found"
        held = world.held() or "object"
        world.apply(f"place({target!r})", world.place_step(held, target))
        where = words.get(target, target)
        return f"The {words.get(held, held)} was successfully placed at the {where}"

    def move_to(x: float, y: float, z: float) -> str:
        """Move the gripper to a position in metres."""
        return f"Moved to ({x:.3f}, {y:.3f}, {z:.3f})"

    def move_to_home_pos() -> str:
        """Move the arm to its home position."""
        return "Moved to the home position"

    def drawer_action(verb: str) -> Callable[[str], str]:
        def act(name: str) -> str:
            if world.objects.get(name) != "drawer":
                return f"Drawer {name} not found"
            world.apply(f"{verb}_drawer({name!r})", PlanStep(f"{verb}-drawer", (name,)))
            return f"The {words[name]} was successfully {verb.rstrip('e')}ed"

        act.__name__ = f"{verb}_drawer"
        act.__doc__ = f"{verb.capitalize()} a drawer by name."
        return act

    tools: dict[str, Callable[..., Any]] = {
        "get_objects": get_objects, "get_reference_names": get_reference_names,
        "get_pose": get_pose, "compute_grasp": compute_grasp, "pick": pick, "place": place,
        "move_to": move_to, "move_to_home_pos": move_to_home_pos}
    if "drawer" in world.objects.values():
        tools.update(open_drawer=drawer_action("open"), close_drawer=drawer_action("close"))
    return tools
