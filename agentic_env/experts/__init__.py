"""Scripted experts (privileged: they read the true sim state), one module per task.

Each task's ``expert_actions`` and ``primitive_for`` delegate to its expert here, e.g.
:class:`agentic_env.experts.crossword.CrosswordExpert`. Every PDDL task but the crossword
(which orders its own plan) runs the plan-execute-replan loop of
:mod:`agentic_env.experts.closed_loop`. Experts import task modules only for type annotations:
the tasks import their experts, never the other way round.
"""
