"""Helpers shared by the tests (on ``sys.path`` through ``pythonpath`` in pyproject)."""
