"""The AgenticLab closed-loop pipeline: VLM modules, grounding and Algorithm 1."""
