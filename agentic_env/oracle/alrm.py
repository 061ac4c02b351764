"""The sim-oracle's answers for ALRM: the scene's object list, the task planner's next
subtask, and the task executor's tool calls (TaP) or program (CaP), from ground truth.

Privileged (it reads the simulator and the task's reference plan); only the sim-oracle uses
it. Each answer has the shape a real model's must have, so the agent's own parsing, tool
validation and sandbox run for real. Errors are the plan error kinds
(:mod:`agentic_env.oracle.plan_errors`), drawn per answer at the role's seeded rate:

* ``task_planner`` (one subtask per turn): ``premature_done`` (done while subtasks remain),
  ``skipped_step`` (the next subtask believed done: never issued, the task declared done
  once only such remain), ``reordered_steps`` (the subtask after the next one first),
  ``wrong_object`` (the next subtask about a look-alike);
* ``task_executor`` (TaP, one call per turn): ``skipped_step`` (the next call believed made
  for the rest of the subtask), ``reordered_steps`` (the call after the next one first),
  ``wrong_object`` (a look-alike's name), ``premature_done`` ("Subtask done." before the
  calls are made), ``nested_call`` (the subtask's later calls nested as arguments of the
  next one, or a misnamed argument when one call is left, which the tool registry answers
  with ``BAD_ARGS``); the next turn owes the right call again, so a model that reads the
  results corrects itself;
* ``task_executor`` (CaP, one program per subtask): a call left out, two calls swapped, a
  look-alike's name, the program's tail cut, or ``nested_call``: the first call nested in
  the second's argument (``place(target=pick(name='apple'))``), or a function that does not
  exist (``NameError``) when the subtask has one call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentic_env.agents.models.base import Completion, ModelQuery, ToolCall, Usage
from agentic_env.oracle.listing import mistyped, shown
from agentic_env.oracle.plan_errors import look_alike, plan_error, reshaped
from agentic_env.pddl.planning import PlanNotFoundError, PlanStep
from agentic_env.sim.state import body_box
from agentic_env.tasks.stacking import TABLE
from agentic_env.tasks.subtasks import Subtask, ground_truth_subtasks, object_words

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.oracle.context import OracleContext

#: PDDL types that are places (ALRM's reference names) rather than objects to move.
PLACE_TYPES = frozenset({"container", "drawer", "slot", "pose", "plate", "bowl", "mat", "bin",
                         "basket", "tray", "box"})
#: Template name of the object-listing detector query.
OBJECTS_TEMPLATE = "alrm_objects"


def _subtask_calls(subtask: Subtask) -> list[tuple[str, dict[str, Any]]]:
    """The executor's correct tool calls for ``subtask`` (ALRM function names); an object
    the subtask sets down in a pose is picked for that pose."""
    if subtask.kind in ("open", "close"):
        return [(f"{subtask.kind}_drawer", {"name": subtask.obj})]
    calls: list[tuple[str, dict[str, Any]]] = []
    if subtask.kind in ("pick_and_place", "pick"):
        turned = any(step.name.lower() == "place-in-pose" for step in subtask.steps)
        pose = {"pose": subtask.destination} if turned and subtask.destination else {}
        calls.append(("pick", {"name": subtask.obj, **pose}))
    if subtask.kind in ("pick_and_place", "place"):
        calls.append(("place", {"target": subtask.destination or "table"}))
    return calls


def _expression(name: str, arguments: Mapping[str, Any]) -> str:
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"


def _program(calls: Sequence[tuple[str, Mapping[str, Any]]], nested: bool = False) -> str:
    """A CaP program making ``calls`` and printing each result (``nested``: the first call
    nested in the second's first argument, or, with one call, a function that does not
    exist)."""
    lines = ["# one subtask, one run: each call's result goes to the log"]
    expressions = [_expression(name, arguments) for name, arguments in calls]
    if nested and len(calls) > 1 and calls[1][1]:
        (name, arguments), key = calls[1], next(iter(calls[1][1]))
        rest = ", ".join(f"{k}={v!r}" for k, v in arguments.items() if k != key)
        expressions[:2] = [f"{name}({key}={expressions[0]}{', ' + rest if rest else ''})"]
    elif nested and expressions:
        expressions[0] = "grab" + expressions[0][expressions[0].index("("):]
    lines.extend(f"print({expression})" for expression in expressions)
    return "\n".join(lines) + "\n"


def answer(oracle: OracleContext, query: ModelQuery) -> Completion:
    """The sim-oracle's answer to one of ALRM's queries (its task planner, task executor or
    object list; the backend stamps the usage)."""
    return oracle.part(AlrmOracle).complete(query)


class AlrmOracle:
    """ALRM's modules answered from one episode's simulator.

    Args:
        oracle: the episode's simulator (a symbolic task) and error draws.
    """

    def __init__(self, oracle: OracleContext) -> None:
        self._oracle = oracle
        self._env: SimEnv = oracle.env
        self._issued: dict[str, Subtask] = {}
        self._believed: set[tuple[str, str, str | None]] = set()  # subtasks skipped as done
        self._skipped: dict[str, set[int]] = {}  # subtask -> its calls skipped as made

    def complete(self, query: ModelQuery) -> Completion:
        """The answer to one of ALRM's queries (the backend stamps its usage)."""
        if query.template == OBJECTS_TEMPLATE:
            return Completion(json.dumps(self._objects(query)), Usage())
        if query.module == "task_planner":
            return Completion(json.dumps(self._planner()), Usage())
        subtask = self._subtask(str(query.fields.get("subtask", "")))
        calls = _subtask_calls(subtask) if subtask is not None else []
        if not query.tools:
            return Completion(json.dumps({"thought": "the subtask as function calls",
                                          "code": self._code(calls)}), Usage())
        return self._tool_turn(query, calls)

    def _code(self, calls: list[tuple[str, dict[str, Any]]]) -> str:
        """The CaP program of ``calls``, with the executor's plan error when one is drawn."""
        kind = plan_error(self._oracle, "task_executor") if calls else None
        if kind == "wrong_object":
            calls = [self._mistaken_call(calls[0]), *calls[1:]]
        elif kind is not None and (made := reshaped(calls, kind, self._oracle)) is not None:
            calls = made
        return _program(calls, nested=kind == "nested_call")

    def _mistaken_call(self, call: tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        """``call`` with its object (``name``, else ``target``) a look-alike's, if any."""
        name, arguments = call
        for key in ("name", "target"):
            alike = look_alike(self._oracle, str(arguments.get(key))) if key in arguments \
                else None
            if alike is not None:
                return name, {**arguments, key: alike}
        return call

    # -- perception -------------------------------------------------------------------------

    def _objects(self, query: ModelQuery) -> dict[str, Any]:
        """What a detector reports of the scene: names, kinds and visible properties.

        Listed and mistaken as the scene listing is (:func:`~agentic_env.oracle.listing.shown`,
        :func:`~agentic_env.oracle.listing.mistyped`): an oracle that sees only the image
        lists what the image sent shows, and one thing (for it, the least visible) gets
        another of the scene's kinds at the ``detector``'s error rate, so a mistyped place
        is set down on or in the wrong way. The table is always listed."""
        env, task = self._env, self._env.task
        objects = task.pddl_objects()  # type: ignore[attr-defined]
        listed_names = shown(self._oracle, query, [n for n in objects if n != TABLE])
        objects = {name: kind for name, kind in objects.items()
                   if name in listed_names.names or name == TABLE}
        wrong = mistyped(self._oracle, listed_names)
        if wrong is not None:
            others = sorted({*objects.values(), "container", "object"} - {objects[wrong]})
            objects[wrong] = others[int(self._oracle.rng.integers(len(others)))]
        words = object_words(sorted(objects))
        items = getattr(task, "items", {})
        listed = []
        for name, kind in objects.items():
            entry: dict[str, Any] = {"name": name, "kind": kind,
                                     "description": words.get(name, name),
                                     "place": kind in PLACE_TYPES}
            try:
                box = body_box(env.scene_state, name)
                entry["size_cm"] = [round(float(v) * 100, 1) for v in box.high - box.low]
                entry["weight_g"] = round(float(env.model.body(name).subtreemass[0]) * 1000)
            except (KeyError, ValueError):
                pass
            item = (items.get(name) or items.get(kind)) if isinstance(items, Mapping) else None
            for label in ("category", "colour"):
                if getattr(item, label, None) is not None:
                    entry[label] = str(getattr(item, label))
            listed.append(entry)
        return {"objects": listed}

    # -- planner ----------------------------------------------------------------------------

    def _remaining(self) -> list[Subtask]:
        task, scene = self._env.task, self._env.scene_state
        if task.evaluate(scene).success:
            return []
        try:
            return ground_truth_subtasks(task, scene)  # type: ignore[arg-type]
        except PlanNotFoundError:
            return []

    def _planner(self) -> dict[str, Any]:
        """The next remaining subtask (none believed done), with the planner's plan error
        when one is drawn; done when none remains."""
        remaining = [s for s in self._remaining() if _key(s) not in self._believed]
        kind = plan_error(self._oracle, "task_planner") if remaining else None
        if kind == "skipped_step":
            self._believed.add(_key(remaining.pop(0)))
        if not remaining or kind == "premature_done":
            return {"thought": "every object the instruction names is where it should be",
                    "subtask": "", "done": True}
        subtask = remaining[1] if kind == "reordered_steps" and len(remaining) > 1 \
            else remaining[0]
        if kind == "wrong_object":
            subtask = self._mistaken_subtask(subtask)
        self._issued[subtask.text] = subtask
        return {"thought": f"{len(remaining)} subtasks remain; next the "
                           f"{subtask.obj.replace('-', ' ')}",
                "subtask": subtask.text, "done": False}

    def _mistaken_subtask(self, subtask: Subtask) -> Subtask:
        """``subtask`` about a look-alike of its object (itself when there is none)."""
        alike = look_alike(self._oracle, subtask.obj)
        if alike is None or alike == subtask.destination:
            return subtask
        words = object_words(sorted(self._env.task.pddl_objects()))  # type: ignore[attr-defined]
        text = subtask.text.replace(f"the {words.get(subtask.obj, subtask.obj)}",
                                    f"the {words.get(alike, alike)}", 1)
        steps = tuple(PlanStep(s.name, tuple(alike if a == subtask.obj else a for a in s.args))
                      for s in subtask.steps)
        return Subtask(text, subtask.kind, alike, subtask.destination, steps)

    def _subtask(self, text: str) -> Subtask | None:
        """The subtask ``text`` stands for: one this oracle issued, else the remaining
        subtask whose text it is, else the first remaining one about an object it names."""
        if text in self._issued:
            return self._issued[text]
        remaining = self._remaining()
        lowered = text.lower()
        for subtask in remaining:
            if subtask.text.lower() == lowered:
                return subtask
        words = object_words(sorted(self._env.task.pddl_objects()))  # type: ignore[attr-defined]
        return next((s for s in remaining if words.get(s.obj, s.obj) in lowered), None)

    # -- TaP executor -----------------------------------------------------------------------

    def _tool_turn(self, query: ModelQuery, calls: list[tuple[str, dict[str, Any]]]
                   ) -> Completion:
        """The next tool call of ``calls`` not yet made correctly in the conversation (nor
        skipped as made), or a text summary once all are made (or one failed); with the
        executor's plan error when one is drawn."""
        made, results = _made_calls(query.messages)
        skipped = self._skipped.setdefault(str(query.fields.get("subtask", "")), set())
        if not made:
            skipped.clear()  # a new conversation about the subtask
        position = 0
        for (name, arguments), result in zip(made, results, strict=True):
            while position in skipped:
                position += 1
            if position < len(calls) and (name, arguments) == calls[position]:
                if not result.startswith("OK"):
                    return Completion(f"The subtask failed: {result}", Usage(), (), "native")
                position += 1
        while position in skipped:
            position += 1
        kind = plan_error(self._oracle, "task_executor") if position < len(calls) else None
        if kind == "skipped_step":
            skipped.add(position)
            position += 1
        if position >= len(calls) or kind == "premature_done":
            summary = results[-1] if results else "nothing to do"
            return Completion(f"Subtask done. {summary}", Usage(), (), "native")
        name, arguments = calls[position]
        if kind == "reordered_steps" and position + 1 < len(calls):
            name, arguments = calls[position + 1]
        elif kind == "wrong_object":
            name, arguments = self._mistaken_call(calls[position])
        elif kind == "nested_call" and position + 1 < len(calls):
            arguments = {**arguments, **dict(calls[position + 1:])}
        elif kind == "nested_call":
            arguments = {f"object_{key}": value for key, value in arguments.items()}
        return Completion("", Usage(), (ToolCall(f"call_{len(made) + 1}", name, arguments),),
                          "native")


def _key(subtask: Subtask) -> tuple[str, str, str | None]:
    """What a subtask does, whatever its words: (kind, object, destination)."""
    return subtask.kind, subtask.obj, subtask.destination


def _made_calls(messages: Sequence[Mapping[str, Any]]
                ) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """The tool calls of a conversation, in order, and the result text of each."""
    calls: list[tuple[str, dict[str, Any]]] = []
    ids: list[str] = []
    texts: dict[str, str] = {}
    for message in messages:
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or ():
                function = call.get("function", {})
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except json.JSONDecodeError:
                    arguments = {}
                calls.append((str(function.get("name")), dict(arguments)))
                ids.append(str(call.get("id")))
        elif message.get("role") == "tool":
            texts[str(message.get("tool_call_id"))] = str(message.get("content", ""))
    return calls, [texts.get(call_id, "") for call_id in ids]
