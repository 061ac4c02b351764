"""Reference tool calls from privileged ground truth, for the tool-calling sim-oracle.

A reference policy says which tool call a correct agent makes next, from the simulator's true
state and the task's reference plan. Each tool set has its own
(:func:`reference_policy`); the ``primitives`` one follows the task's closed-loop scripted
expert (:func:`~agentic_env.experts.expert_actions`), which replans from the true
state whenever a step did not have its planned effect. Agents never see these policies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from agentic_env.agents.tools.primitives import pose_arguments
from agentic_env.contract.actions import vector_to_pose
from agentic_env.contract.spaces import PRIMITIVES
from agentic_env.errors import InvalidConfigError

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv

#: A reference call: (tool name, arguments).
ReferenceCall = tuple[str, dict[str, Any]]


def primitive_call(action: dict[str, Any]) -> ReferenceCall:
    """The ``primitives`` tool call that sends primitive ``action`` (an action dict)."""
    name = PRIMITIVES[int(action["primitive"])]
    if name in ("home", "open_gripper", "close_gripper"):
        return name, {}
    arguments = pose_arguments(vector_to_pose(action["pose"]))
    distance = round(float(action["distance"][0]), 4)
    if name == "pick":
        arguments |= {"width": round(float(action["width"][0]), 4), "approach": distance}
    elif name == "place":
        arguments["approach"] = distance
    elif name in ("open_drawer", "close_drawer"):
        arguments["distance"] = distance
    return name, arguments


class ExpertPrimitivePolicy:
    """Next correct ``primitives`` call: the scripted expert's next action, then ``finish``.

    Args:
        env: the episode's simulator, already reset (its task yields the expert's actions).
    """

    def __init__(self, env: SimEnv) -> None:
        self._env = env
        self._actions: Iterator[dict[str, Any]] | None = None
        self._done = False

    def next_call(self) -> ReferenceCall:
        """The next correct call, computed from the state now (call it once per step)."""
        from agentic_env.experts import expert_actions

        if self._actions is None:
            self._actions = iter(expert_actions(self._env.task, self._env.scene_state))
        action = None if self._done else next(self._actions, None)
        if action is None:
            self._done = True
            success = bool(self._env.task.evaluate(self._env.scene_state).success)
            return "finish", {"success": success,
                              "summary": "the instruction is carried out" if success
                              else "the instruction could not be carried out"}
        return primitive_call(action)


_POLICIES: dict[str, Callable[[SimEnv], Any]] = {"primitives": ExpertPrimitivePolicy}


def reference_policy(tool_set: str, env: SimEnv) -> ExpertPrimitivePolicy:
    """The reference policy of ``tool_set`` over ``env``.

    Raises:
        InvalidConfigError: the tool set has no reference policy; the message lists those
            that have one.
    """
    if tool_set not in _POLICIES:
        raise InvalidConfigError(f"the sim-oracle has no reference policy for tool set "
                                 f"{tool_set!r}; valid: {', '.join(_POLICIES)}")
    return _POLICIES[tool_set](env)
