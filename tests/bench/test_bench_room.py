"""The measurement room holds measurements only: no module of ``agentic_env.bench`` parses
arguments or is a command of its own (``agentic_env.cli.bench`` holds the commands)."""

from __future__ import annotations

import pathlib

import pytest

import agentic_env.bench

MODULES = sorted(pathlib.Path(agentic_env.bench.__file__).parent.glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.stem)
def test_a_benchmark_module_parses_no_arguments(path: pathlib.Path) -> None:
    source = path.read_text()
    assert "argparse" not in source and "__main__" not in source
    assert "\ndef main(" not in source
