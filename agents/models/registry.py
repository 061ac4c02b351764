"""Model specs (``--model`` / ``--modules`` strings) to backends, and per-module routing.

Spec forms:

* ``sim-oracle`` or ``sim-oracle?checker=0.1&detector=0.15&seed=3`` — the privileged
  offline oracle, with per-module error rates in [0, 1] (keys from
  :func:`~agentic_env.agents.models.modules.module_names`, or for
  tool-calling agents the error kinds of
  :data:`~agentic_env.agents.models.base.TOOL_ERRORS`) and a seed; ``names=described``
  makes it name things by their looks as a model does (``white-container``) instead of by
  the simulator's ids; ``reask_redraw=P`` (in [0, 1], default 1) makes its errors persist:
  a re-ask in an unchanged situation draws afresh only with probability P. It reads the
  simulator, so only the harness builds it: it passes the ``sim-oracle`` factory of
  :func:`agentic_env.oracle.oracle_factories` in ``factories``.
* ``emulated:PROFILE`` or ``emulated:PROFILE?seed=3`` — a paper's model emulated offline
  from its profile (``agentic_env/oracle/profiles/PROFILE.toml``: per-module success rates,
  error kinds, seconds and tokens per call, with provenance): the sim-oracle erring at the
  profile's rates, naming things by their looks, seeing only what the image shows and
  charging virtual latency. Like the sim-oracle it reads the simulator, so only the harness
  builds it (the ``emulated`` factory of :func:`agentic_env.oracle.oracle_factories`).
* ``replay:DIR`` — answers from the cassettes recorded in ``DIR``, offline.
* ``record:DIR:MODEL`` — asks the litellm model ``MODEL`` and records every exchange in ``DIR``.
* anything else — a litellm model name (``gemini/gemini-3-flash``, ``ollama/llama3.2``...),
  optionally with ``?api_base=URL&timeout=SECONDS&temperature=T&max_retries=N``.

Backends are built by a factory per spec kind (:data:`BackendFactory`): this module's
(:data:`BUILT_IN_FACTORIES`, for ``litellm``, ``replay`` and ``record``) and those the caller
passes for the episode (the harness's ``sim-oracle``). The router an agent gets holds only a
:class:`ModelHandle` per backend: its name and a way to ask it, with no attribute, closure or
bound method that leads to the backend (a sim-oracle's reads the simulator).
"""

from __future__ import annotations

import difflib
import itertools
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import parse_qsl

from agentic_env.agents.models.base import (
    PLANNER_ERRORS,
    TOOL_ERRORS,
    Backend,
    Completion,
    ModelQuery,
)
from agentic_env.agents.models.litellm_backend import LiteLLMBackend
from agentic_env.agents.models.modules import check_modules, module_names
from agentic_env.agents.models.replay import RecordingBackend, ReplayBackend
from agentic_env.errors import InvalidConfigError

SpecKind = Literal["sim-oracle", "emulated", "litellm", "replay", "record"]

