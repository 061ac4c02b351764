"""``agentic-env trial``: one trial spec with one agent, in sim or on the real robot.

``--backend sim`` runs the episode with :func:`agentic_env.harness.runner.run_episode` (the
trial must be the one its seed generates, as ``agentic-env setup-sheet --seed`` writes it)
and scores it from the simulator. ``--backend real`` runs the same agent code on a
:class:`~agentic_env.real.real_env.RealEnv`:

1. it draws the setup sheet of the trial and waits for the operator to lay out the table;
2. it runs the agent through the env (``--confirm-each-step`` asks before every primitive;
   a safety fault or a declined primitive ends the episode with the arm stopped);
3. it hands the episode, still unscored (failure ``unscored``), to be stored, then asks the
   operator to score with the task rubric: did the task succeed, which actions of the
   required sequence were done, how many actions were redundant or wrong. The progress
   score is then computed by the same :func:`agentic_env.tasks.score.progress_score` as in
   sim, the goal-checker penalty from the operator's success verdict and the agent's own goal
   check. No answer (end of input, an interrupt, :data:`RUBRIC_TRIES` answers that are not
   a number) leaves the episode unscored, never lost. On the twin, the rubric can instead
   be answered by the simulator (``--rubric auto``: the twin's world is followed after every
   observation and its executed steps answer the questions), so a paired trial runs
   unattended.

Both write to the same results database (``--db``): the sim episode under its spec key, the
real one under the key plus ``:real``; ``agentic-env trial-report`` lines them up. ``--twin``
runs the real backend on the MuJoCo twins (no hardware; the sim-oracle then reads the twin's
world, which plays the real cell).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from agentic_env.agents.base import AgentReport, TaskContext, agent_entry
from agentic_env.agents.models.base import CallRecord
from agentic_env.contract.events import parse_events
from agentic_env.contract.trial import TrialSpec
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.harness.episode import UNSCORED, EpisodeResult, EpisodeSpec, freeze_events
from agentic_env.harness.interventions import kind_success, measure
from agentic_env.harness.real_events import ScheduledRealEnv, operator_hands
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.harness.runner import (
    attribute_failure,
    build_agent,
    episode_models,
    episode_result,
    run_agent,
    run_episode,
)
from agentic_env.harness.setup_sheet import render_setup_sheet
from agentic_env.pddl.planning import PlanStep, load_domain
from agentic_env.real.real_env import RealEnv
from agentic_env.real.safety import SafetyFaultError
from agentic_env.sim.events import Hands
from agentic_env.tasks.score import ProgressScore, progress_score
from agentic_env.tasks.symbolic import EpisodeScorer

BACKENDS: tuple[str, ...] = ("sim", "real")
#: Suffix of the results-database key of a real (or twin) episode.
REAL_KEY_SUFFIX = ":real"
#: ``ask(prompt) -> answer``: how the operator is asked (``input`` on a terminal).
Ask = Callable[[str], str]
#: Answers the operator may give to the rubric's number question before it counts as none.
RUBRIC_TRIES = 3


class RubricUnansweredError(AgenticEnvError, RuntimeError):
    """The operator gave no usable rubric answer (end of input, interrupt, no number)."""


@dataclass(frozen=True)
class RubricAnswers:
    """The operator's scoring of a real episode.

    Attributes:
        success: the task's goal holds at the end.
        done: per action of the required sequence, whether the robot did it.
        n_extra: actions that were redundant or wrong.
    """

    success: bool
    done: tuple[bool, ...]
    n_extra: int


def rubric_score(answers: RubricAnswers, reference: list[PlanStep],
                 goal_checker_error: bool) -> ProgressScore:
    """The progress score of the operator's answers, by the sim's own formula."""
    if len(answers.done) != len(reference):
        raise InvalidConfigError(f"the rubric needs one answer per required action "
                                 f"({len(reference)}); got {len(answers.done)}")
    executed = [step for step, done in zip(reference, answers.done, strict=True) if done]
    executed += [PlanStep("extra-action", (str(i),)) for i in range(answers.n_extra)]
    return progress_score(executed, reference, goal_checker_error)


def ask_rubric(reference: list[PlanStep], report: AgentReport | None, ask: Ask
               ) -> RubricAnswers:
    """Ask the operator the rubric questions (the robot's primitives are listed first, when
    ``report`` has them).

    Raises:
        RubricUnansweredError: the input ended or was interrupted, or the number question
            got :data:`RUBRIC_TRIES` answers that are not a number in [0, 99].
    """
    if report is not None:
        primitives = [e for e in report.events if e["kind"] == "primitive"]
        lines = [f"  {i + 1}. {e['primitive']} ({'ok' if e['ok'] else e['reason']}): "
                 f"{e['why']}" for i, e in enumerate(primitives)]
        print("The robot executed:\n" + ("\n".join(lines) or "  nothing"))
    try:
        success = parse_yes(ask("Does the table now satisfy the instruction? [y/n] "))
        done = tuple(parse_yes(ask(f"Required action {i + 1}/{len(reference)}: {step} - "
                                   "done? [y/n] ")) for i, step in enumerate(reference))
        for _ in range(RUBRIC_TRIES):
            text = ask("How many executed actions were redundant or wrong? [0-99] ").strip()
            if text.isdigit() and int(text) <= 99:
                return RubricAnswers(success, done, int(text))
    except EOFError:
        raise RubricUnansweredError("the rubric's input ended before it was answered") from None
    except KeyboardInterrupt:
        raise RubricUnansweredError("the rubric was interrupted") from None
    raise RubricUnansweredError(f"{RUBRIC_TRIES} answers to the number question were not a "
                                "number in [0, 99]")


def sim_rubric(world: SimEnv, executed: list[PlanStep], reference: list[PlanStep]
               ) -> RubricAnswers:
    """The rubric as a simulator answers it: the goal from ``world``'s end state, a
    required action done when ``executed`` holds it (each executed step counts once), the
    other executed steps extra."""
    left = list(executed)
    done = []
    for step in reference:
        done.append(step in left)
        if done[-1]:
            left.remove(step)
    return RubricAnswers(world.task.evaluate(world.scene_state).success, tuple(done), len(left))


def parse_yes(answer: str) -> bool:
    """Whether an operator's answer means yes (``y`` or ``yes``, any case)."""
    return answer.strip().lower() in ("y", "yes")


