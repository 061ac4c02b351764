"""Run one agent episode in the simulator and score it: the harness's unit of work.

:func:`run_episode` builds the env for an :class:`~agentic_env.agents.episode.EpisodeSpec`,
wires the models (the sim-oracle gets the env; real models never do), runs the agent through
:class:`SimRobotIO` (observations and primitive status only), then scores the final state
from privileged ground truth and returns an :class:`~agentic_env.agents.episode.EpisodeResult`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from agentic_env.agents.agenticlab.modules import ModuleContext
from agentic_env.agents.agenticlab.pipeline import AgentConfig, AgenticLabAgent, AgentReport
from agentic_env.agents.episode import EpisodeResult, EpisodeSpec, ModuleCall
from agentic_env.agents.models.base import CallRecord
from agentic_env.agents.models.budget import Budget
from agentic_env.agents.models.oracle import SimOracle
from agentic_env.agents.models.registry import ModelSpec, build_backends
from agentic_env.agents.trace import EpisodeTrace, call_verdict
from agentic_env.contract import Workspace
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.planning import PlanNotFoundError, load_domain

#: Agents :func:`run_episode` can run.
AGENTS: tuple[str, ...] = ("agenticlab",)


class SimRobotIO:
    """The agent's view of a :class:`SimEnv`: observations and primitive status reports.

    Privileged ``info`` stays here (for scoring); the agent gets ``info["primitive"]`` only,
    which a real robot reports too. ``on_observation`` sees every observation the agent gets
    (the trace shows them).
    """

    def __init__(self, env: SimEnv,
                 on_observation: Callable[[dict[str, np.ndarray]], None] | None = None) -> None:
        self._env = env
        self._on_observation = on_observation
        self.workspace: Workspace = env.primitive_config.workspace
        self.last_info: dict[str, Any] = {}

    def observe(self) -> dict[str, np.ndarray]:
        """A fresh observation."""
        return self._seen(self._env.observe())

    def act(self, action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Run one primitive; the observation after it and its status report."""
        obs, _reward, _terminated, _truncated, info = self._env.step(action)
        self.last_info = info
        return self._seen(obs), dict(info.get("primitive", {}))

    def _seen(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if self._on_observation is not None:
            self._on_observation(obs)
        return obs


def _call_summary(record: CallRecord) -> ModuleCall:
    usage = record.usage
    return ModuleCall(record.query.module, record.model, usage.latency_s, usage.input_tokens,
                      usage.output_tokens, usage.cost_usd,
                      record.reply.attempts if record.reply else len(record.raw_texts),
                      call_verdict(record), record.error)


def run_episode(spec: EpisodeSpec, *, trace_root: Path | None = None,
                on_event: Callable[[str], None] | None = None, video: bool = True,
                budget: Budget | None = None) -> EpisodeResult:
    """Run ``spec`` in the simulator and score it.

    Args:
        spec: the episode.
        trace_root: write the trace to ``trace_root/<spec key>/``; ``None`` = no trace.
        on_event: receives a one-line description of each decision as it happens.
        video: record ``video.mp4`` in the trace (ignored without a trace).
        budget: token/money budget of the run (shared across episodes if the caller wants).

    Raises:
        InvalidConfigError: unknown agent, task or model spec.
        MissingAPIKeyError: a real model's API key is not set.
    """
    if spec.agent not in AGENTS:
        raise InvalidConfigError(f"unknown agent {spec.agent!r}; valid: {', '.join(AGENTS)}")
    start = time.perf_counter()
    env = SimEnv(task=spec.task, setting=spec.setting)
    oracles: list[SimOracle] = []
    trace: EpisodeTrace | None = None

    def make_oracle(model: ModelSpec) -> SimOracle:
        oracle = SimOracle(env, model.error_rates, seed=model.seed * 100_003 + spec.seed)
        oracles.append(oracle)
        return oracle

    try:
        router = build_backends(spec.model, spec.module_models(), oracle_factory=make_oracle)
        options: dict[str, Any] = {"disturbances": spec.disturbance_dicts()}
        if spec.instruction_category is not None:
            options["instruction_category"] = spec.instruction_category
        obs, info = env.reset(seed=spec.seed, options=options)
        if trace_root is not None:
            trace = EpisodeTrace(Path(trace_root) / spec.key())
            if video:
                recorder = trace.record_video(env.model, tuple(c.name for c in env.cameras))
                env.add_control_listener(lambda e: recorder.sample(e.data))
            trace.on_observation(obs)
        calls: list[CallRecord] = []

        def on_call(record: CallRecord) -> None:
            calls.append(record)
            if trace is not None:
                trace.on_call(record)

        def event(data: dict[str, Any]) -> None:
            if trace is not None:
                trace.on_event(data)
            if on_event is not None:
                on_event(_describe_event(data))

        config = AgentConfig(verification=spec.verification, max_actions=spec.max_actions,
                             max_replans=spec.max_replans, max_wall_s=spec.max_wall_s,
                             seed=spec.seed)
        agent = AgenticLabAgent(ModuleContext(router, budget, on_call), config, event)
        robot = SimRobotIO(env, trace.on_observation if trace is not None else None)
        report = agent.run(robot, info["instruction"], load_domain(env.task.domain))
        result = _score(spec, env, report, calls, time.perf_counter() - start,
                        str(trace.folder) if trace else None)
        if trace is not None:
            trace.finish({"title": f"{spec.task} / {spec.setting} / {spec.agent} / "
                                   f"{spec.model} / seed {spec.seed}",
                          "instruction": info["instruction"], "trial": env.trial.to_dict(),
                          "result": result.to_dict(), "report": asdict(report)})
        return result
    finally:
        if trace is not None and trace.video is not None:
            trace.video.close()  # after a crash: stop its thread and ffmpeg
        for oracle in oracles:
            oracle.close()
        env.close()


def _score(spec: EpisodeSpec, env: SimEnv, report: AgentReport, calls: list[CallRecord],
           wall_s: float, trace_dir: str | None) -> EpisodeResult:
    evaluation = env.task.evaluate(env.scene_state)
    goal_checker_error = report.goal_checked and report.believes_done != evaluation.success
    try:
        score = env.progress_score(goal_checker_error)
        counts = (score.score, score.n_done, score.n_extra, score.n_required)
    except PlanNotFoundError:
        counts = (float(evaluation.success), 0, 0, 0)
    failure, detail = None, ""
    if not evaluation.success:
        failure = report.failure or ("goal" if report.believes_done and report.goal_checked
                                     else "execution")
        detail = report.failure_detail or (
            "the goal checker accepted a state that misses the goal"
            if failure == "goal" else "the plan ran out with the goal unmet")
    costs = [c.usage.cost_usd for c in calls]
    return EpisodeResult(
        spec=spec, success=evaluation.success, progress=evaluation.progress,
        score=counts[0], n_done=counts[1], n_extra=counts[2], n_required=counts[3],
        goal_checker_error=goal_checker_error, actions=report.actions,
        replans=report.replans, wall_s=wall_s, sim_s=float(env.data.time),
        input_tokens=sum(c.usage.input_tokens for c in calls),
        output_tokens=sum(c.usage.output_tokens for c in calls),
        cost_usd=None if any(c is None for c in costs) and calls else float(
            sum(c or 0.0 for c in costs)),
        failure=failure, failure_detail=detail,
        calls=tuple(_call_summary(c) for c in calls), trace_dir=trace_dir)


def _describe_event(event: dict[str, Any]) -> str:
    """One line for the live progress display."""
    kind = event["kind"]
    details = {k: v for k, v in event.items() if k not in ("kind", "t", "reasoning",
                                                            "objects")}
    text = ", ".join(f"{k}={v}" for k, v in details.items())
    return f"[{event.get('t', 0):7.1f}s] {kind:<18} {text}"[:200]
