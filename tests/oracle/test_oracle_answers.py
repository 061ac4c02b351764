"""Routing by module: a new agent declares its own model module (agent side) and registers
the sim-oracle's answer to it (harness side), and ``--modules``, error rates and the agent's
declared modules all follow."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from support.toy_agent import make_toy

from agentic_env.agents.base import agent_entry, register_agent, unregister_agent
from agentic_env.agents.models.base import ModelError, ModelQuery
from agentic_env.agents.models.modules import (
    module_names,
    register_module,
    unregister_module,
)
from agentic_env.agents.models.registry import ModelRouter, parse_model_spec, parse_module_map
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.oracle import (
    OracleContext,
    SimOracle,
    answer_for,
    register_answer,
    unregister_answer,
)
from agentic_env.sim.state import free_body_names


def _count_answer(oracle: OracleContext, query: ModelQuery) -> dict[str, Any]:
    """How many free objects the scene holds (ground truth), off by one when wrong."""
    count = len(free_body_names(oracle.env.model))
    return {"count": count + (1 if oracle.wrong("counter") else 0), "of": query.fields["what"]}


@pytest.fixture
def counter() -> Iterator[str]:
    register_module("counter")
    register_answer("counter", _count_answer)
    yield "counter"
    unregister_answer("counter")
    unregister_module("counter")


def _query(module: str) -> ModelQuery:
    return ModelQuery(module, module, "How many objects?", (), {}, {"what": "objects"})


def test_a_registered_module_is_routed_and_answered_by_the_sim_oracle(
        counter: str, sorting_env: SimEnv) -> None:
    truth = len(free_body_names(sorting_env.model))
    router = ModelRouter(SimOracle(sorting_env))
    answer = json.loads(router.backend_for(counter).complete(_query(counter)).text)
    assert answer == {"count": truth, "of": "objects"}
    wrong = SimOracle(sorting_env, parse_model_spec("sim-oracle?counter=1.0").error_rates)
    assert json.loads(wrong.complete(_query(counter)).text)["count"] == truth + 1
    assert parse_module_map("counter=sim-oracle") == {"counter": "sim-oracle"}
    assert counter in module_names() and "parser" in module_names()


def test_an_unregistered_module_is_refused_naming_the_valid_ones(sorting_env: SimEnv) -> None:
    with pytest.raises(InvalidConfigError, match=r"unknown module 'counter' in 'counter=sim-"
                                                 r"oracle'; modules are .*parser"):
        parse_module_map("counter=sim-oracle")
    with pytest.raises(InvalidConfigError, match="unknown option 'counter'"):
        parse_model_spec("sim-oracle?counter=0.5")
    with pytest.raises(InvalidConfigError, match="unknown module 'counter' given to "
                                                 "register_answer"):
        register_answer("counter", _count_answer)
    with pytest.raises(InvalidConfigError, match="built-in modules"):
        register_module("parser")
    register_module("counter")
    try:  # declared by the agent, but no answer registered for the sim-oracle
        with pytest.raises(ModelError, match="no answer for module 'counter'; register one"):
            SimOracle(sorting_env).complete(_query("counter"))
    finally:
        unregister_module("counter")


def test_an_answer_registered_as_an_entry_point_is_imported_on_first_use(counter: str) -> None:
    register_answer(counter, "support.toy_agent:make_toy")
    assert answer_for(counter) is make_toy
    register_answer(counter, "support.toy_agent:nothing_here")
    with pytest.raises(InvalidConfigError, match="has no 'nothing_here'"):
        answer_for(counter)


def test_an_agent_declares_its_modules_and_a_model_for_another_is_refused(counter: str) -> None:
    register_agent("counting-toy", make_toy, modules=(counter,))
    try:
        entry = agent_entry("counting-toy")
        entry.check_modules({counter: "sim-oracle", "judge": "sim-oracle"})  # judge: harness's
        with pytest.raises(InvalidConfigError, match="never queries parser; its modules are "
                                                     "counter"):
            entry.check_modules({"parser": "sim-oracle"})
    finally:
        unregister_agent("counting-toy")
    with pytest.raises(InvalidConfigError,
                       match="unknown module 'nope' among the modules of agent 'bad'"):
        register_agent("bad", make_toy, modules=("nope",))
    with pytest.raises(InvalidConfigError, match="'mallvi' never queries parser"):
        agent_entry("mallvi").check_modules({"parser": "gemini/x"})
