"""Tool episodes on each backend: the simulator, the real robot's MuJoCo twin, the real robot.

* ``sim``: a :class:`~agentic_env.envs.sim_env.SimEnv` reset to the seed's trial, judged by
  its own ground truth.
* ``real`` with ``twin=True``: a :class:`~agentic_env.real.real_env.RealEnv` (safety layer and
  ``confirm`` unchanged) on the MuJoCo twin drivers, judged by the twin's world.
* ``real`` on hardware: the same ``RealEnv`` on the cell's drivers; the operator lays out the
  seed's trial first and scores the end state with the task rubric (:class:`OperatorJudge`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.harness.tools.episode import Judge, SimJudge, ToolEpisode, Verdict

if TYPE_CHECKING:
    from agentic_env.agents.models.context import ModuleContext
    from agentic_env.contract.trial import TrialSpec
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.pddl.planning import PlanStep

BACKENDS: tuple[str, ...] = ("sim", "real")
#: Asks the operator a question and returns the answer (real backend).
Ask = Callable[[str], str]


@dataclass(frozen=True)
class RealOptions:
    """How to reach the real robot.

    Attributes:
        twin: use the MuJoCo twin drivers (no hardware).
        robot_host: UR controller address (hardware).
        gripper_port: gripper serial port (hardware).
        calibration: camera calibration file (hardware).
        confirm_each_step: ask the operator before every primitive.
    """

    twin: bool = False
    robot_host: str | None = None
    gripper_port: str = "/dev/ttyACM0"
    calibration: Path = Path("calibration.json")
    confirm_each_step: bool = False


def _yes(answer: str) -> bool:
    return answer.strip().lower() in ("y", "yes")


class OperatorJudge:
    """Scores a hardware episode with the operator's rubric answers (as ``agentic-env trial``).

    Args:
        reference: the required PDDL steps of the trial (from the simulator's reference plan).
        ask: asks the operator.
    """

    def __init__(self, reference: list[PlanStep], ask: Ask) -> None:
        self._reference = reference
        self._ask = ask

    def after_action(self) -> None:
        """Nothing to follow: the operator judges at the end."""

    def verdict(self, claimed_success: bool | None) -> Verdict:
        """Ask the rubric questions and score the answers; an unanswered rubric (end of
        input, an interrupt, no number after bounded re-asks) leaves the episode unscored."""
        from agentic_env.harness.trial import RubricUnansweredError, ask_rubric, rubric_score

        try:
            answers = ask_rubric(self._reference, None, self._ask)
        except RubricUnansweredError as error:
            return Verdict(False, 0.0, 0.0, n_required=len(self._reference),
                           unscored=str(error))
        wrong_claim = claimed_success is not None and claimed_success != answers.success
        score = rubric_score(answers, self._reference, wrong_claim)
        return Verdict(answers.success, score.n_done / score.n_required if score.n_required
                       else float(answers.success), score.score, score.n_done, score.n_extra,
                       score.n_required)


def open_episode(spec: EpisodeSpec, tool_set: str = "primitives", backend: str = "sim",
                 real: RealOptions | None = None, ask: Ask | None = None,
                 perception: str | None = None) -> ToolEpisode:
    """Build and reset the env of ``spec`` on ``backend`` and wrap it as a tool episode.

    Args:
        spec: task, setting, seed, max_actions, realism (of the simulated world; agent and
            model label the database row).
        tool_set: tools to expose.
        backend: ``sim`` or ``real``.
        real: real-robot options (``backend="real"``).
        ask: asks the operator (hardware layout, confirmations, rubric); required on hardware.
        perception: model spec answering the model queries of the tools themselves (the
            ``alrm`` set lists and locates objects through a ``detector``), e.g.
            ``sim-oracle`` (reads the simulator, or the twin's world); ``None``: the tools
            get no model, and such tools find nothing.

    Raises:
        InvalidConfigError: unknown backend, tool set or perception model spec (a
            sim-oracle on hardware), or hardware without a robot host or an ``ask``.
    """
    from agentic_env.envs.sim_env import SimEnv

    if backend not in BACKENDS:
        raise InvalidConfigError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    env = SimEnv(task=spec.task, setting=spec.setting, realism=spec.realism,
                 world_effects=spec.world_effects)
    try:
        _obs, info = env.reset(seed=spec.seed)
        if backend == "sim":
            stack = ExitStack()
            stack.callback(env.close)
            models = _perception_models(spec, perception, env, stack)
            return ToolEpisode(spec, EnvRobotIO(env), info["instruction"], SimJudge(env),
                               tool_set, close=stack.close, models=models)
        trial, reference = env.trial, SimJudge(env).reference()
    except BaseException:
        env.close()
        raise
    env.close()
    assert trial is not None  # reset sets it
    return _real_episode(spec, tool_set, trial, reference, real or RealOptions(), ask,
                         perception)


def _perception_models(spec: EpisodeSpec, perception: str | None, oracle_env: SimEnv | None,
                       stack: ExitStack) -> ModuleContext | None:
    """The tools' models (see :func:`open_episode`), closed with ``stack``."""
    if perception is None:
        return None
    from agentic_env.harness.runner import episode_models

    return stack.enter_context(episode_models(replace(spec, model=perception, modules=()),
                                              oracle_env))


def _real_episode(spec: EpisodeSpec, tool_set: str, trial: TrialSpec,
                  reference: list[PlanStep], options: RealOptions, ask: Ask | None,
                  perception: str | None) -> ToolEpisode:
    confirm = None
    if options.confirm_each_step:
        if ask is None:
            raise InvalidConfigError("--confirm-each-step needs a terminal to ask on")
        operator = ask

        def confirm(text: str) -> bool:
            return _yes(operator(f"next primitive: {text}. Run it? [y/N] "))

    if options.twin:
        from agentic_env.real.twin import make_twin_env

        env, twin = make_twin_env(task=spec.task, trial=trial, confirm=confirm)
        judge: Judge = SimJudge(twin.world.env)
    else:
        from agentic_env.real.calibration import Calibration
        from agentic_env.real.hardware import real_hardware
        from agentic_env.real.real_env import RealEnv

        if not options.robot_host or ask is None:
            raise InvalidConfigError("the real backend needs --robot-host and a terminal for "
                                     "the operator (or --twin)")
        ask(f"Lay out the table for trial seed {spec.seed} (agentic-env setup-sheet --task "
            f"{spec.task} --seed {spec.seed}), clear the cell, then press Enter: ")
        env = RealEnv(real_hardware(options.robot_host, options.gripper_port),
                      Calibration.load(options.calibration), confirm=confirm)
        judge = OperatorJudge(reference, ask)
    try:
        _obs, info = env.reset(options={"trial": trial})
    except BaseException:
        env.close()
        raise
    if isinstance(judge, SimJudge):
        judge = SimJudge(judge.env)  # follow the steps from the state after homing
    stack = ExitStack()
    stack.callback(env.close)
    try:
        models = _perception_models(spec, perception,
                                    judge.env if isinstance(judge, SimJudge) else None, stack)
    except BaseException:
        stack.close()
        raise
    return ToolEpisode(spec, EnvRobotIO(env), info["instruction"], judge, tool_set,
                       close=stack.close, models=models)
