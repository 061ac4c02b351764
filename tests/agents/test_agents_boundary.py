"""The privilege boundary: agent code cannot reach the simulator's ground truth.

Two checks, with no exemptions, and a test that plants each known way around them:

* the import scan reads every file under ``agents/`` (module level and inside functions) and
  fails on an import of a privileged package (:data:`PRIVILEGED`) or of ``mujoco``, on a
  string import of one (``importlib.import_module``, ``__import__``, ``load_entry_point``...),
  on a privileged module named in a string literal, on an import of a private name, and on
  any import path into the packages that hold envs (:data:`FORBIDDEN`), transitively;
* the runtime walk follows everything an agent is handed in a real episode (its
  ``AgentSetup``, the robot io, the task context, observations and statuses) through
  attributes, slots, containers, closure cells, defaults, bound methods, partials, weak
  references and class attributes, and fails on a simulator object or on any object from a
  privileged package.

What the boundary does not cover: module globals (``sys.modules``), ``gc``, frames and
``ctypes`` reach anything in one process; untrusted code belongs in another process.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import re
import types
import weakref
from collections import deque
from collections.abc import Iterator
from typing import Any

import mujoco
import numpy as np
import pytest

from agentic_env.agents.base import (
    AgentReport,
    AgentSetup,
    RobotIO,
    TaskContext,
    register_agent,
    unregister_agent,
)
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.contract.actions import home
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.runner import run_episode
from agentic_env.oracle import SimOracle
from agentic_env.tasks.base import Task

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: Package roots of the installed names (see pyproject's package-dir).
PACKAGE_DIRS = {"agentic_env.agents": ROOT / "agents", "agentic_env.real": ROOT / "real",
                "agentic_env": ROOT / "agentic_env"}
#: Packages that hold simulator state, task truth, scripted experts or the sim-oracle.
PRIVILEGED = ("agentic_env.oracle", "agentic_env.sim", "agentic_env.envs",
              "agentic_env.tasks", "agentic_env.experts")
#: What a file under ``agents/`` may not import itself: the privileged packages and MuJoCo.
BANNED = (*PRIVILEGED, "mujoco")
#: What agent code may not reach through other modules either: the privileged packages and
#: those that hold envs (harness, real robot, datasets, the env registry).
FORBIDDEN = (*PRIVILEGED, "agentic_env.harness", "agentic_env.real", "agentic_env.datasets",
             "agentic_env.registry")
#: Functions that import a module named by a string.
STRING_IMPORTERS = frozenset({"import_module", "__import__", "load_entry_point", "find_spec",
                              "spec_from_file_location", "import_string"})
#: A privileged module (or ``module:attr`` entry point) written as a string.
PRIVILEGED_TEXT = re.compile(
    r"({})(\.\w+)*(:[\w.]+)?".format("|".join(re.escape(p) for p in BANNED)))


def _banned(name: str, packages: tuple[str, ...] = BANNED) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _module_file(name: str) -> pathlib.Path | None:
    for prefix, folder in sorted(PACKAGE_DIRS.items(), key=lambda kv: -len(kv[0])):
        if name == prefix or name.startswith(prefix + "."):
            rest = name[len(prefix):].lstrip(".").replace(".", "/")
            base = folder / rest if rest else folder
            for path in (base.with_suffix(".py"), base / "__init__.py"):
                if path.is_file():
                    return path
            return None
    return None


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT / "agents").with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["agentic_env.agents", *parts])


def _imports(tree: ast.AST, name: str, package: bool) -> dict[str, ast.AST]:
    """Every module ``tree`` imports by statement, at any level, fully qualified (``from a
    import b`` gives ``a`` and ``a.b``), each with its statement."""
    found: dict[str, ast.AST] = {}
    anchor = name if package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update((alias.name, node) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = anchor.split(".")[: len(anchor.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found[base] = node
            found.update((f"{base}.{alias.name}", node) for alias in node.names)
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes of a module, its classes and functions."""
    owners = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, owners) and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def scan_source(source: str, name: str, package: bool = False) -> list[str]:
    """What one agent module's source does that agent code must not: privileged imports (by
    statement at any level, by string, by attribute path), privileged module names in string
    literals and imports of private names. Empty when the module is clean."""
    tree = ast.parse(source)
    problems = [f"line {node.lineno}: imports {module}"
                for module, node in _imports(tree, name, package).items() if _banned(module)]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            problems += [f"line {node.lineno}: imports the private name {alias.name}"
                         for alias in node.names
                         if alias.name.startswith("_") and not alias.name.startswith("__")]
        elif isinstance(node, ast.Call):
            called = node.func.id if isinstance(node.func, ast.Name) else getattr(
                node.func, "attr", "")
            literal = next((a.value for a in node.args[:1] if isinstance(a, ast.Constant)), None)
            if called in STRING_IMPORTERS and isinstance(literal, str) and _banned(
                    literal.partition(":")[0]):
                problems.append(f"line {node.lineno}: {called}({literal!r})")
        elif isinstance(node, ast.Attribute) and _banned(ast.unparse(node), PRIVILEGED):
            problems.append(f"line {node.lineno}: reaches {ast.unparse(node)}")
    docstrings = _docstrings(tree)
    problems += [f"line {node.lineno}: names {node.value!r}" for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str)
                 and id(node) not in docstrings and PRIVILEGED_TEXT.fullmatch(node.value)]
    return problems


