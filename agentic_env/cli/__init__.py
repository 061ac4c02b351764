"""``agentic-env`` command line: one entry point, a subcommand per tool.

Each subcommand forwards its remaining arguments to its own parser, so
``agentic-env demo --help`` shows the demo's options. The commands live in this package,
one module per group (``datasets``, ``harness``, ``real``, ``rl``, ...) and the benchmarks'
commands under :mod:`agentic_env.cli.bench` (their measurements are :mod:`agentic_env.bench`'s);
the library modules they drive hold no argument parsing.
"""

from __future__ import annotations

import importlib
import os
import sys

#: Subcommand -> (``"module:function"``, a ``main(argv) -> int``; one-line help).
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("agentic_env.cli.run:main",
            "one agent episode (offline sim-oracle by default): live progress, summary, trace"),
    "serve": ("agentic_env.cli.serve:main",
              "one episode as an MCP server (tools + camera/instruction resources), scored "
              "into SQLite"),
    "bench-episode": ("agentic_env.cli.bench.episode:main",
                      "sim-oracle agent episodes: wall vs simulated time per task, time per "
                      "component, trace-video cost per setting"),
    "bench-tools": ("agentic_env.cli.bench.tools:main",
                    "overhead of one tool call through MCP (stdio, HTTP) vs in-process, ms"),
    "bench-agent": ("agentic_env.cli.bench.agent:main",
                    "AgenticLab pipeline with the sim-oracle: success per task, checker-error "
                    "ablation"),
    "bench-world": ("agentic_env.cli.bench.world:main",
                    "every agent with the perfect oracle, ideal vs realistic world and each "
                    "effect alone: what the world breaks per cell and why, the paper's bound"),
    "bench-robosuite": ("agentic_env.cli.bench.robosuite:main",
                        "env steps/s in the ideal and realistic worlds against robosuite's, "
                        "two RGB-D cameras"),
    "demo": ("agentic_env.cli.demo:main",
             "scripted expert on Tabletop-v0; writes a video and pictures"),
    "bench": ("agentic_env.cli.bench.env:main",
              "speed and pick-success benchmark; prints and writes JSON"),
    "bench-tasks": ("agentic_env.cli.bench.tasks:main",
                    "scripted expert over tasks x settings: success rate and time per cell"),
    "bench-grasp": ("agentic_env.cli.bench.perception:main",
                    "grasp candidates picked on random task layouts: success per object kind"),
    "setup-sheet": ("agentic_env.cli.setup_sheet:main",
                    "top-down layout sheet + trial spec for laying out a trial on a real table"),
    "catalogue-sheet": ("agentic_env.cli.catalogue_sheet:main",
                        "every task object rendered alone with its PDDL name, words and colour"),
    "calibrate": ("agentic_env.cli.real:calibrate_main",
                  "guided ChArUco hand-eye calibration of the shoulder or wrist camera"),
    "bench-calibration": ("agentic_env.cli.bench.calibration:main",
                          "hand-eye calibration error measured in sim: bias and spread per axis"),
    "bench-real": ("agentic_env.cli.bench.real:main",
                   "observation latency through RealEnv + MuJoCo twin vs the sim env"),
    "trial": ("agentic_env.cli.trial:main",
              "one trial spec with one agent in sim or on the real robot (or its twin)"),
    "trial-report": ("agentic_env.cli.real:trial_report_main",
                     "sim and real trial results side by side, Pearson r and MMRV"),
    "collect": ("agentic_env.cli.datasets:collect_main",
                "scripted-expert demonstrations at control rate -> LeRobot v3.0 dataset"),
    "check-dataset": ("agentic_env.cli.datasets:check_dataset_main",
                      "check a collected LeRobot dataset frame by frame"),
    "replay-demo": ("agentic_env.cli.datasets:replay_demo_main",
                    "open-loop replay of recorded demonstrations; fidelity report"),
    "bench-collect": ("agentic_env.cli.bench.collect:main",
                      "demonstration frames per second and MB per episode"),
    "train-policy": ("agentic_env.cli.policy:main",
                     "demonstrations + a small ACT policy on the CPU (LeRobot) for --agent "
                     "policy"),
    "train-rl": ("agentic_env.cli.rl:main", "SB3 PPO/SAC baseline on a shaped reach/pick task"),
    "sweep": ("agentic_env.cli.harness:sweep_main",
              "run a sweep file's episodes (resumable) into SQLite"),
    "report": ("agentic_env.cli.harness:report_main",
               "HTML + Markdown report of a sweep database"),
    "predict": ("agentic_env.cli.predict:main",
                "predictions ledger: freeze a prediction before its first run, run it as "
                "frozen, check for drift"),
    "modules": ("agentic_env.cli.harness:modules_main",
                "module benchmark (Table II) on sim-generated, ground-truth-labelled instances"),
    "bench-sweep": ("agentic_env.cli.bench.sweep:main",
                    "harness throughput with 1 and 2 workers and its overhead per episode"),
    "soak": ("agentic_env.cli.bench.soak:main",
             "memory soak: episodes in turn and a hostile MCP session; RSS slope, crashes, lost"),
}


def main(argv: list[str] | None = None) -> int:
    """Dispatch to a subcommand; return its exit code."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help") or args[0] not in COMMANDS:
        width = max(map(len, COMMANDS)) + 2
        lines = [f"  {name:<{width}}{help_text}" for name, (_, help_text) in COMMANDS.items()]
        print("usage: agentic-env {" + ",".join(COMMANDS) + "} [options]\n\ncommands:\n"
              + "\n".join(lines))
        if args and args[0] not in ("-h", "--help"):
            print(f"\nunknown command {args[0]!r}", file=sys.stderr)
            return 2
        return 0
    os.environ.setdefault("MUJOCO_GL", "egl")  # headless by default; must precede mujoco
    module_name, function = COMMANDS[args[0]][0].split(":")
    return int(getattr(importlib.import_module(module_name), function)(args[1:]))
