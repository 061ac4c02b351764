"""Models, meshes-free MJCF and generated textures authored by the project
(imported as agentic_env.assets)."""
