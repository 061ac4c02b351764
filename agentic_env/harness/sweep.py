"""Sweep files: a YAML grid of episodes, expanded into :class:`EpisodeSpec` objects.

A sweep file looks like::

    name: ci
    episode_fn: agentic_env.harness.runner:run_episode  # optional, "module:function"
    grid:
      tasks: [sorting, stacking]                  # required
      settings: [lab]                             # default [lab]
      agents: [agenticlab]                        # default [agenticlab]; any registered
      agent_options: [{}, {grasp_evaluation: false}]   # default [{}]; per agent, JSON values
      models:                                     # default [sim-oracle]
        - sim-oracle
        - sim-oracle?checker=0.3
        - {model: sim-oracle, modules: {detector: "sim-oracle?detector=0.2"}}
        - {model: gemini/gemini-3-flash, judges: [openai/gpt-5.2, anthropic/claude-opus-4.5,
                                                  gemini/gemini-3-pro]}   # ALRM's judges
      verification: [full, goal]                  # default [full]
      disturbances: [none, move_target, [{kind: move_place_location, primitive: place,
                                          occurrence: -1}]]   # default [none]
      instruction_categories: [null, lexical]     # default [null] = the task's default
      kinds: [task, impossible, estop]            # default [task]: trial kinds
      events: [none, [{kind: say, at_primitive: 3, text: stop}]]   # default [none]
      realism: [realistic, ideal]                 # default [realistic]: the world
      seeds: [0, 1]                               # a list, an int n (0..n-1) or {start, count}
    episode: {max_actions: 40, max_replans: 5, max_wall_s: 600}   # fixed EpisodeSpec fields
    paper: [...]      # optional: the paper's findings to check (agentic_env.harness.findings)
    paper_table: {...}  # optional: the paper's end-to-end table the grid predicts
                        # (agentic_env.harness.paper_tables)

The grid is the Cartesian product of every axis, in the order above, with duplicates
removed. ``grid`` may also be a list of such mappings: the sweep is then their union, in
order (a configuration that holds for some tasks only, e.g. a model swapped in for one task,
is a grid entry of its own). Each disturbances entry is one *scenario*: ``none``, a kind
name, one disturbance mapping or a list of them (see
:class:`agentic_env.sim.disturbances.DisturbanceSpec`). Each ``kinds`` entry is a trial kind
(``task`` or one of :data:`agentic_env.tasks.variants.KINDS`); each ``events`` entry is
``none`` or a schedule: a list of event mappings (see
:class:`agentic_env.contract.events.EventSpec`), replayed after the kind's own events.
"""

from __future__ import annotations

import itertools
import pathlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_env.contract.events import parse_events
from agentic_env.errors import InvalidConfigError, check_keys
from agentic_env.harness.episode import (
    VERIFICATION_MODES,
    EpisodeSpec,
    freeze_events,
    models_label,
)
from agentic_env.harness.extras import require
from agentic_env.harness.findings import Finding, parse_findings
from agentic_env.harness.paper_tables import PaperTable, parse_paper_table
from agentic_env.sim.realism import BENCHMARK_REALISM, REALISM_LEVELS

#: Episode function used when a sweep file names none.
DEFAULT_EPISODE_FN = "agentic_env.harness.runner:run_episode"
#: Grid axes, in expansion order, with their defaults (``tasks`` has none: it is required).
AXES: dict[str, list[Any] | None] = {
    "tasks": None,
    "settings": ["lab"],
    "agents": ["agenticlab"],
    "agent_options": [{}],
    "models": ["sim-oracle"],
    "verification": ["full"],
    "disturbances": ["none"],
    "instruction_categories": [None],
    "kinds": ["task"],
    "events": ["none"],
    "realism": [BENCHMARK_REALISM],
    "seeds": [0],
}
_TOP_LEVEL = ("name", "episode_fn", "grid", "episode", "paper", "paper_table")
_EPISODE_FIELDS = ("max_actions", "max_replans", "max_wall_s")


