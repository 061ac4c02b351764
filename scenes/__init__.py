"""Scene descriptions as data: one TOML file per setting (imported as agentic_env.scenes)."""