def reference_env(trial: TrialSpec) -> SimEnv:
    """A sim env reset to ``trial`` (for the setup sheet and the reference plan)."""
    env = SimEnv(task=trial.task, setting=trial.setting, realism=trial.realism)
    env.reset(options={"trial": trial})
    return env


def episode_spec(trial: TrialSpec, agent: str, model: str, max_actions: int,
                 verification: str, agent_options: Mapping[str, Any] | None = None
                 ) -> EpisodeSpec:
    """The episode spec of ``trial`` (its task, setting, seed, disturbances, trial kind and
    events beyond the kind's own) for ``agent`` with its ``agent_options``."""
    kind = str(trial.variant.get("kind", "task")) if trial.variant else "task"
    return EpisodeSpec(
        task=trial.task, setting=trial.setting, seed=trial.seed, agent=agent, model=model,
        verification=verification, max_actions=max_actions,
        agent_options=tuple(sorted((agent_options or {}).items())),
        instruction_category=trial.instruction_category,
        disturbances=tuple(tuple(sorted(d.items())) for d in trial.disturbances),
        kind=kind, events=freeze_events(() if trial.variant else trial.events),
        realism=trial.realism)


def run_sim_trial(trial: TrialSpec, spec: EpisodeSpec, trace_root: Path | None = None
                  ) -> EpisodeResult:
    """Run ``spec`` with the runner after checking that its seed rebuilds ``trial``.

    Raises:
        InvalidConfigError: if the seed generates another layout or instruction.
    """
    env = SimEnv(task=trial.task, setting=trial.setting, realism=trial.realism)
    try:
        options = {"instruction_category": trial.instruction_category, "kind": spec.kind,
                   "events": spec.event_dicts()}

        env.reset(seed=trial.seed, options=options)
        generated = env.trial
    finally:
        env.close()
    same = (generated.instruction == trial.instruction and len(generated.objects) ==
            len(trial.objects) and all(
                a.name == b.name and np.allclose(a.position, b.position, atol=1e-6)
                for a, b in zip(generated.objects, trial.objects, strict=True)))
    if not same:
        raise InvalidConfigError(
            "the sim backend runs trials by seed and this spec is not the one seed "
            f"{trial.seed} generates; make it with `agentic-env setup-sheet --task {trial.task} "
            f"--seed {trial.seed}`")
    return run_episode(spec, trace_root=trace_root, video=trace_root is not None)


