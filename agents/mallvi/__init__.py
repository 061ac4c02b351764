"""MALLVI (arXiv 2602.16898): Descriptor, Decomposer, Localizer, Thinker, Actor and Reflector
on the shared skills. The model modules are ``descriptor``, ``decomposer``, ``localizer``,
``thinker``, ``reflector`` and ``single_agent`` (the single-agent baseline); see
:mod:`agentic_env.agents.mallvi.agent`."""
