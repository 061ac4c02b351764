"""The sim-oracle: the privileged, offline model that answers from simulator ground truth.

Harness side: it reads the simulator, so no agent imports it (the boundary test checks).
The harness builds its backends for an episode from the env with :func:`oracle_factories`
and hands agents only :class:`~agentic_env.agents.models.registry.ModelHandle` s to them.

* :mod:`~agentic_env.oracle.backend`: :class:`SimOracle`, the backend;
  :mod:`~agentic_env.oracle.context`: the :class:`OracleContext` its answers read, with the
  camera-visibility truth every answer shares (:mod:`~agentic_env.oracle.visibility`; the
  detections: :mod:`~agentic_env.oracle.detection`);
* :mod:`~agentic_env.oracle.answers`: which function answers each module
  (:func:`register_answer` for a new agent's modules);
* :mod:`~agentic_env.oracle.agents`: the built-in agents' tables of answers, one per agent,
  and their answer modules :mod:`~agentic_env.oracle.agenticlab`,
  :mod:`~agentic_env.oracle.alrm`, :mod:`~agentic_env.oracle.judge`,
  :mod:`~agentic_env.oracle.mallvi`, :mod:`~agentic_env.oracle.planner_executor`, and
  :mod:`~agentic_env.oracle.listing` (the typed scene listing any agent may ask for), with
  :mod:`~agentic_env.oracle.plan_errors` (the planner roles' error kinds);
* :mod:`~agentic_env.oracle.emulated`: :class:`EmulatedModel`, a paper's model as a
  sim-oracle driven by its :mod:`~agentic_env.oracle.profile` (``profiles/*.toml``), erring
  by what each call is sent (:mod:`~agentic_env.oracle.causes`,
  :mod:`~agentic_env.oracle.difficulty`), calibrated on the module benchmark's replica
  (:mod:`~agentic_env.oracle.replica`);
* :mod:`~agentic_env.oracle.tool_oracle` and :mod:`~agentic_env.oracle.tool_reference`: the
  tool-calling sim-oracle and its reference policies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_env.agents.models.registry import EMULATED, SIM_ORACLE, BackendFactory, ModelSpec
from agentic_env.oracle.ablation import ablated
from agentic_env.oracle.answers import OracleAnswer, answer_for, register_answer, unregister_answer
from agentic_env.oracle.backend import SimOracle
from agentic_env.oracle.context import OracleContext
from agentic_env.oracle.emulated import EmulatedModel
from agentic_env.oracle.judge import JUDGE_MODULE, OracleJudge
from agentic_env.oracle.profile import ModelProfile, load_profile, profile_names
from agentic_env.oracle.tool_oracle import ToolOracle

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv

__all__ = [
    "EmulatedModel",
    "ModelProfile",
    "OracleAnswer",
    "OracleContext",
    "OracleJudge",
    "SimOracle",
    "ToolOracle",
    "answer_for",
    "judge_factory",
    "load_profile",
    "oracle_factories",
    "profile_names",
    "register_answer",
    "unregister_answer",
]


def oracle_factories(env: SimEnv, seed: int = 0,
                     opened: list[SimOracle] | None = None) -> dict[str, BackendFactory]:
    """The backend factories to pass to
    :func:`~agentic_env.agents.models.registry.build_backends` (``factories=``): a
    ``sim-oracle`` spec becomes a :class:`SimOracle` over ``env`` with the spec's error rates
    (and re-ask redraw probability),
    an ``emulated:PROFILE`` spec an :class:`EmulatedModel` of the packaged profile (with the
    mechanisms its ``ablate=`` names switched off, :mod:`~agentic_env.oracle.ablation`), their
    error streams seeded by ``spec.seed * 100_003 + seed``.

    Args:
        env: the simulator the oracle reads (kept private to the backend).
        seed: the episode's part of the seed (the episode seed, a rollout's hash...).
        opened: receives every oracle built, for the caller to close.
    """

    def build(spec: ModelSpec) -> SimOracle:
        oracle = SimOracle(env, spec.error_rates, seed=spec.seed * 100_003 + seed,
                           names=spec.names, reask_redraw=spec.reask_redraw)
        if opened is not None:
            opened.append(oracle)
        return oracle

    def emulate(spec: ModelSpec) -> EmulatedModel:
        assert spec.model is not None
        profile = ablated(load_profile(spec.model), spec.ablate)
        model = EmulatedModel(env, profile, seed=spec.seed * 100_003 + seed)
        if opened is not None:
            opened.append(model)
        return model

    return {SIM_ORACLE: build, EMULATED: emulate}


def judge_factory(spec: ModelSpec) -> OracleJudge:
    """A simulator-free :class:`OracleJudge` from a ``sim-oracle`` spec (its ``judge`` error
    rate and seed): the ``oracle_factory`` of :func:`agentic_env.agents.alrm.judge.build_judge`
    when no episode is at hand (dry runs, tests)."""
    return OracleJudge(spec.error_rates.get(JUDGE_MODULE, 0.0), spec.seed)