#: Name of the privileged offline model.
SIM_ORACLE = "sim-oracle"
#: Prefix of an emulated model's spec (``emulated:gemini-3-flash``).
EMULATED = "emulated"
#: How the sim-oracle may name things (its ``names`` option): the simulator's ids, or by their
#: looks as a model does.
ORACLE_NAME_STYLES: tuple[str, ...] = ("ids", "described")
#: Options a litellm spec accepts after ``?``, with their types.
LITELLM_OPTIONS: Mapping[str, type] = MappingProxyType(
    {"api_base": str, "timeout": float, "temperature": float, "max_retries": int}
)
SPEC_FORMS = (
    "'sim-oracle', 'sim-oracle?checker=0.1&detector=0.15&seed=3', "
    "'emulated:PROFILE' (e.g. 'emulated:gemini-3-flash?seed=3'), 'replay:DIR', "
    "'record:DIR:MODEL', or a litellm model name such as 'gemini/gemini-3-flash' "
    "(optionally '?api_base=URL&timeout=SECONDS')"
)


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec.

    Attributes:
        text: the spec as given.
        kind: ``sim-oracle``, ``emulated``, ``litellm``, ``replay`` or ``record``.
        model: litellm model name (``litellm`` and ``record``), the profile's name
            (``emulated``), else ``None``.
        options: litellm options from the ``?`` part (keys of :data:`LITELLM_OPTIONS`,
            values converted to their types).
        cassette_dir: cassette folder (``replay`` and ``record``), else ``None``.
        error_rates: sim-oracle probability in [0, 1] that a module's answer is corrupted,
            per module (:func:`module_names`; modules not named: 0).
        seed: sim-oracle (or emulated model) seed of the error injection.
        names: how the sim-oracle names things: ``ids`` (the simulator's) or ``described``
            (by their looks, as a model does).
        reask_redraw: sim-oracle probability in [0, 1] that a re-ask in an unchanged
            situation draws its errors afresh (1: independent draws per call).
        ablate: an emulated model's mechanisms switched off (``ablate=checker,boxes``;
            checked against :data:`agentic_env.oracle.ablation.MECHANISMS` where the
            profile is loaded), else ``()``.
    """

    text: str
    kind: SpecKind
    model: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    cassette_dir: Path | None = None
    error_rates: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0
    names: str = "ids"
    reask_redraw: float = 1.0
    ablate: tuple[str, ...] = ()


def _split_query(text: str) -> tuple[str, list[tuple[str, str]]]:
    base, _, query = text.partition("?")
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as exc:
        raise InvalidConfigError(
            f"model spec {text!r}: the part after '?' must be key=value pairs joined by '&'"
        ) from exc
    keys = [key for key, _ in pairs]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise InvalidConfigError(f"model spec {text!r} repeats {', '.join(duplicates)}")
    return base, pairs


def _parse_oracle(text: str, pairs: list[tuple[str, str]]) -> ModelSpec:
    rates: dict[str, float] = {}
    seed = 0
    names = "ids"
    redraw = 1.0
    for key, value in pairs:
        if key == "names":
            if value not in ORACLE_NAME_STYLES:
                raise InvalidConfigError(
                    f"model spec {text!r}: names must be one of "
                    f"{', '.join(ORACLE_NAME_STYLES)}, got {value!r}")
            names = value
            continue
        if key == "seed":
            try:
                seed = int(value)
            except ValueError as exc:
                raise InvalidConfigError(
                    f"model spec {text!r}: seed must be an integer, got {value!r}"
                ) from exc
            continue
        if key not in module_names() and key not in TOOL_ERRORS and key not in PLANNER_ERRORS \
                and key != "reask_redraw":
            raise InvalidConfigError(
                f"model spec {text!r}: unknown option {key!r}; the sim-oracle takes error "
                f"rates for the modules {', '.join(module_names())}, for the tool-calling error "
                f"kinds {', '.join(TOOL_ERRORS)}, for the planner error kinds "
                f"{', '.join(PLANNER_ERRORS)}, 'seed', 'names' and 'reask_redraw'"
            )
        try:
            rate = float(value)
        except ValueError:
            rate = float("nan")
        if not 0.0 <= rate <= 1.0:
            what = "reask_redraw" if key == "reask_redraw" else f"the error rate of {key}"
            raise InvalidConfigError(
                f"model spec {text!r}: {what} must be a number in [0, 1], got {value!r}"
            )
        if key == "reask_redraw":
            redraw = rate
        else:
            rates[key] = rate
    return ModelSpec(text=text, kind="sim-oracle", error_rates=MappingProxyType(rates), seed=seed,
                     names=names, reask_redraw=redraw)


def _parse_emulated(text: str, profile: str, pairs: list[tuple[str, str]]) -> ModelSpec:
    """``emulated:PROFILE?seed=N&ablate=M1,M2``; whether the profile exists, and the
    mechanisms' names, are checked where it is loaded (the harness side, which holds the
    profiles)."""
    if not profile or any(ch.isspace() or ch in "/:" for ch in profile):
        raise InvalidConfigError(f"model spec {text!r}: name a profile, e.g. "
                                 "'emulated:gemini-3-flash'")
    seed, ablate = 0, ()
    for key, value in pairs:
        if key == "ablate":
            ablate = tuple(name.strip() for name in value.split(",") if name.strip())
            if not ablate:
                raise InvalidConfigError(f"model spec {text!r}: ablate names mechanisms, "
                                         "e.g. 'ablate=checker,boxes' or 'ablate=all'")
            continue
        if key != "seed":
            raise InvalidConfigError(f"model spec {text!r}: unknown option {key!r}; an "
                                     "emulated model takes 'seed' and 'ablate'")
        try:
            seed = int(value)
        except ValueError as exc:
            raise InvalidConfigError(
                f"model spec {text!r}: seed must be an integer, got {value!r}") from exc
    return ModelSpec(text=text, kind="emulated", model=profile, seed=seed, ablate=ablate)


def _parse_litellm(
    text: str, model_text: str, kind: SpecKind, cassette_dir: Path | None
) -> ModelSpec:
    model, pairs = _split_query(model_text)
    if not model or any(ch.isspace() for ch in model):
        raise InvalidConfigError(
            f"model spec {text!r}: {model!r} is not a model name; use {SPEC_FORMS}"
        )
    options: dict[str, Any] = {}
    for key, value in pairs:
        if key not in LITELLM_OPTIONS:
            raise InvalidConfigError(
                f"model spec {text!r}: unknown option {key!r}; litellm models take "
                f"{', '.join(LITELLM_OPTIONS)}"
            )
        convert = LITELLM_OPTIONS[key]
        try:
            options[key] = convert(value)
        except ValueError as exc:
            raise InvalidConfigError(
                f"model spec {text!r}: {key} must be {convert.__name__}, got {value!r}"
            ) from exc
        if convert is not str and options[key] < 0:
            raise InvalidConfigError(f"model spec {text!r}: {key} must be >= 0, got {value!r}")
    return ModelSpec(
        text=text, kind=kind, model=model, options=MappingProxyType(options),
        cassette_dir=cassette_dir,
    )


def parse_model_spec(text: str) -> ModelSpec:
    """Parse one model spec (forms in the module docstring).

    Raises:
        InvalidConfigError: the spec is empty or malformed, names an unknown module or
            option, or gives an error rate outside [0, 1]; the message lists the valid forms.
    """
    spec = text.strip()
    if not spec:
        raise InvalidConfigError(f"empty model spec; use {SPEC_FORMS}")
    base, pairs = _split_query(spec)
    if base == SIM_ORACLE:
        return _parse_oracle(spec, pairs)
    if spec.startswith(f"{EMULATED}:"):
        return _parse_emulated(spec, base.removeprefix(f"{EMULATED}:"), pairs)
    if spec.startswith("replay:"):
        folder = spec.removeprefix("replay:")
        if not folder:
            raise InvalidConfigError(f"model spec {spec!r} names no folder; use 'replay:DIR'")
        return ModelSpec(text=spec, kind="replay", cassette_dir=Path(folder))
    if spec.startswith("record:"):
        folder, sep, model = spec.removeprefix("record:").partition(":")
        if not folder or not sep or not model:
            raise InvalidConfigError(
                f"model spec {spec!r} must be 'record:DIR:MODEL' with a litellm model name, "
                "e.g. 'record:cassettes:gemini/gemini-3-flash'"
            )
        return _parse_litellm(spec, model, "record", Path(folder))
    if difflib.SequenceMatcher(None, base.lower(), SIM_ORACLE).ratio() >= 0.8:
        raise InvalidConfigError(
            f"model spec {spec!r} is not recognised; did you mean {SIM_ORACLE!r}? Use {SPEC_FORMS}"
        )
    if base.startswith(SIM_ORACLE) or ":" in base.split("/")[0]:
        raise InvalidConfigError(f"model spec {spec!r} is not recognised; use {SPEC_FORMS}")
    return _parse_litellm(spec, spec, "litellm", None)


def parse_module_map(text: str) -> dict[str, str]:
    """Parse ``"parser=gemini/x,detector=sim-oracle"`` into ``{module: spec}``.

    An empty string gives an empty map. Each spec is checked with :func:`parse_model_spec`.

    Raises:
        InvalidConfigError: an item is not ``module=spec``, a module is unknown or repeated,
            or a spec is malformed.
    """
    result: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        module, sep, spec = item.partition("=")
        module = module.strip()
        if not sep or not spec.strip():
            raise InvalidConfigError(
                f"module assignment {item!r} must be 'module=model', e.g. 'parser=gemini/x'"
            )
        check_modules([module], f"in {text!r}")
        if module in result:
            raise InvalidConfigError(f"module {module!r} is assigned twice in {text!r}")
        parse_model_spec(spec)
        result[module] = spec.strip()
    return result


#: The backends behind the handles agents hold, by handle key. Only :class:`ModelHandle`
#: reads it; an entry goes when its handle is collected.
_BACKENDS: dict[int, Backend] = {}
_KEYS = itertools.count()


class ModelHandle:
    """What an agent holds for one backend: its name, the model whose output conventions its
    answers follow, and :meth:`complete`, nothing more.

    The backend stays in a table private to this module, so no attribute, closure or bound
    method of the handle leads to it (nor to the simulator a sim-oracle reads).

    Args:
        backend: the backend it asks.

    Attributes:
        name: the backend's name.
        model: the backend's ``model`` (a litellm model name, a replay folder's recorded
            model), else its name; a string, e.g. for
            :func:`~agentic_env.agents.models.coordinates.format_for_model`.
    """

    __slots__ = ("__weakref__", "_key", "model", "name")

    def __init__(self, backend: Backend) -> None:
        self.name: str = backend.name
        self.model: str = str(getattr(backend, "model", backend.name))
        self._key = next(_KEYS)
        _BACKENDS[self._key] = backend
        weakref.finalize(self, _BACKENDS.pop, self._key, None)

    def complete(self, query: ModelQuery) -> Completion:
        """Ask the backend (see :meth:`Backend.complete`)."""
        return _BACKENDS[self._key].complete(query)


def _handle(backend: Backend) -> ModelHandle:
    return backend if isinstance(backend, ModelHandle) else ModelHandle(backend)


class ModelRouter:
    """Which backend answers each module; it holds a :class:`ModelHandle` per backend.

    Args:
        default: answers every module without its own backend.
        per_module: backends for some modules (keys from :func:`module_names`).

    Raises:
        InvalidConfigError: a key of ``per_module`` is not a module.
    """

    __slots__ = ("_default", "_per_module")

    def __init__(self, default: Backend, per_module: Mapping[str, Backend] | None = None) -> None:
        per_module = dict(per_module or {})
        check_modules(per_module)
        handles: dict[int, ModelHandle] = {}

        def handle(backend: Backend) -> ModelHandle:
            return handles.setdefault(id(backend), _handle(backend))

        self._default = handle(default)
        self._per_module = {module: handle(backend) for module, backend in per_module.items()}

    def backend_for(self, module: str) -> ModelHandle:
        """The handle of the backend answering ``module``.

        Raises:
            InvalidConfigError: ``module`` is not a module (:func:`module_names`).
        """
        check_modules([module])
        return self._per_module.get(module, self._default)

    def names(self) -> dict[str, str]:
        """Backend name per module, for summaries and traces."""
        return {module: self.backend_for(module).name for module in module_names()}


#: Builds the backend a parsed spec describes.
BackendFactory = Callable[[ModelSpec], Backend]


def _litellm(spec: ModelSpec) -> LiteLLMBackend:
    assert spec.model is not None
    options = spec.options
    backend = LiteLLMBackend(
        spec.model,
        timeout_s=options.get("timeout", 60.0),
        max_retries=options.get("max_retries", 3),
        temperature=options.get("temperature", 0.0),
        api_base=options.get("api_base"),
    )
    backend.check_environment()
    return backend


def _replay(spec: ModelSpec) -> ReplayBackend:
    assert spec.cassette_dir is not None
    return ReplayBackend(spec.cassette_dir)


def _record(spec: ModelSpec) -> RecordingBackend:
    assert spec.cassette_dir is not None
    return RecordingBackend(_litellm(spec), spec.cassette_dir)


#: The factories of the spec kinds that need no simulator, by kind.
BUILT_IN_FACTORIES: Mapping[str, BackendFactory] = MappingProxyType(
    {"litellm": _litellm, "replay": _replay, "record": _record})


def build_backend(spec: ModelSpec, *,
                  factories: Mapping[str, BackendFactory] | None = None) -> Backend:
    """Make the backend a spec describes, with the factory of its kind: one of ``factories``
    (the harness passes the ``sim-oracle`` one) or of :data:`BUILT_IN_FACTORIES`.

    litellm backends check their API key here, so a missing key fails before the run starts.

    Raises:
        InvalidConfigError: no factory for the spec's kind (a sim-oracle outside the harness).
        MissingAPIKeyError: a litellm model's provider key is not set.
        ModelError: a replay folder does not exist or holds unreadable cassettes.
    """
    factory = {**BUILT_IN_FACTORIES, **(factories or {})}.get(spec.kind)
    if factory is None:
        raise InvalidConfigError(
            f"model spec {spec.text!r} needs the simulator: the harness builds the sim-oracle "
            "from the env (factories=agentic_env.oracle.oracle_factories(env)), or choose a "
            "litellm or replay: model")
    return factory(spec)


def build_backends(
    model: str,
    modules: Mapping[str, str] | None = None,
    *,
    factories: Mapping[str, BackendFactory] | None = None,
) -> ModelRouter:
    """Build the router for ``--model`` and ``--modules``.

    Each distinct spec string is built once, so modules naming the same spec share one
    backend (one sim-oracle random stream, one litellm client).

    Args:
        model: the default spec.
        modules: ``{module: spec}`` overrides, e.g. from :func:`parse_module_map`.
        factories: backend factories by spec kind beyond :data:`BUILT_IN_FACTORIES`; the
            ``sim-oracle`` one is required when any spec is one.

    Raises:
        InvalidConfigError: a spec or module is invalid, or a sim-oracle has no factory.
        MissingAPIKeyError: a litellm model's provider key is not set.
    """
    modules = dict(modules or {})
    check_modules(modules)
    built: dict[str, Backend] = {}

    def backend(text: str) -> Backend:
        key = text.strip()
        if key not in built:
            built[key] = build_backend(parse_model_spec(key), factories=factories)
        return built[key]

    default = backend(model)
    return ModelRouter(default, {module: backend(spec) for module, spec in modules.items()})