def _reach(start: str) -> dict[str, str]:
    """``agentic_env`` modules reachable from ``start`` by import statements (module level
    and in functions), each with the module that first imported it."""
    seen: dict[str, str] = {start: ""}
    todo = [start]
    while todo:
        current = todo.pop()
        path = _module_file(current)
        if path is None:
            continue
        tree = ast.parse(path.read_text())
        for target in _imports(tree, current, path.name == "__init__.py"):
            if target.startswith("agentic_env") and target not in seen:
                seen[target] = current
                todo.append(target)
    return seen


def _chain(seen: dict[str, str], end: str) -> str:
    chain = [end]
    while seen[chain[-1]]:
        chain.append(seen[chain[-1]])
    return " <- ".join(chain)


AGENT_FILES = sorted((ROOT / "agents").rglob("*.py"))


@pytest.mark.parametrize("path", AGENT_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_agent_code_imports_nothing_privileged(path: pathlib.Path) -> None:
    name = _module_name(path)
    problems = scan_source(path.read_text(), name, path.name == "__init__.py")
    seen = _reach(name)
    problems += [_chain(seen, m) for m in seen if _banned(m, FORBIDDEN)]
    assert not problems, f"{name} reaches privileged code:\n" + "\n".join(problems)


# -- the runtime walk ----------------------------------------------------------------------

#: Values with nothing behind them.
_LEAVES = (type(None), bool, int, float, complex, str, bytes, np.generic, range)
#: Simulator objects, whatever module their class lives in.
_SIMULATOR = (SimEnv, mujoco.MjModel, mujoco.MjData)
#: What every task has (:class:`~agentic_env.tasks.base.Task` is a protocol).
_TASK_METHODS = tuple(name for name in vars(Task) if not name.startswith("_"))
#: What an empty closure cell holds.
_EMPTY = object()


def _privileged(value: Any) -> str | None:
    """Why ``value`` must not be reachable from an agent (``None``: it may be)."""
    if isinstance(value, _SIMULATOR):
        return f"a {type(value).__name__}"
    if not isinstance(value, type) and all(hasattr(value, m) for m in _TASK_METHODS):
        return f"a task ({type(value).__name__})"
    if isinstance(value, types.ModuleType):
        module = value.__name__
    elif isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
        module = getattr(value, "__module__", None) or ""
    else:
        module = type(value).__module__
    if _banned(module):
        return f"an object of {module}"
    return None


def _cell_contents(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _EMPTY


def _slots(value: Any) -> Iterator[tuple[str, Any]]:
    for cls in type(value).__mro__:
        names = cls.__dict__.get("__slots__", ())
        for slot in (names,) if isinstance(names, str) else names:
            try:
                yield slot, object.__getattribute__(value, slot)
            except AttributeError:
                continue


def _children(value: Any) -> Iterator[tuple[str, Any]]:
    """What ``value`` refers to, each with how (for the path in a failure message)."""
    if isinstance(value, (dict, types.MappingProxyType)):
        for key, item in value.items():
            yield f"[key {key!r}]", key
            yield f"[{key!r}]", item
    elif isinstance(value, (list, tuple, set, frozenset, deque)):
        yield from ((f"[{i}]", item) for i, item in enumerate(value))
    elif isinstance(value, np.ndarray):
        if value.dtype == object:
            yield from (("[item]", item) for item in value.ravel())
    elif isinstance(value, types.CellType):
        contents = _cell_contents(value)
        if contents is not _EMPTY:
            yield ".cell_contents", contents
    elif isinstance(value, weakref.ref):
        yield "()", value()
    elif isinstance(value, functools.partial):
        yield from ((".func", value.func), (".args", value.args), (".keywords", value.keywords))
    elif isinstance(value, types.MethodType):
        yield from ((".__self__", value.__self__), (".__func__", value.__func__))
    elif isinstance(value, types.BuiltinMethodType):
        if not isinstance(value.__self__, types.ModuleType):
            yield ".__self__", value.__self__
    elif isinstance(value, types.FunctionType):
        yield from ((".__closure__", value.__closure__ or ()),
                    (".__defaults__", value.__defaults__ or ()),
                    (".__kwdefaults__", value.__kwdefaults__ or {}),
                    (".__dict__", value.__dict__))
    elif isinstance(value, (staticmethod, classmethod)):
        yield ".__func__", value.__func__
    elif isinstance(value, property):
        yield from ((".fget", value.fget), (".fset", value.fset), (".fdel", value.fdel))
    elif isinstance(value, type):
        if value.__module__ != "builtins" and not value.__module__.startswith("numpy"):
            yield ".__dict__", dict(value.__dict__)
    elif not isinstance(value, types.ModuleType):  # module globals are out of scope
        yield ".__class__", type(value)
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict):
            yield ".__dict__", attributes
        yield from ((f".{slot}", item) for slot, item in _slots(value))


def leaks(**roots: Any) -> list[str]:
    """The paths from ``roots`` (name -> what an agent is handed) to privileged objects."""
    found = []
    seen: dict[int, Any] = {}  # keeps what it saw alive, so no id is reused meanwhile
    todo = deque(roots.items())
    while todo:
        path, value = todo.popleft()
        if id(value) in seen or isinstance(value, _LEAVES):
            continue
        seen[id(value)] = value
        why = _privileged(value)
        if why is not None:
            found.append(f"{path} is {why}")
            continue
        todo.extend((path + step, child) for step, child in _children(value))
    return found


class _Capture:
    """An agent that only walks what it was handed, once per kind of handout."""

    found: list[str] = []
    setup: AgentSetup | None = None

    def __init__(self, setup: AgentSetup) -> None:
        type(self).setup = setup

    def run(self, robot_io: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        obs, status = robot_io.act(home())
        type(self).found = leaks(setup=type(self).setup, robot_io=robot_io,
                                 instruction=instruction, context=context, obs=obs,
                                 status=status, first=robot_io.observe())
        return AgentReport(actions=1)


def test_nothing_an_agent_is_handed_in_an_episode_leads_to_the_simulator(
        tmp_path: pathlib.Path) -> None:
    register_agent("boundary-capture", _Capture)
    try:
        run_episode(EpisodeSpec("sorting", agent="boundary-capture",
                                model="sim-oracle?checker=0.1",
                                modules=(("detector", "sim-oracle?detector=0.2&seed=1"),),
                                realism="ideal"),
                    trace_root=tmp_path, video=False, on_event=lambda line: None)
    finally:
        unregister_agent("boundary-capture")
    assert _Capture.setup is not None and _Capture.setup.on_event is not None
    assert _Capture.setup.models.router.names()["detector"] == "sim-oracle"
    assert _Capture.found == []


def test_the_robot_io_an_agent_receives_answers_only_its_questions() -> None:
    from agentic_env.harness.robot_io import EnvRobotIO

    env = SimEnv("sorting", realism="ideal")
    try:
        env.reset(seed=0)
        robot_io = EnvRobotIO(env)
        obs, status = robot_io.act(home())
        assert leaks(robot_io=robot_io, obs=obs, status=status) == []
        assert set(obs) == set(env.observation_space.spaces)
        assert set(status) == {"name", "ok", "reason", "message", "sim_duration"}
        public = {a for a in dir(robot_io) if not a.startswith("_")}
        assert public == {"act", "control", "observe", "actions", "stopped", "workspace",
                          "poll_events", "wait"}
        assert robot_io.poll_events() == []  # announced events come as text only
    finally:
        env.close()


# -- each known way around the checks is caught --------------------------------------------


class _Holder:
    def __init__(self, value: Any) -> None:
        self.value = value


class _Slotted:
    __slots__ = ("hidden",)

    def __init__(self, hidden: Any) -> None:
        self.hidden = hidden


def _closing_over(value: Any) -> Any:
    def callback(event: dict[str, Any]) -> None:
        del event
        assert value is not None

    return callback


def _plants(env: SimEnv) -> dict[str, Any]:
    """One handout per trick, each hiding the env (or the oracle) its own way."""
    oracle = SimOracle(env)

    class WithClassAttribute:
        world = env

    class WithProperty:
        @property
        def world(self) -> Any:
            return _closing_over(env)

    def defaults(event: dict[str, Any], world: Any = env) -> None:
        del event, world

    return {
        "closure cell": _closing_over(env),
        "closure over a closure": _closing_over(_closing_over(env.model)),
        "bound method of the oracle": oracle.complete,
        "partial": functools.partial(print, env.data),
        "object in a dict inside a list": [{"value": _Holder(env.task)}],
        "slot": _Slotted(env),
        "default argument": defaults,
        "weak reference": weakref.ref(env),
        "class attribute": WithClassAttribute(),
        "property's closure": WithProperty(),
        "router over the oracle itself": ModuleContext(_RawRouter(oracle)),  # type: ignore[arg-type]
        "set and tuple": ({(1, _Holder(oracle))},),
    }


class _RawRouter:
    """A router that keeps its backend in the open (what ModelRouter must not do)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend


def test_the_walk_catches_every_planted_reference() -> None:
    env = SimEnv("sorting", realism="ideal")
    try:
        env.reset(seed=0)
        plants = _plants(env)
        caught = {name: leaks(setup=AgentSetup(ModuleContext(ModelRouter(SimOracle(env))),
                                               options={"plant": plant}))
                  for name, plant in plants.items()}
        assert [name for name, paths in caught.items() if not paths] == []
        clean = AgentSetup(ModuleContext(ModelRouter(SimOracle(env))),
                           on_event=_closing_over("just text"))
        assert leaks(setup=clean) == []
    finally:
        env.close()


PLANTED_SOURCES = {
    "import_module": 'import importlib\nimportlib.import_module("agentic_env.oracle")\n',
    "function-level import mujoco": "def f():\n    import mujoco\n    return mujoco\n",
    "__import__": 'def f():\n    return __import__("agentic_env.sim.state")\n',
    "load_entry_point": ('from agentic_env.entry_points import load_entry_point\n'
                         'load_entry_point("agentic_env.oracle.backend:SimOracle", "x")\n'),
    "from package import module": "from agentic_env import oracle\n",
    "relative import": "from ...oracle import SimOracle\n",
    "aliased import": "import agentic_env.envs.sim_env as world\n",
    "string table": 'TABLE = {"x": "agentic_env.tasks.base"}\n',
    "attribute path": "import agentic_env\nworld = agentic_env.experts\n",
    "private name": "from agentic_env.agents.models.registry import _BACKENDS\n",
}


@pytest.mark.parametrize("trick", sorted(PLANTED_SOURCES))
def test_the_scan_catches_every_planted_import(trick: str) -> None:
    assert scan_source(PLANTED_SOURCES[trick], "agentic_env.agents.models.planted")


def test_the_scan_passes_clean_code_that_only_mentions_the_oracle() -> None:
    clean = ('"""Answers like :mod:`agentic_env.oracle` would, without it."""\n'
             "import numpy as np\nfrom agentic_env.agents.models.base import ModelQuery\n"
             'MESSAGE = "the sim-oracle answers offline"\n')
    assert scan_source(clean, "agentic_env.agents.models.planted") == []
