"""The calibration replica: simulated instances of AgenticLab's module benchmark (App. B) on
which each emulated model's cause normalisers are solved (:mod:`agentic_env.oracle.causes`).

The replica holds *situations* only (visible pixels, the truth's error kind, crop clutter,
goal sizes), never an outcome, so nothing is fitted to a result. It is made from the
perfect sim-oracle's rollouts of the module benchmark (``agentic-env modules``' instances,
:func:`agentic_env.bench.modules.calibration_replica`) on
:data:`~agentic_env.contract.seeds.CALIBRATION_SEEDS`, a range no evaluation and no
demonstration draws from, in the lab (the setting of Table II):

* ``checker``: preconditions before, effects after (and after a deliberately skipped
  execution of) every step of five tasks' reference plans, shoulder image: the paper's 61
  instances "from real rollouts ... across 7 scenes and 5 tasks" with their natural mix of
  holding and failing conditions;
* ``goal``: the goal asked before the first step, halfway and at the end (the paper's 16
  final-scene cases);
* ``grasp``: the candidates the perception toolkit proposes per pick, plus one shifted off
  the target (the paper's 50 candidates);
* ``parser``: the goal sizes of the four Table V categories' instructions (sorting,
  stacking, crossword, kitchen; 13 each: 52 instructions).

The packaged file (:data:`REPLICA_FILE`) is written by
:func:`agentic_env.bench.modules.write_calibration_replica`.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from agentic_env.oracle.causes import CropSituation, VerdictSight

#: The packaged replica file (under ``agentic_env/oracle/profiles/``).
REPLICA_FILE = "_calibration_replica.toml"
#: Tasks of the checker, goal and grasp replicas (AgenticLab App. B: 5 tasks).
REPLICA_TASKS: tuple[str, ...] = ("sorting", "stacking", "crossword", "kitchen",
                                  "reorientation")
#: Tasks of the parser replica (Table V's four categories).
PARSER_TASKS: tuple[str, ...] = ("sorting", "stacking", "crossword", "kitchen")

def situation_record(module: str, situation: Any) -> Any:
    """A situation as plain data for the replica file (TOML)."""
    if isinstance(situation, VerdictSight):
        return {"view": situation.view, "kind": situation.kind,
                "literals": [[family, list(px)] for family, px in situation.literals]}
    if isinstance(situation, CropSituation):
        return {"neighbours": situation.neighbours,
                "occluded": round(situation.occluded, 4), "kind": situation.kind}
    return int(situation)


def _situation(module: str, raw: Any) -> Any:
    if module in ("checker", "goal"):
        return VerdictSight(str(raw["view"]), str(raw["kind"]), tuple(
            (str(family), tuple(int(p) for p in px)) for family, px in raw["literals"]))
    if module == "grasp":
        return CropSituation(int(raw["neighbours"]), float(raw["occluded"]), str(raw["kind"]))
    return int(raw)


def parse_replica(text: str) -> dict[str, tuple[Any, ...]]:
    """Module -> its situations, from a replica file's text."""
    data = tomllib.loads(text)
    return {module: tuple(_situation(module, raw) for raw in data.get(module, []))
            for module in ("checker", "goal", "grasp", "parser")}


@cache
def packaged_replica() -> Mapping[str, tuple[Any, ...]]:
    """The packaged calibration replica (:data:`REPLICA_FILE`): module -> situations."""
    path = resources.files("agentic_env.oracle") / "profiles" / REPLICA_FILE
    return parse_replica(path.read_text(encoding="utf-8"))


def replica_toml(records: Mapping[str, Sequence[Any]], header: str) -> str:
    """The text of a replica file for ``records`` (module -> :func:`situation_record` s)
    under a comment ``header``."""
    comment = "\n".join(f"# {line}" if line else "#" for line in header.splitlines())
    parts = [comment, ""]
    for module in ("checker", "goal", "grasp", "parser"):
        rows = ",\n".join(f"  {_inline(r)}" for r in records.get(module, ()))
        parts.append(f"{module} = [\n{rows},\n]\n" if rows else f"{module} = []\n")
    return "\n".join(parts)


def _inline(value: Any) -> str:
    """``value`` (dict, list, str, number) as a TOML inline value."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_inline(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)
