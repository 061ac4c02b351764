"""The ``agentic-env bench*`` commands, one module per benchmark."""
