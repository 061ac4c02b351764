"""ALRM's functions and the dry-run mock share names and signatures, so one CaP program (the
sim-oracle's) runs against both."""

from __future__ import annotations

import inspect
import json

from agentic_env.agents.alrm.tools import alrm_tools
from agentic_env.agents.models.base import ModelQuery
from agentic_env.agents.runtime.sandbox import run_program
from agentic_env.agents.tools.robot import ToolContext
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.dry_run import DryRunWorld
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.oracle.alrm import AlrmOracle
from agentic_env.oracle.backend import OracleContext


def test_signatures_match_and_the_oracle_program_runs_on_the_mock() -> None:
    env = SimEnv(task="sorting", setting="lab", realism="ideal")
    try:
        _obs, info = env.reset(seed=5000)
        world = DryRunWorld.from_task(env.task, env.scene_state)
        mock = world.tools()
        ours = {f.__name__: f for f in alrm_tools(ToolContext(EnvRobotIO(env), "x"))}
        assert set(mock) <= set(ours)
        for name, function in mock.items():
            assert list(inspect.signature(function).parameters) == list(
                inspect.signature(ours[name]).parameters), name
        query = ModelQuery("task_executor", "cap", "", fields={
            "subtask": "Pick up the apple and place it in the bowl."})
        program = json.loads(AlrmOracle(OracleContext(env, {}, 0)).complete(query).text)
        run = run_program(program["code"], mock)
    finally:
        env.close()
    assert run.ok, run.error
    assert "The apple was successfully picked" in run.log
    assert [str(s) for s in world.applied_steps()] == ["(pick apple-1)",
                                                       "(place-in apple-1 bowl)"]
