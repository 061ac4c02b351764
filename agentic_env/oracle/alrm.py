"""The sim-oracle's answers for ALRM: the scene's object list, the task planner's next
subtask, and the task executor's tool calls (TaP) or program (CaP), from ground truth.

Privileged (it reads the simulator and the task's reference plan); only the sim-oracle uses
it. Each answer has the shape a real model's must have, so the agent's own parsing, tool
validation and sandbox run for real. Errors are injected at the module's seeded rate:

* ``planner``: the task is declared done while subtasks remain;
* ``executor`` (TaP): the right tool with a misnamed argument (``object_name=`` for
  ``name=``), which the tool registry answers with ``BAD_ARGS``; the next turn owes the
  right call again, so a model that reads the result corrects itself;
* ``executor`` (CaP): a program that calls a function which does not exist (``NameError``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentic_env.agents.models.base import Completion, ModelQuery, ToolCall, Usage
from agentic_env.pddl.planning import PlanNotFoundError
from agentic_env.sim.state import body_box
from agentic_env.tasks.subtasks import Subtask, ground_truth_subtasks, object_words

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.oracle.backend import OracleContext

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


def _program(calls: Sequence[tuple[str, Mapping[str, Any]]], broken: bool) -> str:
    """A CaP program making ``calls`` and printing each result (``broken``: a NameError)."""
    lines = ["# one subtask, one run: each call's result goes to the log"]
    for index, (name, arguments) in enumerate(calls):
        args = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
        callee = "grab" if broken and index == 0 else name
        lines.append(f"print({callee}({args}))")
    return "\n".join(lines) + "\n"


def _built(oracle: OracleContext) -> AlrmOracle:
    """The answers over ``oracle``'s simulator and error draws (kept per oracle)."""
    return AlrmOracle(oracle.env, oracle.wrong)


def answer(oracle: OracleContext, query: ModelQuery) -> Completion:
    """The sim-oracle's answer to one of ALRM's queries (its task planner, task executor or
    object list; the backend stamps the usage)."""
    return oracle.part(_built).complete(query)


class AlrmOracle:
    """ALRM's modules answered from one episode's simulator.

    Args:
        env: the episode's simulator (a symbolic task).
        wrong: draws whether a module's answer is corrupted (the sim-oracle's seeded draw).
    """

    def __init__(self, env: SimEnv, wrong: Callable[[str], bool]) -> None:
        self._env = env
        self._wrong = wrong
        self._issued: dict[str, Subtask] = {}

    def complete(self, query: ModelQuery) -> Completion:
        """The answer to one of ALRM's queries (the backend stamps its usage)."""
        if query.template == OBJECTS_TEMPLATE:
            return Completion(json.dumps(self._objects()), Usage())
        if query.module == "task_planner":
            return Completion(json.dumps(self._planner()), Usage())
        subtask = self._subtask(str(query.fields.get("subtask", "")))
        calls = _subtask_calls(subtask) if subtask is not None else []
        if not query.tools:
            code = _program(calls, self._wrong("task_executor"))
            return Completion(json.dumps({"thought": "the subtask as function calls",
                                          "code": code}), Usage())
        return self._tool_turn(query, calls)

    # -- perception -------------------------------------------------------------------------

    def _objects(self) -> dict[str, Any]:
        """What a detector reports of the scene: names, kinds and visible properties."""
        env, task = self._env, self._env.task
        objects = task.pddl_objects()  # type: ignore[attr-defined]
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
        remaining = self._remaining()
        if not remaining or self._wrong("task_planner"):
            return {"thought": "every object the instruction names is where it should be",
                    "subtask": "", "done": True}
        subtask = remaining[0]
        self._issued[subtask.text] = subtask
        return {"thought": f"{len(remaining)} subtasks remain; next the "
                           f"{subtask.obj.replace('-', ' ')}",
                "subtask": subtask.text, "done": False}

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
        """The next tool call of ``calls`` not yet made correctly in the conversation, or a
        text summary once all are made (or one failed)."""
        made, results = _made_calls(query.messages)
        position = 0
        for (name, arguments), result in zip(made, results, strict=True):
            if position < len(calls) and (name, arguments) == calls[position]:
                if not result.startswith("OK"):
                    return Completion(f"The subtask failed: {result}", Usage(), (), "native")
                position += 1
        if position >= len(calls):
            summary = results[-1] if results else "nothing to do"
            return Completion(f"Subtask done. {summary}", Usage(), (), "native")
        name, arguments = calls[position]
        if self._wrong("task_executor"):
            arguments = {f"object_{key}": value for key, value in arguments.items()}
        return Completion("", Usage(), (ToolCall(f"call_{len(made) + 1}", name, arguments),),
                          "native")


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
