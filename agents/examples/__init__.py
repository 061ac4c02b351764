"""Small example agents built on the agent runtime (see the README's agent-writing guide)."""