@dataclass(frozen=True)
class Sweep:
    """A parsed sweep file.

    Attributes:
        name: sweep name (used in reports and the default database / trace paths).
        episode_fn: episode function as ``"module:function"``.
        specs: the expanded grid, in declaration order, without duplicates.
        findings: the paper's findings the report checks on the results (``paper:``, see
            :mod:`agentic_env.harness.findings`).
        paper_table: the paper's end-to-end table the report sets beside the results
            (``paper_table:``, see :mod:`agentic_env.harness.paper_tables`), ``None`` if none.
    """

    name: str
    episode_fn: str
    specs: tuple[EpisodeSpec, ...]
    findings: tuple[Finding, ...] = ()
    paper_table: PaperTable | None = None


def load_sweep(path: str | pathlib.Path, seeds: Any = None, realism: str | None = None
               ) -> Sweep:
    """Read and expand a sweep file (YAML, see the module docstring); ``seeds`` (as the grid's
    ``seeds``: a list, an int n or ``{start, count}``) replaces the file's seeds, ``realism``
    (``ideal`` or ``realistic``) its worlds."""
    yaml = require("yaml", "harness")

    file = pathlib.Path(path)
    if not file.is_file():
        raise InvalidConfigError(f"sweep file {str(file)!r} does not exist")
    try:
        data = yaml.safe_load(file.read_text())
    except yaml.YAMLError as exc:
        raise InvalidConfigError(f"sweep file {file.name}: not valid YAML: {exc}") from exc
    overrides = {key: value for key, value in (("seeds", seeds),
                                                ("realism", realism and [realism]))
                 if value is not None}
    if overrides and isinstance(data, Mapping):
        grid = data.get("grid")
        if isinstance(grid, Mapping):
            data = {**data, "grid": {**grid, **overrides}}
        elif isinstance(grid, list):
            data = {**data, "grid": [{**g, **overrides} if isinstance(g, Mapping) else g
                                     for g in grid]}
    return parse_sweep(data, default_name=file.stem)


def parse_sweep(data: Any, default_name: str = "sweep") -> Sweep:
    """Validate a sweep mapping (the YAML document) and expand its grid."""
    if not isinstance(data, Mapping):
        raise InvalidConfigError("a sweep file is a mapping with keys " + ", ".join(_TOP_LEVEL))
    check_keys(data, _TOP_LEVEL, "sweep file")
    grid = data.get("grid")
    grids = grid if isinstance(grid, list) and grid else [grid]
    if not all(isinstance(g, Mapping) for g in grids):
        raise InvalidConfigError("sweep file needs a 'grid' mapping with at least 'tasks' (or "
                                 "a list of such mappings)")
    for entry in grids:
        check_keys(entry, tuple(AXES), "grid")
    fixed = data.get("episode") or {}
    if not isinstance(fixed, Mapping):
        raise InvalidConfigError("'episode' is a mapping of " + ", ".join(_EPISODE_FIELDS))
    check_keys(fixed, _EPISODE_FIELDS, "episode")
    episode_fn = str(data.get("episode_fn") or DEFAULT_EPISODE_FN)
    if episode_fn.count(":") != 1:
        raise InvalidConfigError(f"episode_fn {episode_fn!r}: write it as 'module:function'")
    return Sweep(name=str(data.get("name") or default_name), episode_fn=episode_fn,
                 specs=_union(expand_grid(entry, fixed) for entry in grids),
                 findings=parse_findings(data.get("paper")),
                 paper_table=parse_paper_table(data.get("paper_table")))


