"""Every plan error kind (and the router's and critic's verdict kinds) occurs in each agent
that has the role, and the agent's own recovery carries the episode to its end: a success or
one of its declared failure sources, never an exception; the trace lists the errors drawn
(``plan_errors`` of its ``episode.json``) beside the calls that made them."""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from agentic_env.agents.base import COMMON_FAILURE_SOURCES, agent_entry
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.runner import run_episode
from agentic_env.oracle.profile import (
    KINDS,
    MEASURED_MODULES,
    PLAN_ROLES,
    ModelProfile,
    parse_profile,
)

#: The error rate of the role under test (every other role is right): every answer of a role
#: asked once per plan or round, half of those of a role asked once per turn (ALRM's, so
#: that its other turns let the episode go on).
RATES = {"task_planner": 0.5, "task_executor": 0.5}


def _assumed(value: float) -> dict[str, Any]:
    return {"value": value, "assumption": "a test's model"}


def _profile(role: str, kind: str) -> ModelProfile:
    """A model whose ``role`` errs at its rate (:data:`RATES`, else 1), only by ``kind``;
    every other role is right (those sharing the role's module are moved to a perfect one,
    and the planner-executor's own per-turn kinds err only when the turn roles do)."""
    defaults = tomllib.loads((resources.files("agentic_env.oracle") / "profiles"
                              / "_defaults.toml").read_text(encoding="utf-8"))
    module = defaults["roles"][role]
    family = "plan" if role in PLAN_ROLES else module
    perfect = next(m for m in MEASURED_MODULES if m != module)
    rate = RATES.get(role, 1.0)
    share = 1.0 if role in defaults["turn_roles"] else 0.0
    data = {"title": "a test model", "planner_turn_share": _assumed(share),
            "modules": {m: {"success": _assumed(1.0 - rate if m == module else 1.0),
                            "seconds": _assumed(1.0)} for m in MEASURED_MODULES},
            "kinds": {family: {k: _assumed(float(k == kind)) for k in KINDS[family]}},
            "roles": {r: perfect for r, m in defaults["roles"].items()
                      if m == module and r != role}}
    return parse_profile("test-model", data, defaults)


def _run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, agent: str, role: str, kind: str,
         options: tuple[tuple[str, Any], ...] = (), task: str = "sorting",
         max_actions: int = 12) -> None:
    profile = _profile(role, kind)
    monkeypatch.setattr("agentic_env.oracle.load_profile", lambda _name: profile)
    spec = EpisodeSpec(task, seed=8311, agent=agent, model="emulated:test-model",
                       max_actions=max_actions, agent_options=options, realism="ideal")
    result = run_episode(spec, trace_root=tmp_path, video=False)
    sources = {*agent_entry(agent).failure_sources, *COMMON_FAILURE_SOURCES} - {"error"}
    assert result.error is None, result.error
    assert result.success or result.failure in sources, (result.failure,
                                                          result.failure_detail)
    trace = Path(result.trace_dir or "")
    drawn = json.loads((trace / "episode.json").read_text())["plan_errors"]
    assert {(e["role"], e["kind"]) for e in drawn} == {(role, kind)}, drawn
    calls = sorted((trace / "calls").glob(f"*-{role}.json"))
    assert calls and all(json.loads(c.read_text())["raw_responses"] for c in calls)


def _quick_first(cases: list[tuple]) -> list:
    """``cases`` as pytest params: the first in the default suite, the others slow (each is
    a whole episode: all of them take minutes)."""
    return [pytest.param(*c, marks=() if i == 0 else pytest.mark.slow)
            for i, c in enumerate(cases)]


MALLVI = _quick_first([("decomposer", k, ()) for k in PLAN_ROLES["decomposer"]] + [
    ("single_agent", k, (("single_agent", True),)) for k in PLAN_ROLES["single_agent"]])


@pytest.mark.parametrize(("role", "kind", "options"), MALLVI)
def test_mallvi_ends_cleanly_after_each_plan_error(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path, role: str, kind: str,
                                                   options: tuple) -> None:
    _run(monkeypatch, tmp_path, "mallvi", role, kind, options)


ALRM = _quick_first([("task_planner", k, "tap") for k in PLAN_ROLES["task_planner"]] + [
    ("task_executor", k, mode) for k in PLAN_ROLES["task_executor"] for mode in ("tap", "cap")])


@pytest.mark.parametrize(("role", "kind", "mode"), ALRM)
def test_alrm_ends_cleanly_after_each_plan_error(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path, role: str, kind: str,
                                                 mode: str) -> None:
    _run(monkeypatch, tmp_path, "alrm", role, kind, (("mode", mode),))


#: The router's ``false_pass`` (talk taken for an instruction) and the critic's (``achieved``
#: before the goal holds) need a turn the episode does not have (talk; a round ending short
#: of the goal): tests/agents/planner_executor covers them answer by answer.
PLANNER_EXECUTOR = _quick_first([("planner", k) for k in PLAN_ROLES["planner"]] + [
    ("router", "false_fail"), ("critic", "false_fail")])


@pytest.mark.parametrize(("role", "kind"), PLANNER_EXECUTOR)
def test_the_planner_executor_ends_cleanly_after_each_error(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path, role: str,
                                                            kind: str) -> None:
    _run(monkeypatch, tmp_path, "planner-executor", role, kind)


@pytest.mark.slow
@pytest.mark.parametrize(("agent", "role", "options"), [
    ("mallvi", "decomposer", ()), ("alrm", "task_planner", (("mode", "tap"),)),
    ("planner-executor", "planner", ())])
def test_reordered_steps_end_cleanly_where_the_order_matters(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, agent: str, role: str,
        options: tuple) -> None:
    """Stacking: a tower is built bottom up, so a swap may be one the world refutes."""
    _run(monkeypatch, tmp_path, agent, role, "reordered_steps", options, task="stacking")
