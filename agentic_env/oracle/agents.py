"""The sim-oracle's answers to the built-in agents' modules: one table per agent.

Each table maps a module name to the lazy ``"module:attr"`` entry point of its answer (see
:mod:`agentic_env.oracle.answers` for the signature); a new agent registers its own with
:func:`agentic_env.oracle.register_answer`. The agents never import these: the oracle's side
of each module lives here, next to the simulator it reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

_AGENTICLAB = "agentic_env.oracle.agenticlab:answer"
_ALRM = "agentic_env.oracle.alrm:answer"
_MALLVI = "agentic_env.oracle.mallvi:answer"
_PLANNER_EXECUTOR = "agentic_env.oracle.planner_executor:answer"

#: AgenticLab's pipeline: task parser, condition checker, detector, grasp evaluator, goal
#: checker.
AGENTICLAB: Mapping[str, str] = MappingProxyType(
    dict.fromkeys(("parser", "checker", "detector", "grasp", "goal"), _AGENTICLAB))
#: ALRM's trace judge, task planner and task executor.
ALRM: Mapping[str, str] = MappingProxyType({
    "judge": "agentic_env.oracle.judge:answer", "task_planner": _ALRM,
    "task_executor": _ALRM})
#: MALLVI's roles.
MALLVI: Mapping[str, str] = MappingProxyType(dict.fromkeys(
    ("decomposer", "descriptor", "localizer", "thinker", "reflector", "single_agent"),
    _MALLVI))
#: The planner-executor's router, chatbot, planner and goal completion critic.
PLANNER_EXECUTOR: Mapping[str, str] = MappingProxyType(
    dict.fromkeys(("router", "chatbot", "planner", "critic"), _PLANNER_EXECUTOR))

#: Every built-in agent's table, by agent name.
AGENT_ANSWERS: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "agenticlab": AGENTICLAB, "alrm": ALRM, "mallvi": MALLVI,
    "planner_executor": PLANNER_EXECUTOR})
#: Answers by prompt template, ahead of the module's: ALRM's object list and the shared typed
#: scene listing are ``detector`` queries of their own templates; AgenticLab's check of a
#: detection another detector made is a ``grasp`` query of its own.
TEMPLATE_ANSWERS: Mapping[str, str] = MappingProxyType({
    "alrm_objects": _ALRM, "scene_objects": "agentic_env.oracle.listing:answer",
    "detection_check": _AGENTICLAB})