def expand_grid(grid: Mapping[str, Any], fixed: Mapping[str, Any] | None = None
                ) -> tuple[EpisodeSpec, ...]:
    """Cartesian product of the grid axes as episode specs (duplicates dropped, order kept)."""
    axes = {name: _axis(grid, name) for name in AXES}
    _validate_names(axes)
    models = [_model_entry(m) for m in axes["models"]]
    scenarios = [_scenario(d) for d in axes["disturbances"]]
    seeds = _seeds(grid.get("seeds", AXES["seeds"]))
    schedules = [_schedule(entry) for entry in axes["events"]]
    specs: dict[str, EpisodeSpec] = {}
    option_sets = [_agent_options(entry, axes["agents"]) for entry in axes["agent_options"]]
    for (task, setting, agent, options, (model, modules, judges), mode, scenario, category,
         kind, events, realism, seed) in itertools.product(
            axes["tasks"], axes["settings"], axes["agents"], option_sets, models,
            axes["verification"], scenarios, axes["instruction_categories"], axes["kinds"],
            schedules, axes["realism"], seeds):
        spec = EpisodeSpec(task=str(task), setting=str(setting), seed=seed, agent=str(agent),
                           agent_options=options, model=model, modules=modules,
                           judges=judges, verification=str(mode),
                           disturbances=scenario,
                           instruction_category=None if category is None else str(category),
                           kind=str(kind), events=events, realism=str(realism),
                           **dict(fixed or {}))
        specs.setdefault(spec.key(), spec)
    return tuple(specs.values())


def _union(grids: Iterable[tuple[EpisodeSpec, ...]]) -> tuple[EpisodeSpec, ...]:
    """The specs of several grids in order, each configuration once."""
    specs: dict[str, EpisodeSpec] = {}
    for grid in grids:
        for spec in grid:
            specs.setdefault(spec.key(), spec)
    return tuple(specs.values())


def _schedule(entry: Any) -> tuple[tuple[tuple[str, Any], ...], ...]:
    """One ``events`` entry (``none`` or a list of event mappings), validated."""
    if entry in (None, "none"):
        return ()
    return freeze_events(e.to_dict() for e in parse_events(entry))


def model_label(spec: EpisodeSpec) -> str:
    """The model column of reports: the model spec, plus per-module overrides and the trace
    judges (``judges=A+B+C``) if any."""
    return models_label(spec.model, spec.modules, spec.judges)


def disturbance_label(spec: EpisodeSpec) -> str:
    """The disturbance column of reports: ``none`` or ``kind@primitive#occurrence`` joined."""
    if not spec.disturbances:
        return "none"
    parts = []
    for items in spec.disturbances:
        d = dict(items)
        occurrence = "last" if d.get("occurrence") == -1 else d.get("occurrence", 1)
        parts.append(f"{d['kind']}@{d.get('primitive', 'pick')}#{occurrence}")
    return "+".join(parts)


def _axis(grid: Mapping[str, Any], name: str) -> list[Any]:
    if name not in grid:
        default = AXES[name]
        if default is None:
            raise InvalidConfigError(f"grid: '{name}' is required (a list)")
        return list(default)
    values = grid[name]
    if name == "seeds":
        return [values]  # parsed by _seeds
    if not isinstance(values, list) or not values:
        raise InvalidConfigError(f"grid: '{name}' must be a non-empty list, got {values!r}")
    return values


def _validate_names(axes: Mapping[str, list[Any]]) -> None:
    from agentic_env.agents.base import agent_entry
    from agentic_env.sim.settings import available_settings
    from agentic_env.tasks import TASKS
    from agentic_env.tasks.instructions import CATEGORIES
    from agentic_env.tasks.variants import KINDS

    for agent in axes["agents"]:
        agent_entry(str(agent))  # raises listing the registered agents
    checks = {"tasks": sorted(TASKS), "settings": available_settings(),
              "verification": list(VERIFICATION_MODES),
              "instruction_categories": [None, *CATEGORIES], "kinds": ["task", *KINDS],
              "realism": list(REALISM_LEVELS)}

    for axis, valid in checks.items():
        for value in axes[axis]:
            if value not in valid:
                shown = ", ".join("null" if v is None else str(v) for v in valid)
                raise InvalidConfigError(f"grid.{axis}: unknown value {value!r}; valid: {shown}")


