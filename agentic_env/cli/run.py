"""``agentic-env run``: one agent episode with live progress, a summary and a trace.

Offline by default (the sim-oracle answers every module); ``--model`` takes any litellm model
name, ``--modules parser=...,detector=...`` composes models per module, ``--judges A,B,C``
names the models of ALRM's trace-judge panel (default: the sim-oracle's judges). ``--agent``
takes any registered agent (:func:`agentic_env.agents.base.agent_names`) and
``--agent-option KEY=VALUE`` its switches (VALUE read as JSON when it parses, else as text),
e.g. ``--agent-option grasp_evaluation=false``. Each decision is printed as it happens, its
numbers rounded (positions in metres to the millimetre) and its empty fields left out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from agentic_env.agents.alrm.judge import PANEL_EXAMPLE, parse_judges
from agentic_env.agents.base import agent_entry, agent_names
from agentic_env.agents.models.budget import Budget
from agentic_env.agents.models.registry import parse_module_map
from agentic_env.cli.realism import add_realism_argument
from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.harness.episode import VERIFICATION_MODES, EpisodeSpec
from agentic_env.harness.runner import run_episode
from agentic_env.sim.settings import available_settings
from agentic_env.tasks import BENCHMARK_TASKS
from agentic_env.tasks.instructions import CATEGORIES


def build_parser() -> argparse.ArgumentParser:
    """The command's argument parser."""
    parser = argparse.ArgumentParser(
        prog="agentic-env run", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="sorting", choices=BENCHMARK_TASKS)
    parser.add_argument("--setting", default="lab", choices=available_settings())
    parser.add_argument("--agent", default="agenticlab",
                        help=f"registered agent ({', '.join(agent_names())}) or "
                             "module:attr of an agent factory (default: agenticlab)")
    parser.add_argument("--agent-option", action="append", default=[], metavar="KEY=VALUE",
                        help="agent switch, repeatable; VALUE as JSON if it parses, else text")
    parser.add_argument("--model", default="sim-oracle",
                        help="model for every module: sim-oracle[?checker=0.1&...], any "
                             "litellm name (e.g. gemini/gemini-3-flash), replay:DIR, "
                             "record:DIR:<litellm name> (default: sim-oracle)")
    parser.add_argument("--modules", default="",
                        help="per-module overrides, e.g. parser=gpt-5.2,detector=sim-oracle")
    parser.add_argument("--judges", default="",
                        help="ALRM's trace-judge panel: model specs separated by commas, three "
                             f"distinct models as in the paper, e.g. {PANEL_EXAMPLE} "
                             "(default: the judge module's model, else the sim-oracle's "
                             "judges)")
    parser.add_argument("--seed", type=int, default=0)
    add_realism_argument(parser)
    parser.add_argument("--verification", default="full", choices=VERIFICATION_MODES)
    parser.add_argument("--instruction-category", default=None, choices=CATEGORIES)
    parser.add_argument("--max-actions", type=int, default=40)
    parser.add_argument("--max-replans", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="stop the run cleanly once this many tokens are spent")
    parser.add_argument("--max-cost", type=float, default=None,
                        help="stop the run cleanly once this many US dollars are spent")
    parser.add_argument("--out", type=Path, default=Path("runs"),
                        help="trace root; the trace goes to OUT/<episode key>/ (default: runs)")
    parser.add_argument("--no-video", action="store_true", help="skip video.mp4 (faster)")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    return parser


def parse_agent_options(items: list[str]) -> dict[str, Any]:
    """``["KEY=VALUE", ...]`` as a dict; VALUE is JSON when it parses (``false``, ``3``),
    else the text itself.

    Raises:
        InvalidConfigError: an item without ``=``.
    """
    options: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise InvalidConfigError(f"agent option {item!r}: write it as KEY=VALUE")
        try:
            options[key] = json.loads(text)
        except json.JSONDecodeError:
            options[key] = text
    return options


def main(argv: list[str] | None = None) -> int:
    """Run one episode; exit 0 on task success, 1 on failure, 2 on a usage error."""
    args = build_parser().parse_args(argv)
    try:
        modules = parse_module_map(args.modules) if args.modules else {}
        given = parse_agent_options(args.agent_option)
        agent_entry(args.agent).check_options(given)  # fails fast: unknown agent or option
        spec = EpisodeSpec(args.task, args.setting, args.seed, args.agent, args.model,
                           tuple(sorted(modules.items())), args.verification, (),
                           args.instruction_category, args.max_actions, args.max_replans,
                           agent_options=tuple(sorted(given.items())),
                           judges=parse_judges(args.judges) if args.judges else (),
                           realism=args.realism)
        budget = None
        if args.max_tokens is not None or args.max_cost is not None:
            budget = Budget(args.max_tokens, args.max_cost)
        print(f"{spec.task} / {spec.setting} / {spec.agent} / {spec.model} / seed {spec.seed} "
              f"/ verification {spec.verification} / {spec.realism} world", flush=True)
        result = run_episode(spec, trace_root=args.out, video=not args.no_video,
                             budget=budget,
                             on_event=None if args.quiet else lambda line: print(line,
                                                                                 flush=True))
    except AgenticEnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    tokens = f"{result.input_tokens} in / {result.output_tokens} out"
    cost = "unknown" if result.cost_usd is None else f"${result.cost_usd:.4f}"
    lines = [
        f"success         {result.success}",
        f"progress score  {result.score:.2f}  (done {result.n_done}, extra {result.n_extra}, "
        f"required {result.n_required}; goal-checker error {result.goal_checker_error})",
        f"goal progress   {result.progress:.2f}",
        f"actions         {result.actions}",
        f"replans         {result.replans}",
        f"model calls     {len(result.calls)}  (tokens {tokens}, cost {cost})",
        f"time            {result.wall_s:.1f} s wall; episode {result.episode_s:.1f} s = "
        f"{result.sim_s:.1f} s robot + {result.model_s:.1f} s model",
    ]
    if result.judge_score is not None:
        lines.append(f"trace judges    {result.judge_score:g} of 2  "
                     f"({', '.join(result.judges)})")
        lines.extend(f"  warning: {note}" for note in result.judge_notes)
    if result.failure:
        lines.append(f"failure         {result.failure}"
                     + (f": {result.failure_detail}" if result.failure_detail else ""))
    if result.trace_dir:
        lines.append(f"trace           {result.trace_dir}/index.html")
    print("\n" + "\n".join(lines))
    return 0 if result.success else 1
