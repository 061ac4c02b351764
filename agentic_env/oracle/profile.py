"""Model profiles: what an emulated model (``emulated:<name>``) is made of, read from data.

A profile is one TOML file under ``agentic_env/oracle/profiles/`` (``<name>.toml``) laid
over the shared assumptions of ``profiles/_defaults.toml``. Every number is a table with its
``value`` and either where it was read (``paper``, ``table``, ``row``, ``column``) or the
``assumption`` it rests on, so each number of a profile says where it comes from:

.. code-block:: toml

    title = "Gemini 3 Flash"
    [modules.parser]
    success = { value = 0.923, paper = "AgenticLab", table = "II", row = "Gemini 3 Flash",
                column = "Task Parser SR (%)" }
    seconds = { value = 45.2, paper = "AgenticLab", table = "II", row = "Gemini 3 Flash",
                column = "Task Parser Time" }

Sections (all but ``title`` may come from the defaults):

* ``modules.<measured>``: ``success`` (probability in [0, 1] of a right answer), ``seconds``
  (per call) and optionally ``input_tokens`` / ``output_tokens`` (per call) of a measured
  module (:data:`MEASURED_MODULES`, AgenticLab's Table II columns), and the detector's
  ``box_iou`` (its boxes' mean IoU in [0, 1], Table II's Bbox IoU; none: its boxes are
  tight);
* ``tokens``: ``input`` / ``output`` tokens per call where a module gives none;
* ``roles``: every agent role (module name) -> the measured module it is emulated by;
* ``kinds.<measured>``: the relative weights of the module's error kinds (:data:`KINDS`);
  ``kinds.plan`` those of the planner roles (:data:`PLAN_ROLES`; a role weighs only the
  kinds it can make) and ``kinds.tools`` those of a tool-calling model's turn (the tool
  episode's :data:`~agentic_env.agents.models.base.TOOL_ERRORS`), both kept with the
  plan-writing module (``parser``);
* ``perception.min_visible_px``: pixels of the image sent below which an object is not seen;
* ``reask_redraw``: the probability that asking again in an unchanged situation draws the
  answer's errors afresh (below 1 a model mostly repeats its answer, and its mistake, about
  the same scene; :mod:`agentic_env.oracle.backend`);
* ``difficulty``: the odds multipliers that make the detector's (and Localizer's) error rate
  depend on the target's visible pixels and look-alikes in view, the measured rate kept on
  average over the module benchmark (``reference_px``, ``per_halving``, ``per_lookalike``),
  and ``image_quality`` (1: the measured quality of the frame sent scales the success left,
  :mod:`agentic_env.oracle.image_quality`; 0: off); :mod:`agentic_env.oracle.difficulty`;
* ``causes.<measured>``: the slopes of the model that makes a module's error rate follow
  what each call was sent (the verdicts' visible pixels, view and predicate kind; the grasp
  crop's clutter and occlusion; the parser's goal size), and its ablation switch
  ``enabled`` (0: the constant coin; :mod:`agentic_env.oracle.causes`), flattened to
  ``view.<camera>`` / ``family.<family>`` keys;
* ``boxes``: how the detector's box is loosened about the tight box to its ``box_iou``
  (``enabled``: 0 keeps the tight box, the ablation switch; ``grow``: the probability an
  edge moves outward; ``max_shrink``: the most an edge moves inward, share of the box's
  size; :mod:`agentic_env.oracle.boxes`);
* ``latency``: how each call's seconds spread about its module's mean and when a call
  times out and is sent again (``spread_cv``, ``timeout_s``, ``retries``, ``backoff_s``;
  :mod:`agentic_env.oracle.latency`);
* ``planner_turn_share``: the share of a measured module's error rate that one turn of a
  tool-calling planner (a single call, not a whole plan) carries;
* ``turn_roles``: the roles asked once per step of a plan (ALRM's task planner and
  executor), which err at their module's rate times ``planner_turn_share``;
* ``assumptions``: sentences stating what is assumed beyond single numbers (the role map);
* ``built_from``: the end-to-end results (``"ALRM Table III"``) the profile's numbers were
  derived from, where there are any: a comparison of the profile's runs with one of them
  agrees by construction and is no prediction (default: none);
* ``measures``: the measured modules the model does (default: all five); a model that does
  only some (LangSAM: a detector and nothing else) gives only those, and emulates only the
  roles they emulate: the others raise for it, as a model that cannot answer them.

Fidelity rule: a profile is built from module-level measurements; end-to-end results
(AgenticLab Table I) are what its predictions are compared with, never inputs. A profile of a
model measured only end to end (ALRM Table III) names that result in ``built_from``: a
comparison of its runs with that result agrees by construction and is no prediction.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

from agentic_env.agents.models.base import TOOL_ERRORS
from agentic_env.agents.models.modules import module_names
from agentic_env.errors import InvalidConfigError, check_keys
from agentic_env.oracle.causes import CAUSE_KEYS
from agentic_env.oracle.latency import LATENCY_KEYS

#: The modules a profile measures (AgenticLab Table II's columns).
MEASURED_MODULES: tuple[str, ...] = ("parser", "checker", "detector", "grasp", "goal")
#: Each measured module's error kinds (a profile weighs them; roles emulated by the module
#: err by the same kinds where their answers have them).
KINDS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "parser": ("missing_goal", "wrong_object"),
    "checker": ("false_fail", "false_pass"),
    "detector": ("neighbour", "distractor", "off_object", "no_answer"),
    "grasp": ("false_reject", "false_execute"),
    "goal": ("false_fail", "false_pass"),
    "plan": ("skipped_step", "reordered_steps", "wrong_object", "premature_done",
             "nested_call"),
    "tools": TOOL_ERRORS,
})
#: The measured module the plan error kinds (``kinds.plan``) and a tool-calling model's turn
#: error kinds (``kinds.tools``) belong to: a model that does not measure it makes no plans.
PLAN_MEASURE = "parser"
#: Each planner role and the plan error kinds it can make (:mod:`agentic_env.oracle.plan_errors`):
#: a mis-nested call only where the role writes tool calls or code (ALRM's task executor).
PLAN_ROLES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    role: KINDS["plan"][:4] for role in ("decomposer", "single_agent", "task_planner",
                                          "planner")} | {"task_executor": KINDS["plan"]})
_TOP_KEYS = ("title", "modules", "tokens", "roles", "kinds", "perception",
             "planner_turn_share", "turn_roles", "assumptions", "measures", "built_from",
             "reask_redraw", "difficulty", "latency", "causes", "boxes")
_DIFFICULTY_KEYS = ("reference_px", "per_halving", "per_lookalike", "image_quality")
_MODULE_KEYS = ("success", "seconds", "input_tokens", "output_tokens", "box_iou")
#: The ``[boxes]`` keys and each one's range.
_BOX_RANGES = {"enabled": (0, 1), "grow": (0.0, 1.0), "max_shrink": (0.0, 0.49)}
_SOURCE_KEYS = ("paper", "table", "row", "column")
_NUMBER_KEYS = ("value", *_SOURCE_KEYS, "assumption", "note")
_DEFAULTS = "_defaults"


@dataclass(frozen=True)
class Number:
    """One number of a profile and where it comes from.

    Attributes:
        value: the number.
        source: ``paper, table, row, column`` it was read from (with the file's ``note`` on
            the reading, e.g. what a table's "-" means), ``""`` when assumed.
        assumption: what it rests on when not read from a paper, else ``""``.
    """

    value: float
    source: str = ""
    assumption: str = ""


@dataclass(frozen=True)
class ModuleProfile:
    """A measured module of a profile: success probability, seconds and tokens per call,
    and (a detector) its boxes' mean IoU in [0, 1] (``None``: not measured, tight boxes)."""

    success: Number
    seconds: Number
    input_tokens: Number
    output_tokens: Number
    box_iou: Number | None = None


@dataclass(frozen=True)
class ModelProfile:
    """A model's emulation profile (see the module docstring).

    Attributes:
        name: the file's stem (``gemini-3-flash``).
        title: the model's name in the papers.
        modules: measured module -> its numbers (only the modules the model does).
        roles: module name (any agent's role) -> the measured module that emulates it (only
            roles emulated by a module the model does).
        kinds: measured module (and ``plan``) -> error kind -> relative weight (>= 0).
        min_visible_px: an object with fewer pixels than this in the image sent is not seen.
        reask_redraw: probability in [0, 1] that a re-ask in an unchanged situation draws
            afresh.
        difficulty: ``reference_px``, ``per_halving``, ``per_lookalike`` (odds multipliers,
            > 0) and ``image_quality`` (0 or 1) of the detector's difficulty.
        planner_turn_share: share in [0, 1] of the error rate one planner turn carries.
        turn_roles: roles asked once per step of a plan (they err at that share of their
            module's rate).
        assumptions: every assumption: the stated sentences, then each assumed number's.
        built_from: end-to-end results the numbers were derived from (a comparison with one
            agrees by construction); ``()`` for a profile of module-level measurements.
        latency: the ``[latency]`` numbers (:mod:`agentic_env.oracle.latency`).
        causes: measured module -> its ``[causes.<module>]`` numbers, flat (``enabled``,
            ``per_halving``, ``view.wrist``...; :mod:`agentic_env.oracle.causes`).
        boxes: the ``[boxes]`` numbers (``enabled``, ``grow``, ``max_shrink``;
            :mod:`agentic_env.oracle.boxes`).
    """

    name: str
    title: str
    modules: Mapping[str, ModuleProfile]
    roles: Mapping[str, str]
    kinds: Mapping[str, Mapping[str, Number]]
    min_visible_px: Number
    reask_redraw: Number
    difficulty: Mapping[str, Number]
    planner_turn_share: Number
    turn_roles: tuple[str, ...]
    assumptions: tuple[str, ...]
    built_from: tuple[str, ...] = ()
    latency: Mapping[str, Number] = MappingProxyType({})
    causes: Mapping[str, Mapping[str, Number]] = MappingProxyType({})
    boxes: Mapping[str, Number] = MappingProxyType({})

    def module_for(self, role: str) -> ModuleProfile:
        """The measured module that emulates ``role`` (a module name)."""
        return self.modules[self.roles[role]]


def profile_names() -> tuple[str, ...]:
    """The names of the packaged profiles, sorted."""
    folder = resources.files("agentic_env.oracle") / "profiles"
    return tuple(sorted(p.name.removesuffix(".toml") for p in folder.iterdir()
                        if p.name.endswith(".toml") and not p.name.startswith("_")))


def _read(name: str) -> dict[str, Any]:
    path = resources.files("agentic_env.oracle") / "profiles" / f"{name}.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InvalidConfigError(f"model profile {name!r}: not valid TOML: {exc}") from exc


def load_profile(name: str) -> ModelProfile:
    """The packaged profile ``name`` over the shared defaults.

    Raises:
        InvalidConfigError: no such profile (the message lists them), or it is invalid
            (:func:`parse_profile`).
    """
    if name not in profile_names():
        raise InvalidConfigError(f"no model profile {name!r}; profiles are "
                                 f"{', '.join(profile_names())}")
    return parse_profile(name, _read(name), _read(_DEFAULTS))


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` laid on ``base``, tables merged key by key (a number's table replaced)."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and "value" not in value \
                and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _number(where: str, raw: Any, low: float, high: float) -> Number:
    if not isinstance(raw, Mapping) or "value" not in raw:
        raise InvalidConfigError(f"{where}: give a table {{value = ..., paper, table, row, "
                                 f"column}} or {{value = ..., assumption = '...'}}")
    check_keys(raw, _NUMBER_KEYS, where)
    value = raw["value"]
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not low <= value <= high:
        raise InvalidConfigError(f"{where}: value must be a number in [{low}, {high}], "
                                 f"got {value!r}")
    sourced = [k for k in _SOURCE_KEYS if k in raw]
    if sourced and len(sourced) < len(_SOURCE_KEYS):
        raise InvalidConfigError(f"{where}: a source names all of {', '.join(_SOURCE_KEYS)}")
    if bool(sourced) == ("assumption" in raw):
        raise InvalidConfigError(f"{where}: give either its source ({', '.join(_SOURCE_KEYS)})"
                                 " or the 'assumption' it rests on, not both or neither")
    source = ", ".join(f"{k} {raw[k]}" for k in _SOURCE_KEYS) if sourced else ""
    if source and "note" in raw:
        source += f" ({raw['note']})"
    return Number(float(value), source, str(raw.get("assumption", "")))


def _measures(where: str, raw: Any) -> tuple[str, ...]:
    """The ``measures`` list: a non-empty subset of :data:`MEASURED_MODULES`, in their order."""
    if not isinstance(raw, list) or not raw or not set(raw) <= set(MEASURED_MODULES):
        raise InvalidConfigError(f"{where}: 'measures' lists the modules the model does, some "
                                 f"of {', '.join(MEASURED_MODULES)}; got {raw!r}")
    return tuple(m for m in MEASURED_MODULES if m in raw)


def parse_profile(name: str, data: Mapping[str, Any],
                  defaults: Mapping[str, Any] | None = None) -> ModelProfile:
    """A :class:`ModelProfile` from a profile's TOML data laid over ``defaults``'.

    Raises:
        InvalidConfigError: an unknown key (the message names the valid ones), a missing
            section or measured module, a number without source or assumption or out of
            its range, a role that is not a module or emulated by no measured module, an
            unknown error kind.
    """
    where = f"model profile {name!r}"
    check_keys(data, _TOP_KEYS, where)
    merged = _merge(defaults or {}, data)
    if not isinstance(merged.get("title"), str):
        raise InvalidConfigError(f"{where}: give the model's 'title' (its name in the papers)")
    for key in ("modules", "tokens", "roles", "kinds", "perception", "difficulty", "latency"):
        if not isinstance(merged.get(key), Mapping):
            raise InvalidConfigError(f"{where}: missing table [{key}]")
    measures = _measures(where, merged.get("measures", list(MEASURED_MODULES)))
    check_keys(merged["modules"], MEASURED_MODULES, f"{where} [modules]")
    check_keys(merged["tokens"], ("input", "output"), f"{where} [tokens]")
    tokens = {k: _number(f"{where} tokens.{k}", merged["tokens"].get(k), 0, 1e6)
              for k in ("input", "output")}
    modules = {}
    for module in measures:
        raw = merged["modules"].get(module)
        if not isinstance(raw, Mapping):
            raise InvalidConfigError(f"{where}: missing [modules.{module}] (measured modules "
                                     f"are {', '.join(measures)})")
        check_keys(raw, _MODULE_KEYS, f"{where} [modules.{module}]")
        at = f"{where} modules.{module}"
        if "box_iou" in raw and module != "detector":
            raise InvalidConfigError(f"{at}.box_iou: only the detector draws boxes")
        modules[module] = ModuleProfile(
            _number(f"{at}.success", raw.get("success"), 0.0, 1.0),
            _number(f"{at}.seconds", raw.get("seconds"), 0.0, 3600.0),
            _number(f"{at}.input_tokens", raw["input_tokens"], 0, 1e6)
            if "input_tokens" in raw else tokens["input"],
            _number(f"{at}.output_tokens", raw["output_tokens"], 0, 1e6)
            if "output_tokens" in raw else tokens["output"],
            _number(f"{at}.box_iou", raw["box_iou"], 0.0, 1.0) if "box_iou" in raw else None)
    roles = dict(merged["roles"])
    check_keys(roles, module_names(), f"{where} [roles]")
    for role, measured in roles.items():
        if measured not in MEASURED_MODULES:
            raise InvalidConfigError(f"{where} roles.{role} = {measured!r}: a role is emulated "
                                     f"by one of {', '.join(MEASURED_MODULES)}")
    roles = {role: measured for role, measured in roles.items() if measured in measures}
    check_keys(merged["kinds"], tuple(KINDS), f"{where} [kinds]")
    kinds = {}
    for module, weights in merged["kinds"].items():
        check_keys(weights, KINDS[module], f"{where} [kinds.{module}]")
        if (PLAN_MEASURE if module in ("plan", "tools") else module) not in measures:
            continue
        kinds[module] = MappingProxyType({
            kind: _number(f"{where} kinds.{module}.{kind}", raw, 0.0, 1e6)
            for kind, raw in weights.items()})
    check_keys(merged["perception"], ("min_visible_px",), f"{where} [perception]")
    numbers = [*tokens.values(),
               *(n for m in modules.values() for n in vars(m).values() if n is not None),
               *(n for w in kinds.values() for n in w.values())]
    visible = _number(f"{where} perception.min_visible_px",
                      merged["perception"].get("min_visible_px"), 1, 1e6)
    turn = _number(f"{where} planner_turn_share", merged.get("planner_turn_share"), 0.0, 1.0)
    redraw = _number(f"{where} reask_redraw", merged.get("reask_redraw"), 0.0, 1.0)
    difficulty = _difficulty(where, merged["difficulty"])
    latency = _latency(where, merged["latency"])
    causes = _causes(where, merged.get("causes", {}), measures)
    boxes = _boxes(where, merged.get("boxes", {}))
    turn_roles = merged.get("turn_roles", [])
    if not isinstance(turn_roles, list) or any(r not in module_names() for r in turn_roles):
        raise InvalidConfigError(f"{where}: 'turn_roles' lists module names "
                                 f"({', '.join(module_names())})")
    stated = merged.get("assumptions", [])
    if not isinstance(stated, list) or not all(isinstance(s, str) for s in stated):
        raise InvalidConfigError(f"{where}: 'assumptions' is a list of sentences")
    built_from = merged.get("built_from", [])
    if not isinstance(built_from, list) or not all(isinstance(b, str) for b in built_from):
        raise InvalidConfigError(f"{where}: 'built_from' lists end-to-end results by name")
    assumed = dict.fromkeys([*stated, *(n.assumption for n in (
        *numbers, visible, redraw, *difficulty.values(), *latency.values(), turn,
        *(n for c in causes.values() for n in c.values()), *boxes.values())
        if n.assumption)])
    return ModelProfile(name, merged["title"], MappingProxyType(modules),
                        MappingProxyType(roles), MappingProxyType(kinds), visible, redraw,
                        MappingProxyType(difficulty), turn,
                        tuple(r for r in turn_roles if r in roles), tuple(assumed),
                        tuple(built_from), MappingProxyType(latency),
                        MappingProxyType({m: MappingProxyType(c) for m, c in causes.items()}),
                        MappingProxyType(boxes))


def _boxes(where: str, raw: Any) -> dict[str, Number]:
    """The ``[boxes]`` table's numbers (all of ``enabled``, ``grow``, ``max_shrink`` when
    it is given; none when it is not)."""
    if not isinstance(raw, Mapping):
        raise InvalidConfigError(f"{where}: [boxes] is a table of numbers")
    check_keys(raw, tuple(_BOX_RANGES), f"{where} [boxes]")
    if raw and set(raw) != set(_BOX_RANGES):
        raise InvalidConfigError(f"{where}: [boxes] gives all of {', '.join(_BOX_RANGES)}")
    return {key: _number(f"{where} boxes.{key}", raw[key], *_BOX_RANGES[key])
            for key in _BOX_RANGES if key in raw}


def _difficulty(where: str, raw: Mapping[str, Any]) -> dict[str, Number]:
    """The ``[difficulty]`` table's numbers."""
    check_keys(raw, _DIFFICULTY_KEYS, f"{where} [difficulty]")
    numbers = {"reference_px": _number(f"{where} difficulty.reference_px",
                                       raw.get("reference_px"), 1, 1e6)}
    for key in ("per_halving", "per_lookalike"):
        numbers[key] = _number(f"{where} difficulty.{key}", raw.get(key), 1e-3, 1e3)
    numbers["image_quality"] = _number(f"{where} difficulty.image_quality",
                                       raw.get("image_quality"), 0, 1)
    return numbers


#: Range of each ``[latency]`` number.
_LATENCY_RANGES = {"spread_cv": (0.0, 10.0), "timeout_s": (1e-3, 3600.0),
                   "retries": (0, 10), "backoff_s": (0.0, 600.0)}


def _latency(where: str, raw: Mapping[str, Any]) -> dict[str, Number]:
    """The ``[latency]`` table's numbers (:data:`~agentic_env.oracle.latency.LATENCY_KEYS`,
    all required)."""
    check_keys(raw, LATENCY_KEYS, f"{where} [latency]")
    return {key: _number(f"{where} latency.{key}", raw.get(key), *_LATENCY_RANGES[key])
            for key in LATENCY_KEYS}


def _causes(where: str, raw: Any, measures: tuple[str, ...]) -> dict[str, dict[str, Number]]:
    """The ``[causes.<module>]`` tables of the measured modules (sub-tables flattened to
    ``view.<camera>`` / ``family.<family>``); ``enabled`` is 0 or 1, the others odds
    multipliers in [1e-3, 1e3] (``reference_px`` pixels in [1, 1e6])."""
    if not isinstance(raw, Mapping):
        raise InvalidConfigError(f"{where}: [causes] is a table of modules' tables")
    check_keys(raw, tuple(CAUSE_KEYS), f"{where} [causes]")
    causes: dict[str, dict[str, Number]] = {}
    for module, table in raw.items():
        at = f"{where} causes.{module}"
        if not isinstance(table, Mapping):
            raise InvalidConfigError(f"{at}: a table of numbers")
        check_keys(table, CAUSE_KEYS[module], f"{where} [causes.{module}]")
        if module not in measures:
            continue
        flat: dict[str, Number] = {}
        for key, value in table.items():
            if key in ("view", "family") and isinstance(value, Mapping) \
                    and "value" not in value:
                for sub, number in value.items():
                    flat[f"{key}.{sub}"] = _number(f"{at}.{key}.{sub}", number, 1e-3, 1e3)
                continue
            low, high = {"enabled": (0, 1), "reference_px": (1, 1e6)}.get(key, (1e-3, 1e3))
            flat[key] = _number(f"{at}.{key}", value, low, high)
        causes[module] = flat
    return causes