def run_real_trial(trial: TrialSpec, spec: EpisodeSpec, env: RealEnv, ask: Ask,
                   sheet_dir: Path, oracle_env: SimEnv | None = None,
                   on_event: Callable[[str], None] | None = None,
                   hands: Hands | None = None,
                   store: Callable[[EpisodeResult], None] | None = None,
                   rubric_world: SimEnv | None = None) -> EpisodeResult:
    """Setup sheet, operator layout, agent run on ``env``, rubric (module docstring).

    Args:
        oracle_env: the simulator the sim-oracle may read (the twin's world); ``None`` on
            hardware, where only real models can run.
        hands: who carries out the trial's scheduled events (:func:`~agentic_env.harness.
            real_events.twin_hands` on the twin); default: the operator, asked.
        store: receives the episode, unscored (failure :data:`UNSCORED`), before the rubric
            is asked, so an unanswered rubric loses nothing.
        rubric_world: a simulator playing the real cell (the twin's world): it answers the
            rubric (:func:`sim_rubric`) and the operator is asked nothing about the table.

    Returns:
        The scored episode, or the unscored one (its detail says why) when the rubric went
        unanswered.

    Raises:
        RubricUnansweredError: the input ended before the table was laid out.
    """
    agent_entry(spec.agent)  # an unknown agent fails before the operator lays out a table
    start = time.perf_counter()
    reference_sim = reference_env(trial)
    try:
        sheet_dir.mkdir(parents=True, exist_ok=True)
        Image.fromarray(render_setup_sheet(reference_sim)).save(sheet_dir / "setup_sheet.png")
        trial.save(sheet_dir / "trial.json")
        reference = EpisodeScorer(reference_sim.task, reference_sim.scene_state).reference()
        domain = load_domain(reference_sim.task.domain)
    finally:
        reference_sim.close()
    print(f"Setup sheet: {sheet_dir / 'setup_sheet.png'}\nInstruction: {trial.instruction}")
    if rubric_world is None:
        try:
            ask("Lay out the table as on the setup sheet, clear the cell, then press Enter: ")
        except (EOFError, KeyboardInterrupt):
            raise RubricUnansweredError("no operator confirmed the layout; nothing ran") from None
    executed: list[PlanStep] = []
    calls: list[CallRecord] = []
    with episode_models(spec, oracle_env, on_call=calls.append) as models:
        agent = build_agent(spec, models, (lambda e: on_event(str(e))) if on_event else None)
        with env:
            env.reset(options={"trial": trial})
            robot_start = env.robot.time
            scheduled = ScheduledRealEnv(env, list(parse_events(list(trial.events))),
                                         hands or operator_hands(env, ask))
            robot_io = EnvRobotIO(scheduled if trial.events else env,
                                  None if rubric_world is None else _follow(rubric_world,
                                                                            executed))
            try:
                report, stopped = run_agent(agent, robot_io, trial.instruction,
                                            TaskContext(domain, trial.task))
            except SafetyFaultError as fault:  # raised by an observation
                report = AgentReport(actions=robot_io.actions, failure="execution",
                                     failure_detail=str(fault))
                stopped = str(fault)
            robot_time = env.robot.time - robot_start
    unscored = episode_result(
        spec, report, calls, success=False, progress=0.0, score=(0.0, 0, 0, len(reference)),
        goal_checker_error=False,
        failure=(UNSCORED, "stored before the rubric was answered"),
        wall_s=time.perf_counter() - start, sim_s=robot_time)
    if store is not None:
        store(unscored)
    try:
        answers = (ask_rubric(reference, report, ask) if rubric_world is None
                   else sim_rubric(rubric_world, executed, reference))
    except RubricUnansweredError as error:
        return replace(unscored, failure_detail=f"unscored: {error}")
    expect = str(trial.variant.get("expect", "act"))
    success = kind_success(expect, answers.success, report, robot_io.actions)
    goal_checker_error = (expect == "act" and report.goal_checked
                          and report.believes_done != answers.success)
    score = rubric_score(answers, reference, goal_checker_error)
    result = episode_result(
        spec, report, calls, success=success,
        progress=score.n_done / score.n_required if score.n_required else float(answers.success),
        score=(score.score, score.n_done, score.n_extra, score.n_required),
        goal_checker_error=goal_checker_error,
        failure=attribute_failure(report, success, stopped,
                                  unmet="the operator judged the goal unmet"),
        wall_s=time.perf_counter() - start, sim_s=robot_time)
    if not trial.events and not trial.variant:
        return result
    return replace(result, intervention=measure(
        str(trial.variant.get("kind", "task")), expect, scheduled.runner.applied,
        scheduled.runner.refused, report, robot_io.actions))




def _follow(world: SimEnv, executed: list[PlanStep]) -> Callable[[dict[str, np.ndarray]], None]:
    """An observation hook appending to ``executed`` each PDDL step ``world`` went through
    (its facts compared after every observation, from the state it has now)."""
    scorer = EpisodeScorer(world.task, world.scene_state)

    def follow(_observation: dict[str, np.ndarray]) -> None:
        step = scorer.record(world.scene_state)
        if step is not None:
            executed.append(step)

    return follow
