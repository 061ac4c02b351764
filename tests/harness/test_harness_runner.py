"""The agent seam: the registry, agent options, and a toy agent registered from a test that
runs through the episode runner and a sweep like any built-in agent."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest
from support.toy_agent import TOY_FAILURE, ToyAgent, make_toy

from agentic_env.agents.base import (
    AgentSetup,
    agent_entry,
    agent_names,
    failure_sources,
    make_agent,
    register_agent,
    unregister_agent,
)
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.cli import run as run_cli
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.run import run_sweep
from agentic_env.harness.runner import run_episode
from agentic_env.harness.sweep import parse_sweep
from agentic_env.reports import metrics

TOY_ENTRY = "support.toy_agent:make_toy"


class _NoModel:
    """A backend that is never asked (agents are only built here)."""

    name = "none"

    def complete(self, query: object) -> None:
        raise AssertionError("not asked")


@pytest.fixture
def toy() -> Iterator[str]:
    register_agent("toy", make_toy, failure_sources=(TOY_FAILURE,),
                   options={"patience": 3})
    yield "toy"
    unregister_agent("toy")


def test_an_unknown_agent_names_the_registered_ones() -> None:
    assert "agenticlab" in agent_names()
    with pytest.raises(InvalidConfigError, match=r"unknown agent 'nope'; valid: .*agenticlab"):
        agent_entry("nope")
    with pytest.raises(InvalidConfigError, match="without ':'"):
        register_agent("a:b", make_toy)


def test_agent_options_are_checked_against_the_declared_ones(toy: str) -> None:
    entry = agent_entry(toy)
    assert entry.check_options({}) == {"patience": 3}
    assert entry.check_options({"patience": 5}) == {"patience": 5}
    with pytest.raises(InvalidConfigError, match="no option 'speed'; valid: patience"):
        entry.check_options({"speed": 1})
    with pytest.raises(InvalidConfigError, match="expected int"):
        entry.check_options({"patience": "lots"})
    models = ModuleContext(ModelRouter(_NoModel()))
    agent = make_agent(toy, AgentSetup(models, options={"patience": 7}))
    assert isinstance(agent, ToyAgent) and agent.setup.options == {"patience": 7}
    lab = make_agent("agenticlab", AgentSetup(models, options={"grasp_evaluation": False}))
    assert lab.config.grasp_evaluation is False


def test_agent_options_leave_old_spec_keys_alone_and_round_trip() -> None:
    plain = EpisodeSpec("sorting", seed=3, realism="ideal")
    ablated = EpisodeSpec("sorting", seed=3, agent_options=(("grasp_evaluation", False),),
                          realism="ideal")
    assert plain.key() != ablated.key()
    assert EpisodeSpec.from_dict(ablated.to_dict()) == ablated
    assert plain.key() == "eb5ee5b2ebf7934e"  # its key before agent options existed
    data = plain.to_dict()
    del data["agent_options"]  # a spec stored before agent options existed
    assert EpisodeSpec.from_dict(data).key() == plain.key()


def test_a_toy_agent_registered_here_runs_through_run_episode(toy: str) -> None:
    result = run_episode(EpisodeSpec("sorting", agent=toy, agent_options=(("patience", 1),),
                                     realism="ideal"),
                         video=False)
    assert result.error is None and not result.success
    assert result.actions == 1 and result.failure == TOY_FAILURE
    assert "home ok" in result.failure_detail
    assert TOY_FAILURE in failure_sources()
    breakdown = metrics.failure_breakdown([{"model": "m", "success": False,
                                            "failure": TOY_FAILURE}], ("model",))
    assert breakdown[("m",)][TOY_FAILURE] == 1


def test_a_sweep_runs_an_agent_named_by_its_entry_point(tmp_path: pathlib.Path) -> None:
    sweep = parse_sweep({"name": "toy", "grid": {"tasks": ["sorting"], "agents": [TOY_ENTRY],
                                                 "seeds": [0]}})
    summary = run_sweep(sweep, tmp_path / "r.db", workers=1, progress=False)
    assert (summary.ran, summary.errors) == (1, 0)
    with ResultStore(tmp_path / "r.db") as store:
        (row,) = store.episodes()
    assert row["agent"] == TOY_ENTRY and row["failure"] == TOY_FAILURE
    assert row["actions"] == 1


def test_sweep_and_run_refuse_unknown_agents_and_options() -> None:
    with pytest.raises(InvalidConfigError, match="unknown agent 'nope'"):
        parse_sweep({"grid": {"tasks": ["sorting"], "agents": ["nope"]}})
    with pytest.raises(InvalidConfigError, match="no option 'colour'"):
        parse_sweep({"grid": {"tasks": ["sorting"], "agent_options": [{"colour": "red"}]}})
    sweep = parse_sweep({"grid": {"tasks": ["sorting"],
                                  "agent_options": [{}, {"grasp_evaluation": False}]}})
    assert [s.options() for s in sweep.specs] == [{}, {"grasp_evaluation": False}]
    assert run_cli.main(["--agent", "nope", "--quiet"]) == 2
    assert run_cli.main(["--agent-option", "grasp_evaluation=maybe", "--quiet"]) == 2
    assert run_cli.parse_agent_options(["a=false", "b=3", "c=text"]) == {
        "a": False, "b": 3, "c": "text"}


def test_sweep_files_naming_the_runners_old_path_still_load() -> None:
    from agentic_env.harness.execute import load_episode_fn

    assert load_episode_fn("agentic_env.agents.runner:run_episode") is run_episode