def _agent_options(entry: Any, agents: Sequence[Any]) -> tuple[tuple[str, Any], ...]:
    """One ``agent_options`` entry, checked against every agent of the grid."""
    from agentic_env.agents.base import agent_entry

    if entry is None:
        return ()
    if not isinstance(entry, Mapping) or not all(
            isinstance(v, (str, int, float, bool)) or v is None for v in entry.values()):
        raise InvalidConfigError(f"grid.agent_options entry {entry!r}: give a mapping of "
                                 "option names to JSON scalars, e.g. {grasp_evaluation: false}")
    for agent in agents:
        agent_entry(str(agent)).check_options(entry)
    return tuple(sorted((str(k), v) for k, v in entry.items()))


def _model_entry(entry: Any
                 ) -> tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]]:
    """One ``models`` entry as (model, module overrides, trace judges)."""
    from agentic_env.agents.alrm.judge import PANEL_EXAMPLE, check_judges
    from agentic_env.agents.models.modules import module_names
    from agentic_env.agents.models.registry import parse_model_spec

    if isinstance(entry, str):
        parse_model_spec(entry)
        return entry, (), ()
    if isinstance(entry, Mapping) and "model" in entry:
        check_keys(entry, ("model", "modules", "judges"), "grid.models entry")
        modules = entry.get("modules") or {}
        if not isinstance(modules, Mapping):
            raise InvalidConfigError("grid.models: 'modules' maps module names to model specs")
        check_keys(modules, module_names(), "grid.models modules")
        for spec in (entry["model"], *modules.values()):
            parse_model_spec(str(spec))
        judges = entry.get("judges") or []
        if not isinstance(judges, list):
            raise InvalidConfigError(f"grid.models: 'judges' is a list of model specs, e.g. "
                                     f"[{PANEL_EXAMPLE.replace(',', ', ')}]")
        if judges:
            check_judges([str(judge) for judge in judges])
        return (str(entry["model"]), tuple(sorted((str(k), str(v)) for k, v in modules.items())),
                tuple(str(judge) for judge in judges))
    raise InvalidConfigError(
        f"grid.models entry {entry!r}: give a model spec string or "
        "{model: SPEC, modules: {MODULE: SPEC}, judges: [SPEC, ...]}")


def _scenario(entry: Any) -> tuple[tuple[tuple[str, Any], ...], ...]:
    from agentic_env.sim.disturbances import DisturbanceSpec

    if entry in (None, "none", []):
        return ()
    items = entry if isinstance(entry, list) else [entry]
    scenario = []
    for item in items:
        data = {"kind": item} if isinstance(item, str) else item
        if not isinstance(data, Mapping):
            raise InvalidConfigError(
                f"grid.disturbances entry {item!r}: give none, a kind name, a mapping "
                "{kind, primitive, occurrence, magnitude} or a list of those")
        try:
            spec = DisturbanceSpec.from_dict(dict(data))
        except TypeError as exc:
            raise InvalidConfigError(
                f"grid.disturbances entry {item!r}: {exc}; fields: kind, primitive, "
                "occurrence, magnitude") from exc
        scenario.append(tuple(sorted(spec.to_dict().items())))
    return tuple(scenario)


def _seeds(value: Any) -> list[int]:
    if isinstance(value, bool):
        raise InvalidConfigError("grid.seeds: give a list of ints, an int n or {start, count}")
    if isinstance(value, int):
        return list(range(value))
    if isinstance(value, Mapping) and set(value) <= {"start", "count"} and "count" in value:
        start = int(value.get("start", 0))
        return list(range(start, start + int(value["count"])))
    if isinstance(value, list) and value and all(
            isinstance(s, int) and not isinstance(s, bool) for s in value):
        return list(dict.fromkeys(value))
    raise InvalidConfigError(
        f"grid.seeds {value!r}: give a list of ints, an int n (0..n-1) or {{start, count}}")
