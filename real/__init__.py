"""Real-hardware env and drivers (imported as agentic_env.real)."""
