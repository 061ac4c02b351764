"""ALRM (Agentic LLM for Robot Manipulation) on the platform: the code sandbox of its
code-as-policy executor and its trace judge."""
