"""Benchmark harness: sweep grids, local and Ray runners, a SQLite results store and MCP; the
benchmarks themselves live in :mod:`agentic_env.bench`, the analysis of what it stores in
:mod:`agentic_env.reports`.

Workflow::

    agentic-env sweep sweeps/ci.yaml --workers 2        # runs/sweeps/ci/results.db + traces/
    agentic-env sweep sweeps/ci.yaml --ray auto         # the same episodes on a Ray cluster
    agentic-env modules --model sim-oracle --db runs/sweeps/ci/results.db   # Table II
    agentic-env report runs/sweeps/ci/results.db --out runs/sweeps/ci/report

``sweep`` expands a YAML grid (:mod:`~agentic_env.harness.sweep`) into
:class:`~agentic_env.harness.episode.EpisodeSpec` objects, runs those the database does not
hold yet (:mod:`~agentic_env.harness.pool`, :mod:`~agentic_env.harness.ray_runner`) and
commits each finished episode with its model calls in one transaction
(:mod:`~agentic_env.harness.db`), so a killed sweep resumes where it stopped. ``report``
renders :mod:`~agentic_env.reports.metrics` as HTML and Markdown
(:mod:`~agentic_env.reports.report`). Needs the ``harness`` extra (and ``ray`` for
``--ray``).
"""
