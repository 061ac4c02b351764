"""``agentic-env bench-tools``: what one tool call costs through MCP vs in-process.

The same tools of one sim episode are called ``--calls`` times each: in-process through the
tool registry, then through the MCP SDK's client against ``agentic-env serve`` over stdio and
over streamable HTTP (on 127.0.0.1). ``get_instruction`` does no work, so its times are the
protocol's overhead; ``get_robot_state`` takes one observation (both cameras rendered), for
scale. The table gives median and 90th-percentile wall time
per call in milliseconds and the median overhead over in-process
(:mod:`agentic_env.bench.tools`). The three paths' episodes (never finished, so failures) are
recorded into the results database ``--db`` (default ``runs/bench_tools.db``; ``agentic-env
report DB`` shows them).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agentic_env.bench.tools import TOOLS, measure
from agentic_env.cli.bench import add_db_argument, print_report_command


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table; returns 0."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-tools", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="sorting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--calls", type=int, default=200, help="timed calls per tool and path")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    add_db_argument(parser, "bench_tools")
    args = parser.parse_args(argv)
    figures = measure(args.task, args.seed, args.calls, args.db)
    paths = list(figures)
    print(f"one tool call, {args.calls} calls per cell, task {args.task}, ms (median / p90)")
    print(f"{'tool':<17}" + "".join(f"{label:>20}" for label in paths)
          + f"{'stdio overhead':>16}{'http overhead':>15}")
    for name, _ in TOOLS:
        cells = [figures[label][name] for label in paths]
        base = cells[0]["median_ms"]
        print(f"{name:<17}" + "".join(f"{c['median_ms']:>10.3f} / {c['p90_ms']:<7.3f}"
                                      for c in cells)
              + f"{cells[1]['median_ms'] - base:>14.3f}  {cells[2]['median_ms'] - base:>13.3f}")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=1))
    print_report_command(args.db)
    return 0
