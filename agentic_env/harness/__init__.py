"""Benchmark harness: sweep grids, local and Ray runners, a SQLite results store, metrics,
reports and the module benchmark.

``agentic-env sweep FILE`` expands a YAML grid into :class:`~agentic_env.agents.episode.EpisodeSpec`
objects, runs the ones the database does not hold yet and records each result in one
transaction; ``agentic-env report DB --out DIR`` turns the database into HTML and Markdown.
"""
