"""The report's per-object table: per configuration (agent, model) and object set, how many
of the objects the goal is about ended where it wants them (those whose goal facts held from
the start, e.g. sorting distractors asked to stay, are counted apart).

Rows are the episode rows expanded per object (:func:`agentic_env.harness.findings.
object_rows`, from the per-object outcomes the harness stores:
:mod:`agentic_env.harness.objects`); rates carry their 95 % Wilson interval
(:func:`agentic_env.stats.wilson_interval`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentic_env.harness.findings import object_rows
from agentic_env.harness.objects import OBJECT_SETS
from agentic_env.reports.blocks import Block, Heading, Para, Table
from agentic_env.stats import wilson_interval


def placed_cell(placed: int, n: int) -> str:
    """``placed/n rate [low, high]``, percentages rounded to whole numbers (``–`` when
    ``n == 0``)."""
    if n == 0:
        return "–"
    low, high = wilson_interval(placed, n)
    return f"{placed}/{n} {100 * placed / n:.0f} % [{100 * low:.0f}, {100 * high:.0f}]"


def object_table(rows: Sequence[Mapping[str, Any]]) -> Table | None:
    """Agent × model rows, one column per object set present and one for all: objects
    placed / objects whose goal facts did not all hold at the start (rate [95 % Wilson
    interval]); ``None`` when no episode lists such an object."""
    items = [r for r in object_rows(rows) if not r["met_at_start"]]
    if not items:
        return None
    present = {r["object_set"] for r in items}
    sets = [s for s in OBJECT_SETS if s in present] + sorted(present - set(OBJECT_SETS))
    counts: dict[tuple[str, str], dict[str, list[int]]] = {}
    for r in items:
        cell = counts.setdefault((str(r["agent"]), str(r["model"])), {}).setdefault(
            r["object_set"], [0, 0])
        cell[0] += int(r["object_success"])
        cell[1] += 1
    body = []
    for (agent, model), per_set in sorted(counts.items()):
        cells = [placed_cell(*per_set.get(s, (0, 0))) for s in sets]
        total = [sum(v[i] for v in per_set.values()) for i in (0, 1)]
        body.append((agent, model, *cells, placed_cell(*total)))
    return Table(("agent", "model", *sets, "all"), tuple(body))


def object_blocks(rows: Sequence[Mapping[str, Any]]) -> list[Block]:
    """The report's section on objects by object set, ``[]`` when no episode lists any."""
    table = object_table(rows)
    if table is None:
        return []
    kept = [r for r in object_rows(rows) if r["met_at_start"]]
    note = (" Left out: the objects whose goal facts held from the start (a distractor "
            "asked to stay, a cube already on its support); at the end "
            f"{sum(bool(r['object_success']) for r in kept)} of {len(kept)} still held."
            if kept else "")
    return [Heading("Objects by object set"),
            Para("Per agent and model, of the objects the goal needed placed (their goal "
                 "facts did not all hold at the start), how many ended where it wants them "
                 "(every goal fact about the object holds at the end, on the simulator's "
                 "ground truth): placed/objects, rate [95 % Wilson interval]. Object sets: "
                 "fruit, food (packaged food), blocks (toy blocks, stacking cubes, crossword "
                 "letters), toys, tools, other." + note),
            table]
