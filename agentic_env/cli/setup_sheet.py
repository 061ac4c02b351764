"""``agentic-env setup-sheet``: a top-down diagram for a person laying out a sim trial on the
real table (:func:`agentic_env.harness.setup_sheet.render_setup_sheet`), and its trial spec.

Command line: ``agentic-env setup-sheet --task stacking --seed 3 --out runs/sheet`` writes
``setup_sheet.png`` and ``trial.json`` (use ``--trial FILE`` to draw an existing spec).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from PIL import Image

from agentic_env.contract.trial import TrialSpec
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.setup_sheet import render_setup_sheet


def main(argv: list[str] | None = None) -> int:
    """``agentic-env setup-sheet``: write the sheet and the trial spec of one trial."""
    parser = argparse.ArgumentParser(prog="agentic-env setup-sheet", description=__doc__)
    parser.add_argument("--task", default="stacking", help="task name (default stacking)")
    parser.add_argument("--setting", default="lab", help="lab, kitchen or outdoor")
    parser.add_argument("--seed", type=int, default=0, help="trial seed (default 0)")
    parser.add_argument("--trial", type=Path, help="draw this trial spec (JSON) instead")
    parser.add_argument("--kind", default="task",
                        help="trial kind: task (default) or one of agentic_env.tasks.variants."
                             "KINDS, e.g. estop (its events go into the spec)")
    parser.add_argument("--out", type=Path, default=Path("runs/setup_sheet"),
                        help="output folder")
    args = parser.parse_args(argv)
    trial = TrialSpec.load(args.trial) if args.trial else None
    task = trial.task if trial else args.task
    setting = trial.setting if trial else args.setting
    env = SimEnv(task=task, setting=setting)
    try:
        if trial is not None:
            env.reset(options={"trial": trial})
        else:
            env.reset(seed=args.seed, options={"kind": args.kind})

        args.out.mkdir(parents=True, exist_ok=True)
        Image.fromarray(render_setup_sheet(env)).save(args.out / "setup_sheet.png")
        env.trial.save(args.out / "trial.json")
    finally:
        env.close()
    print(f"wrote {args.out / 'setup_sheet.png'} and {args.out / 'trial.json'}")
    return 0
