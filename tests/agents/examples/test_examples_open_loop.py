"""The README's thirty-line example agent runs offline, by its ``module:attr`` name, and
its report says what it did."""

from __future__ import annotations

from pathlib import Path

from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.runner import run_episode

AGENT = "agentic_env.agents.examples.open_loop:make"


def test_the_open_loop_example_stacks_offline() -> None:
    result = run_episode(EpisodeSpec(task="stacking", seed=3, agent=AGENT,
                                     realism="ideal"), video=False)
    assert result.success and result.failure is None
    assert result.actions == 6 and result.replans == 0


def test_the_readme_shows_the_example_as_it_is() -> None:
    """The code block in the README's agent-writing guide is the example's class."""
    root = Path(__file__).resolve().parents[3]
    source = (root / "agents" / "examples" / "open_loop.py").read_text()
    readme = (root / "README.md").read_text()
    body = source[source.index("class OpenLoopAgent"):source.index("\n\n\ndef make")]
    shown = readme[readme.index("class OpenLoopAgent"):]
    shown = shown[:shown.index("```")].rstrip()
    code = [line for line in body.splitlines() if '"""Carry out' not in line]
    assert shown.splitlines() == code
