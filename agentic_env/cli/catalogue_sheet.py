"""``agentic-env catalogue-sheet``: one picture of every named object of the five tasks, each
rendered alone with its PDDL name, its words and its colour word under it
(:func:`agentic_env.harness.catalogue_sheet.render_catalogue_sheet`), so a person can check that
every object looks like what its names say.

Command line: ``agentic-env catalogue-sheet --out catalogue_sheet.png`` (``--task sorting`` for
one task's objects only).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from PIL import Image
from tqdm import tqdm

from agentic_env.harness.catalogue_sheet import render_catalogue_sheet
from agentic_env.tasks import BENCHMARK_TASKS
from agentic_env.tasks.appearance import appearances


def main(argv: list[str] | None = None) -> int:
    """``agentic-env catalogue-sheet``: render the sheet and write it as a PNG."""
    parser = argparse.ArgumentParser(prog="agentic-env catalogue-sheet", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("catalogue_sheet.png"),
                        help="PNG to write (default catalogue_sheet.png)")
    parser.add_argument("--task", choices=BENCHMARK_TASKS,
                        help="only this task's objects (default: all five tasks)")
    parser.add_argument("--tile", type=int, default=150,
                        help="tile size in pixels (default 150)")
    parser.add_argument("--columns", type=int, default=8, help="tiles a row (default 8)")
    args = parser.parse_args(argv)
    entries = appearances(args.task)
    with tqdm(total=len(entries), desc="rendering", unit="object", delay=2.0) as bar:
        sheet = render_catalogue_sheet(entries, tile=args.tile, columns=args.columns,
                                       step=lambda _: bar.update())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # a palette of 256 colours keeps the file small (flat backdrops, simple shading)
    Image.fromarray(sheet).quantize(256, method=Image.Quantize.MEDIANCUT).save(
        args.out, optimize=True)
    print(f"wrote {args.out} ({len(entries)} objects)")
    return 0
