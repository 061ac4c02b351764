"""``agentic-env`` command line: ``demo`` and ``bench`` subcommands.

Each subcommand forwards its remaining arguments to the module's own parser, so
``agentic-env demo --help`` shows the demo's options.
"""

from __future__ import annotations

import importlib
import os
import sys

#: Subcommand -> (module with ``main(argv) -> int``, one-line help).
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("agentic_env.agents.run_cli",
            "one agent episode (offline sim-oracle by default): live progress, summary, trace"),
    "bench-agent": ("agentic_env.agents.bench",
                    "AgenticLab pipeline with the sim-oracle: success per task, checker-error "
                    "ablation"),
    "bench-episode": ("agentic_env.agents.bench_episode",
                      "sim-oracle episode speed: wall/sim time per task, time per component, "
                      "video cost"),
    "demo": ("agentic_env.demo", "scripted expert on Tabletop-v0; writes a video and pictures"),
    "bench": ("agentic_env.bench", "speed and pick-success benchmark; prints and writes JSON"),
    "bench-tasks": ("agentic_env.bench_tasks",
                    "scripted expert over tasks x settings: success rate and time per cell"),
    "setup-sheet": ("agentic_env.setup_sheet",
                    "top-down layout sheet + trial spec for laying out a trial on a real table"),
    "calibrate": ("agentic_env.real.calibrate",
                  "guided ChArUco hand-eye calibration of the shoulder or wrist camera"),
    "bench-real": ("agentic_env.real.bench",
                   "observation latency through RealEnv + MuJoCo twin vs the sim env"),
    "trial": ("agentic_env.real.trial",
              "one trial spec with one agent in sim or on the real robot (or its twin)"),
    "trial-report": ("agentic_env.real.trial_report",
                     "sim and real trial results side by side, Pearson r and MMRV"),
    "collect": ("agentic_env.datasets.collect",
                "scripted-expert demonstrations at control rate -> LeRobot v3.0 dataset"),
    "check-dataset": ("agentic_env.datasets.reader",
                      "check a collected LeRobot dataset frame by frame"),
    "replay-demo": ("agentic_env.datasets.replay",
                    "open-loop replay of recorded demonstrations; fidelity report"),
    "bench-collect": ("agentic_env.datasets.bench",
                      "demonstration frames per second and MB per episode"),
    "train-rl": ("agentic_env.rl.train", "SB3 PPO/SAC baseline on a shaped reach/pick task"),
    "sweep": ("agentic_env.harness.run", "run a sweep file's episodes (resumable) into SQLite"),
    "report": ("agentic_env.harness.report", "HTML + Markdown report of a sweep database"),
    "modules": ("agentic_env.harness.module_bench",
                "module benchmark (Table II) on sim-generated, ground-truth-labelled instances"),
}


def main(argv: list[str] | None = None) -> int:
    """Dispatch to a subcommand; return its exit code."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help") or args[0] not in COMMANDS:
        lines = [f"  {name:<13}{help_text}" for name, (_, help_text) in COMMANDS.items()]
        print("usage: agentic-env {" + ",".join(COMMANDS) + "} [options]\n\ncommands:\n"
              + "\n".join(lines))
        if args and args[0] not in ("-h", "--help"):
            print(f"\nunknown command {args[0]!r}", file=sys.stderr)
            return 2
        return 0
    os.environ.setdefault("MUJOCO_GL", "egl")  # headless by default; must precede mujoco
    module_name, _ = COMMANDS[args[0]]
    return int(importlib.import_module(module_name).main(args[1:]))


if __name__ == "__main__":
    raise SystemExit(main())
