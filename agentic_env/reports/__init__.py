"""Analysis of stored results: reports, plots, the paper's findings and tables beside the
simulation, the arithmetic a prediction must beat, and the predictions ledger.

:mod:`agentic_env.harness` runs episodes and stores them and :mod:`agentic_env.bench`
measures; this package only reads what they stored (neither imports ``reports``). Needs the
``harness`` extra.
"""
