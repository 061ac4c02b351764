"""ALRM (Agentic LLM for Robot Manipulation) on the platform: the agent (a ReAct task
planner over a tool-as-policy or code-as-policy task executor, :mod:`.agent`), its functions
as the ``alrm`` tool set (:mod:`.tools`), the code sandbox of its code-as-policy executor
(:mod:`.sandbox`) and its trace judge (:mod:`.judge`)."""
