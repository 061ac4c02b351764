"""The README is a front door: short, opening with the two commands, listing every command."""

from __future__ import annotations

import pathlib
import re

from agentic_env.cli import COMMANDS

README = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_the_readme_is_short_and_opens_with_the_two_commands() -> None:
    assert len(README.splitlines()) <= 200
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    assert blocks[:2] == ["bash scripts/demo.sh\n", "bash scripts/test.sh\n"]


def test_the_readme_lists_every_command_once() -> None:
    listed = re.findall(r"^\| `([a-z-]+)` \|", README, re.M)
    assert listed == list(COMMANDS)


def test_the_readme_links_only_to_files_that_exist() -> None:
    root = pathlib.Path(__file__).resolve().parents[2]
    for link in re.findall(r"\]\(([^)#]+)\)", README):
        if "://" not in link:
            assert (root / link).exists(), link
