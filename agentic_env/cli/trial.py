"""``agentic-env trial``: one trial spec with one agent, in sim or on the real robot (or its
MuJoCo twin); the logic is :mod:`agentic_env.harness.trial`."""

from __future__ import annotations

import argparse
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentic_env.agents.base import agent_entry, agent_names
from agentic_env.cli.real import add_real_backend_arguments
from agentic_env.cli.run import parse_agent_options
from agentic_env.contract.trial import TrialSpec
from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.harness.db import Finished, ResultStore
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.real_events import twin_hands
from agentic_env.harness.runner import LOW_LEVEL_STEPS
from agentic_env.harness.trial import (
    BACKENDS,
    REAL_KEY_SUFFIX,
    UNSCORED,
    Ask,
    episode_spec,
    parse_yes,
    run_real_trial,
    run_sim_trial,
)
from agentic_env.real.calibration import Calibration
from agentic_env.real.hardware import real_hardware
from agentic_env.real.real_env import RealEnv

#: Who scores a real episode (``--rubric``).
RUBRICS: tuple[str, ...] = ("operator", "auto")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentic-env trial", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", type=Path, help="trial spec JSON (agentic-env setup-sheet)")
    parser.add_argument("--backend", choices=BACKENDS, required=True)
    parser.add_argument("--agent", default="agenticlab",
                        help=f"registered agent ({', '.join(agent_names())}) or module:attr")
    parser.add_argument("--model", default="sim-oracle", help="model spec (default sim-oracle)")
    parser.add_argument("--agent-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an agent switch, as for 'agentic-env run' (repeatable), e.g. "
                             "checkpoint=DIR for --agent policy")
    parser.add_argument("--verification", default="full", choices=("none", "goal", "full"))
    parser.add_argument("--max-actions", type=int, default=40)
    parser.add_argument("--db", type=Path, default=Path("runs/trials.sqlite"),
                        help="results database (default runs/trials.sqlite)")
    parser.add_argument("--out", type=Path, default=Path("runs/trial"),
                        help="setup sheet (real) or trace (sim) folder")
    parser.add_argument("--rubric", choices=RUBRICS, default="operator",
                        help="who scores a real episode: the operator (asked on stdin) or, "
                             "with --twin only, 'auto' (the twin's simulator; no questions)")
    add_real_backend_arguments(parser)
    return parser


def main(argv: list[str] | None = None, ask: Ask = input) -> int:
    """Run the command; ``ask`` answers the operator's questions (``input`` by default).

    A real episode is stored unscored before the rubric is asked and replaced by the scored
    one after it (an unanswered rubric leaves the unscored row, with the reason).
    """
    args = _parser().parse_args(argv)
    if args.rubric == "auto" and not (args.backend == "real" and args.twin):
        print("trial failed: --rubric auto needs --backend real --twin (only a simulator can "
              "answer the rubric; on hardware the operator does)")
        return 1
    replace = False
    try:
        trial = TrialSpec.load(args.spec)
        spec = episode_spec(trial, args.agent, args.model, args.max_actions, args.verification,
                            parse_agent_options(args.agent_option))
        if args.backend == "sim":
            result = run_sim_trial(trial, spec, args.out)
            key, worker = spec.key(), f"sim:{socket.gethostname()}"
        else:
            key = spec.key() + REAL_KEY_SUFFIX
            worker = "twin" if args.twin else f"real:{args.robot_host}"

            def store_unscored(unscored: EpisodeResult) -> None:
                with ResultStore(args.db) as store:
                    store.record(Finished(key, unscored, unscored.wall_s, worker), replace=True)
                print(f"stored unscored as {key} before the rubric")

            result = _run_real(args, trial, spec, ask, store_unscored)
            replace = True
    except (AgenticEnvError, OSError) as error:
        print(f"trial failed: {error}")
        return 1
    with ResultStore(args.db) as store:
        stored = store.record(Finished(key, result, result.wall_s, worker), replace=replace)
    print(f"{args.backend}: success={result.success} score={result.score:.2f} "
          f"({result.n_done} done, {result.n_extra} extra of {result.n_required}), "
          f"{result.actions} actions" + ("" if stored else " (already in the database)")
          + (f" [{result.failure_detail}]" if result.failure == UNSCORED else ""))
    return 0


def _run_real(args: argparse.Namespace, trial: TrialSpec, spec: EpisodeSpec, ask: Ask,
              store: Callable[[EpisodeResult], None]) -> EpisodeResult:
    mode = agent_entry(spec.agent).control_mode
    if mode != "primitive" and args.confirm_each_step:
        raise InvalidConfigError(f"--confirm-each-step confirms primitives; agent {spec.agent!r} "
                                 f"acts every control period ({mode}): leave it out")
    # a low-level agent's own budget ends its episode, as in simulation (harness.runner)
    modes: dict[str, Any] = {} if mode == "primitive" else {
        "control_mode": mode, "max_episode_steps": LOW_LEVEL_STEPS}
    confirm = None
    if args.confirm_each_step:
        def confirm(text: str) -> bool:
            try:
                return parse_yes(ask(f"next primitive: {text}. Run it? [y/N] "))
            except (EOFError, KeyboardInterrupt):  # no operator: the primitive is declined
                return False
    if args.twin:
        from agentic_env.real.twin import make_twin_env

        env, twin = make_twin_env(task=trial.task, trial=trial, confirm=confirm, **modes)
        return run_real_trial(trial, spec, env, ask, args.out, oracle_env=twin.world.env,
                              hands=twin_hands(env, twin), store=store,
                              rubric_world=twin.world.env if args.rubric == "auto" else None)
    if not args.robot_host:
        raise InvalidConfigError("--backend real needs --robot-host (or --twin)")
    env = RealEnv(real_hardware(args.robot_host, args.gripper_port),
                  Calibration.load(args.calibration), confirm=confirm, **modes)
    return run_real_trial(trial, spec, env, ask, args.out, store=store)
