"""The ``agentic-env`` command table: every subcommand resolves to a function of
``agentic_env.cli`` (or ``real.trial``) with its own parser, and the library modules the
commands drive hold no argument parsing."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest

from agentic_env import cli

#: Library modules whose command lines moved to ``agentic_env.cli`` (every module of
#: ``agentic_env.bench`` too: ``tests/bench/test_bench_room.py``).
LIBRARY_MODULES = (
    "agentic_env.datasets.collect", "agentic_env.datasets.reader", "agentic_env.datasets.replay",
    "agentic_env.harness.run", "agentic_env.reports.report", "agentic_env.rl.train",
    "agentic_env.real.calibrate", "agentic_env.reports.trial_report",
)


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_command_has_its_own_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    module_name, function = cli.COMMANDS[command][0].split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as missing:  # an optional extra that is not installed
        pytest.skip(f"{command}: {missing}")
    assert callable(getattr(module, function))
    with pytest.raises(SystemExit) as exit_info:
        cli.main([command, "--help"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: agentic-env {command} ")


@pytest.mark.parametrize("module_name", LIBRARY_MODULES)
def test_library_modules_parse_no_arguments(module_name: str) -> None:
    spec = importlib.util.find_spec(module_name)
    assert spec is not None and spec.origin is not None
    source = Path(spec.origin).read_text()
    assert "argparse" not in source and "__main__" not in source
    assert "\ndef main(" not in source
