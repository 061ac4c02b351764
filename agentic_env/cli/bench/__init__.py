"""The ``agentic-env bench*`` commands, one module per benchmark: argument parsing and
printing only; the measurements are :mod:`agentic_env.bench`'s."""
