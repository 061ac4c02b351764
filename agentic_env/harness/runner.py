"""Run one agent episode and score it: the wiring every backend shares.

:func:`run_episode` builds the sim env for an :class:`~agentic_env.harness.episode.EpisodeSpec`,
wires the models (:func:`episode_models`: the sim-oracle gets the env, real models never do),
builds the registered agent (:func:`build_agent`), runs it through an
:class:`~agentic_env.harness.robot_io.EnvRobotIO` (observations and primitive status only),
then scores the final state from privileged ground truth, and runs the episode evaluations
the agent's registration declares (:mod:`agentic_env.harness.evaluations`: e.g. ALRM's trace
judge, the truth of MALLVI's Reflector verdicts). The real-robot trial
(:mod:`agentic_env.harness.trial`) uses the same pieces with a ``RealEnv`` and the operator's
rubric in place of the simulator's score.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from agentic_env.agents.base import (
    Agent,
    AgentReport,
    AgentSetup,
    RobotStoppedError,
    TaskContext,
    agent_entry,
    make_agent,
)
from agentic_env.agents.models.base import CallRecord
from agentic_env.agents.models.budget import Budget
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelSpec, build_backends
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec, ModuleCall
from agentic_env.harness.evaluations import build_evaluations
from agentic_env.harness.interventions import kind_success, measure
from agentic_env.harness.objects import object_outcomes, start_facts
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.harness.sealed import sealed
from agentic_env.harness.trace import EpisodeTrace, call_verdict
from agentic_env.oracle import SimOracle, oracle_factories
from agentic_env.oracle.name_book import name_book, new_name_book
from agentic_env.oracle.plan_errors import errors_drawn
from agentic_env.pddl.planning import load_domain
from agentic_env.text import blank, readable


@contextmanager
def episode_models(spec: EpisodeSpec, oracle_env: SimEnv | None,
                   budget: Budget | None = None,
                   on_call: Callable[[CallRecord], None] | None = None
                   ) -> Iterator[ModuleContext]:
    """The models of ``spec`` as the agent reaches them; sim-oracles are closed on exit.

    The agent gets a router of :class:`~agentic_env.agents.models.registry.ModelHandle` s
    and ``on_call`` sealed (:func:`~agentic_env.harness.sealed.sealed`), so nothing it holds
    leads to the env. Each answered call is first shown to the episode's name book
    (:class:`~agentic_env.oracle.name_book.NameBook`), which binds the names models introduce.

    Args:
        spec: names the model specs and seeds the sim-oracle's error draws.
        oracle_env: the simulator a sim-oracle reads (the sim env, or a twin's world);
            ``None`` on hardware, where a sim-oracle spec is refused.
        budget: token/money budget of the run.
        on_call: receives every call's record.

    Raises:
        InvalidConfigError: an unknown model spec, a sim-oracle without ``oracle_env``, or
            a model assigned to a module the agent never queries.
    """
    agent_entry(spec.agent).check_modules(spec.module_models())
    oracles: list[SimOracle] = []

    def no_oracle(model: ModelSpec) -> SimOracle:
        raise InvalidConfigError(
            "the sim-oracle (and an emulated: model, built on it) reads the simulator's ground "
            "truth, which the real robot does not have: pass a real model (e.g. --model "
            "gemini/gemini-3-flash) or --twin")

    book = None if oracle_env is None else new_name_book(oracle_env)

    def observed(record: CallRecord) -> None:
        if book is not None:  # what the model named, bound while the scene is as it saw it
            book.observe(record)
        if on_call is not None:
            on_call(record)

    factories = ({"sim-oracle": no_oracle, "emulated": no_oracle} if oracle_env is None
                 else oracle_factories(oracle_env, spec.seed, oracles))
    try:
        router = build_backends(spec.model, spec.module_models(), factories=factories)
        yield ModuleContext(router, budget, sealed(observed))
    finally:
        for oracle in oracles:
            oracle.close()


#: Episode steps of an env that a low-level agent drives every control period: unbounded in
#: practice, since the agent's own step budget ends its episode.
LOW_LEVEL_STEPS = 2**62

def build_agent(spec: EpisodeSpec, models: ModuleContext,
                on_event: Callable[[dict[str, Any]], None] | None = None) -> Agent:
    """The registered agent ``spec.agent`` with ``spec``'s options, limits and seed;
    ``on_event`` reaches it sealed (:func:`~agentic_env.harness.sealed.sealed`). An agent
    with a ``check_trial(task, seed)`` method is asked before the episode whether it may run
    this trial (a policy refuses the layouts it was trained on).

    Raises:
        InvalidConfigError: an unknown agent or agent option, or a trial the agent refuses.
    """
    agent = make_agent(spec.agent, AgentSetup(
        models=models, options=spec.options(), verification=spec.verification,
        max_actions=spec.max_actions, max_replans=spec.max_replans,
        max_wall_s=spec.max_wall_s, seed=spec.seed, on_event=sealed(on_event)))
    check_trial = getattr(agent, "check_trial", None)
    if check_trial is not None:
        check_trial(spec.task, spec.seed)
    return agent


def run_agent(agent: Agent, robot_io: EnvRobotIO, instruction: str, context: TaskContext
              ) -> tuple[AgentReport, str]:
    """Run ``agent``; the report and, when the robot stopped the episode, why (else ``""``).

    An agent that lets :class:`RobotStoppedError` escape gets a report with the primitives
    ``robot_io`` counted and the failure attributed to ``execution``.
    """
    try:
        report = agent.run(robot_io, instruction, context)
    except RobotStoppedError as stop:
        report = AgentReport(actions=robot_io.actions, failure="execution",
                             failure_detail=str(stop))
    return report, robot_io.stopped


def attribute_failure(report: AgentReport, success: bool, stopped: str = "",
                      unmet: str = "the plan ran out with the goal unmet") -> tuple[str | None,
                                                                                     str]:
    """The failure source and sentence of an episode (``(None, "")`` on success).

    Args:
        report: the agent's report (its first failure wins).
        success: the task's goal holds at the end (simulator or operator).
        stopped: why the robot stopped the episode, ``""`` if it did not (then
            ``execution`` is blamed).
        unmet: the sentence when nothing more specific is known.
    """
    if success:
        return None, ""
    if stopped:
        return "execution", stopped
    if report.failure:
        return report.failure, report.failure_detail
    if report.believes_done and report.goal_checked:
        return "goal", "the goal checker accepted a state that misses the goal"
    return "execution", unmet


def episode_result(spec: EpisodeSpec, report: AgentReport, calls: list[CallRecord], *,
                   success: bool, progress: float, score: tuple[float, int, int, int],
                   goal_checker_error: bool, failure: tuple[str | None, str], wall_s: float,
                   sim_s: float, trace_dir: str | None = None) -> EpisodeResult:
    """Assemble the result of an episode.

    Args:
        score: progress score, actions done, extra actions, actions required.
        failure: source and sentence (:func:`attribute_failure`).
        wall_s: wall time, seconds. sim_s: simulated (or robot) time, seconds.
    """
    costs = [c.usage.cost_usd for c in calls]
    return EpisodeResult(
        spec=spec, success=success, progress=progress, score=score[0], n_done=score[1],
        n_extra=score[2], n_required=score[3], goal_checker_error=goal_checker_error,
        actions=report.actions, replans=report.replans, wall_s=wall_s, sim_s=sim_s,
        input_tokens=sum(c.usage.input_tokens for c in calls),
        output_tokens=sum(c.usage.output_tokens for c in calls),
        cost_usd=None if any(c is None for c in costs) and calls else float(
            sum(c or 0.0 for c in costs)),
        failure=failure[0], failure_detail=failure[1],
        calls=tuple(call_summary(c) for c in calls),
        trace_dir=trace_dir)


def call_summary(record: CallRecord) -> ModuleCall:
    """One model call as the results database stores it (its ``truth`` is set by the
    ``call-truth`` evaluation, see :class:`ModuleCall`)."""
    usage = record.usage
    return ModuleCall(record.query.module, record.model, usage.latency_s, usage.input_tokens,
                      usage.output_tokens, usage.cost_usd,
                      record.reply.attempts if record.reply else len(record.raw_texts),
                      call_verdict(record), record.error)


def run_episode(spec: EpisodeSpec, *, trace_root: Path | None = None,
                on_event: Callable[[str], None] | None = None, video: bool = True,
                budget: Budget | None = None,
                on_agent_event: Callable[[SimEnv, dict[str, Any]], None] | None = None
                ) -> EpisodeResult:
    """Run ``spec`` in the simulator and score it.

    Args:
        spec: the episode.
        trace_root: write the trace to ``trace_root/<spec key>/``; ``None`` = no trace.
        on_event: receives a one-line description of each decision as it happens.
        video: record ``video.mp4`` in the trace (ignored without a trace).
        budget: token/money budget of the run (shared across episodes if the caller wants).
        on_agent_event: privileged harness hook: each agent decision (a copy) with the env
            in the state it was made in (e.g. to score a verdict against the truth).

    Raises:
        InvalidConfigError: unknown agent, agent option, task or model spec.
        MissingAPIKeyError: a real model's API key is not set.
    """
    start = time.perf_counter()
    evaluations = build_evaluations(agent_entry(spec.agent).evaluations, spec)
    control_mode = agent_entry(spec.agent).control_mode
    env = SimEnv(task=spec.task, setting=spec.setting, control_mode=control_mode,
                 realism=spec.realism, world_effects=spec.world_effects,
                 max_episode_steps=None if control_mode == "primitive" else LOW_LEVEL_STEPS)
    calls: list[CallRecord] = []
    trace: EpisodeTrace | None = None

    def on_call(record: CallRecord) -> None:
        for evaluation in evaluations:  # on the state the call judged
            evaluation.on_call(env, len(calls), record)
        calls.append(record)
        if trace is not None:
            trace.on_call(record)

    def event(data: dict[str, Any]) -> None:
        if trace is not None:
            trace.on_event(data)
        if on_event is not None:
            on_event(_describe_event(data))
        if on_agent_event is not None:
            on_agent_event(env, dict(data))

    try:
        with episode_models(spec, env, budget, on_call) as models:
            agent = build_agent(spec, models, event)
            options: dict[str, Any] = {"disturbances": spec.disturbance_dicts(),
                                       "events": spec.event_dicts(), "kind": spec.kind}
            if spec.instruction_category is not None:
                options["instruction_category"] = spec.instruction_category
            obs, info = env.reset(seed=spec.seed, options=options)
            facts_at_start = start_facts(env.task, env.scene_state)
            for evaluation in evaluations:
                evaluation.start(env, info["instruction"])
            if trace_root is not None:
                trace = _start_trace(env, Path(trace_root) / spec.key(), video)
                trace.on_observation(obs)
            robot = EnvRobotIO(env, trace.on_observation if trace is not None else None)
            report, stopped = run_agent(agent, robot, info["instruction"],
                                        TaskContext(load_domain(env.task.domain),
                                                    spec.task))
        result = _score(spec, env, report, stopped, calls, time.perf_counter() - start,
                        str(trace.folder) if trace else None, robot.actions, facts_at_start)
        for evaluation in evaluations:
            result = evaluation.finish(result, report)
        if trace is not None:
            trace.finish({"title": f"{spec.task} / {spec.setting} / {spec.agent} / "
                                   f"{spec.model} / seed {spec.seed}",
                          "instruction": info["instruction"], "trial": env.trial.to_dict(),
                          "result": result.to_dict(), "report": asdict(report),
                          "names": name_book(env).summary(),
                          "plan_errors": errors_drawn(env)})
        return result
    finally:
        if trace is not None and trace.video is not None:
            trace.video.close()  # after a crash: stop its thread and ffmpeg
        env.close()


def _start_trace(env: SimEnv, folder: Path, video: bool) -> EpisodeTrace:
    trace = EpisodeTrace(folder)
    if video:
        recorder = trace.record_video(env.model, tuple(c.name for c in env.cameras))
        env.add_control_listener(lambda e: recorder.sample(e.data))
    return trace


def _score(spec: EpisodeSpec, env: SimEnv, report: AgentReport, stopped: str,
           calls: list[CallRecord], wall_s: float, trace_dir: str | None,
           motions: int, facts_at_start: frozenset[str] | None = None) -> EpisodeResult:
    """The episode's result from the final state; with the task's facts at the start, the
    per-object outcomes (:mod:`agentic_env.harness.objects`) of a trial that asks to act."""
    evaluation = env.task.evaluate(env.scene_state)
    schedule = env.schedule
    expect = schedule.variant.expect if schedule.variant else "act"
    success = kind_success(expect, evaluation.success, report, motions)
    goal_checker_error = (expect == "act" and report.goal_checked
                          and report.believes_done != evaluation.success)
    score = env.episode_score(goal_checker_error)
    counts = ((float(evaluation.success), 0, 0, 0) if score is None  # no reference: success
              else (score.score, score.n_done, score.n_extra, score.n_required))
    result = episode_result(
        spec, report, calls, success=success, progress=evaluation.progress,
        score=counts, goal_checker_error=goal_checker_error,
        failure=attribute_failure(report, success, stopped), wall_s=wall_s,
        sim_s=float(env.data.time), trace_dir=trace_dir)
    if expect == "act":
        result = replace(result, objects=object_outcomes(env.task, env.scene_state,
                                                         facts_at_start, evaluation))
    if spec.kind == "task" and not schedule.runner.specs:
        return result
    return replace(result, intervention=measure(
        spec.kind, expect, schedule.runner.applied, schedule.runner.refused, report, motions))


def _describe_event(event: dict[str, Any]) -> str:
    """One line for the live progress display: every field that says something (not
    :func:`~agentic_env.text.blank`), as people read it (:func:`~agentic_env.text.readable`:
    positions in metres to the millimetre), at most 200 characters."""
    kind = event["kind"]
    text = ", ".join(f"{k}={readable(v)}" for k, v in event.items()
                     if k not in ("kind", "t", "reasoning", "objects") and not blank(v))
    return f"[{event.get('t', 0):7.1f}s] {kind:<18} {text}"[:200]
