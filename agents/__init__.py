"""Agent pipelines and the model layer (imported as agentic_env.agents)."""
