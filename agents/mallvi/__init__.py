"""MALLVI (arXiv 2602.16898): Decomposer, Descriptor, Localizer, Thinker, Actor and Reflector
on the shared skills; see :mod:`agentic_env.agents.mallvi.agent`."""
