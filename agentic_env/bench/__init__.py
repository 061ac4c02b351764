"""The measurement room: every benchmark of the project, one module each.

The module benchmark (:mod:`~agentic_env.bench.modules`, the paper's Table II), the grasp
(:mod:`~agentic_env.bench.grasp`) and hand-eye calibration benchmarks
(:mod:`~agentic_env.bench.handeye`, :mod:`~agentic_env.bench.calibration`), the world's budget
(:mod:`~agentic_env.bench.world`, :mod:`~agentic_env.bench.world_budget`), agents with the
sim-oracle (:mod:`~agentic_env.bench.agent`, :mod:`~agentic_env.bench.interventions`), one
episode's time per component (:mod:`~agentic_env.bench.episode`), the scripted experts
(:mod:`~agentic_env.bench.tasks`), the workcell's speed (:mod:`~agentic_env.bench.env`,
:mod:`~agentic_env.bench.env_measures`), robosuite (:mod:`~agentic_env.bench.robosuite`), the
real env's observation latency over the twin (:mod:`~agentic_env.bench.real`), tool calls
over MCP (:mod:`~agentic_env.bench.tools`), the harness itself
(:mod:`~agentic_env.bench.sweep`) and demonstration collection
(:mod:`~agentic_env.bench.collect`).

They run episodes with :mod:`agentic_env.harness`, record each into the harness's results
database (:mod:`~agentic_env.bench.store`) and are run by the ``agentic-env bench*`` commands
(:mod:`agentic_env.cli.bench`, argument parsing and printing only); :mod:`agentic_env.reports`
reads what they store (``agentic-env report DB``).
"""
