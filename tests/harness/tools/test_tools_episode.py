"""Tool episodes in the simulator: the tool-calling sim-oracle drives the primitives set and
the end state is scored from ground truth."""

from __future__ import annotations

import pytest

from agentic_env.experts import expert_actions
from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.tools.run import run_tool_episode


def test_stopping_early_is_scored_as_a_wrong_claim(tmp_path):
    spec = EpisodeSpec(task="sorting", seed=3, agent="tools:primitives",
                       model="sim-oracle?stop_early=1", realism="ideal")
    result, conversation = run_tool_episode(spec)
    assert conversation.stop == "finished" and len(conversation.turns) == 1
    assert not result.success and result.failure == "goal" and result.goal_checker_error
    assert result.n_required > 0 and result.n_done == 0 and result.actions == 0
    assert [c.module for c in result.calls] == ["tools", "tool:finish"]
    assert result.calls[0].verdict == "native" and result.calls[0].cost_usd == 0.0
    with ResultStore(tmp_path / "r.sqlite") as store:
        from agentic_env.harness.db import Finished

        store.record(Finished("k", result, result.wall_s, "test"))
        assert store.episodes()[0]["failure"] == "goal"


@pytest.mark.slow
@pytest.mark.parametrize("model", ["sim-oracle",
                                   "sim-oracle?wrong_tool=0.15&bad_argument=0.15&talk=0.1"
                                   "&repeat=0.1&seed=1"])
def test_the_oracle_completes_sorting_through_the_primitives(model):
    spec = EpisodeSpec(task="sorting", seed=3, agent="tools:primitives", model=model,
                       realism="ideal")
    result, conversation = run_tool_episode(spec)
    assert result.success and result.score > 0.5, result.failure_detail
    assert conversation.stop == "finished"
    codes = {c.verdict for c in result.calls}
    assert ("BAD_ARGS" in codes) == ("bad_argument" in model)


def test_a_pick_with_the_default_full_opening_runs():
    """The schema's default width (0.085 m, the gripper's full opening) survives the float32
    action and the executor's range check."""
    from agentic_env.harness.tools.backends import open_episode
    from agentic_env.oracle.tool_reference import primitive_call

    episode = open_episode(EpisodeSpec(task="sorting", seed=3, realism="ideal"))
    try:
        env = episode.judge.env
        name, arguments = primitive_call(next(iter(expert_actions(env.task, env.scene_state))))
        del arguments["width"]
        result = episode.call(name, arguments)
        assert result.ok, result.render()
    finally:
        episode.close()


def test_the_alrm_tools_see_through_the_perception_model():
    """``serve --tools alrm``: the tools list and pick objects through the episode's
    perception model; without one they find nothing."""
    from agentic_env.harness.tools.backends import open_episode

    blind = open_episode(EpisodeSpec(task="sorting", seed=3, realism="ideal"), "alrm")
    try:
        assert blind.call("get_objects", {}).render().startswith("NOT_FOUND")
    finally:
        blind.close()
    episode = open_episode(EpisodeSpec(task="sorting", seed=3,
                                       realism="ideal"), "alrm", perception="sim-oracle")
    try:
        listed = episode.call("get_objects", {})
        assert listed.ok and listed.data["objects"]
        name = next(iter(listed.data["objects"]))
        assert episode.call("pick", {"name": name}).ok
        assert episode.call("place", {"target": "table"}).ok
        assert episode.context.actions > 0
    finally:
        episode.close()


def test_an_emulated_model_drives_a_tool_episode_on_virtual_time():
    """``emulated:<profile>`` in a tool episode: the profile's turn error kinds, every turn's
    seconds (virtual) drawn about the parser's mean by the profile's latency law, spread as
    every emulated call's, the same episode for the same seed."""
    from agentic_env.oracle.emulated import tool_error_rates
    from agentic_env.oracle.profile import load_profile

    profile = load_profile("gpt-4o")
    rates = tool_error_rates(profile)
    turn = (1 - profile.modules["parser"].success.value) * profile.planner_turn_share.value
    assert set(rates) == {"wrong_tool", "bad_argument", "stop_early", "talk", "repeat"}
    assert sum(rates.values()) == pytest.approx(turn)
    spec = EpisodeSpec(task="sorting", seed=3, agent="tools:primitives",
                       model="emulated:gpt-4o", max_actions=6, realism="ideal")
    runs = [run_tool_episode(spec, max_turns=8) for _ in range(2)]
    (result, conversation), (again, _) = runs
    turns = [c for c in result.calls if c.module == "tools"]
    assert turns and all(c.model == "emulated:gpt-4o" for c in turns)
    seconds = [c.latency_s for c in turns]
    assert len(set(seconds)) == len(seconds) > 1 and min(seconds) > 0  # spread, not the mean
    assert result.model_s >= sum(seconds)
    assert result.wall_s < result.model_s  # virtual: nothing waited for
    assert [(c.module, c.verdict) for c in again.calls] == \
        [(c.module, c.verdict) for c in result.calls]
    assert [c.latency_s for c in again.calls if c.module == "tools"] == seconds


def test_a_profile_without_a_parser_cannot_call_tools():
    from agentic_env.agents.models.base import ModelError

    spec = EpisodeSpec(task="sorting", seed=3, agent="tools:primitives",
                       model="emulated:langsam", realism="ideal")
    with pytest.raises(ModelError, match="does not call tools"):
        run_tool_episode(spec, max_turns=2)
