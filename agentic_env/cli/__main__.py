"""``python -m agentic_env.cli``: the same as the ``agentic-env`` command."""

from agentic_env.cli import main

raise SystemExit(main())
