"""Tool episodes for agents outside this process: the episode a tool set acts in, scored
from ground truth, its sim and real backends, and the MCP server that exposes it."""
