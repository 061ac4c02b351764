"""The privilege boundary: agent code cannot reach the simulator's ground truth.

The first test walks the imports of every module under ``agents/`` (but the privileged
ones below), following imports into the rest of ``agentic_env`` transitively, and fails on
any path into the simulator's packages. The second checks the object an agent receives.
"""

from __future__ import annotations

import ast
import pathlib
from typing import Any

import mujoco
import numpy as np
import pytest

from agentic_env.contract.actions import home
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.robot_io import EnvRobotIO

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: Package roots of the installed names (see pyproject's package-dir).
PACKAGE_DIRS = {"agentic_env.agents": ROOT / "agents", "agentic_env.real": ROOT / "real",
                "agentic_env": ROOT / "agentic_env"}
#: Agent-side modules allowed to read ground truth: the sim-oracle model, the reference
#: policy of its tool-calling form, its ALRM answers (planner subtasks from the reference plan,
#: executor calls and programs, the scene's object list), its MALLVI role answers and its
#: planner-executor answers (router, planner turns, critic) -- privileged by design -- and the
#: perception benchmark (scores detections against the simulator).
PRIVILEGED = {"agentic_env.agents.models.oracle", "agentic_env.agents.models.tool_reference",
              "agentic_env.agents.models.oracle_alrm", "agentic_env.agents.models.oracle_mallvi",
              "agentic_env.agents.models.oracle_planner", "agentic_env.agents.perception.bench"}
#: Packages that hold simulator state, task truth or scripted experts (and the harness and
#: real-robot packages, which hold envs).
FORBIDDEN = ("agentic_env.tasks", "agentic_env.envs", "agentic_env.sim", "agentic_env.experts",
             "agentic_env.harness", "agentic_env.real", "agentic_env.datasets",
             "agentic_env.registry")


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


def _imports(path: pathlib.Path, name: str) -> set[str]:
    """Every module ``path`` imports (function-level imports included), fully qualified."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m == "agentic_env" or m.startswith("agentic_env.")}


def _reach(start: str) -> dict[str, str]:
    """Modules reachable from ``start``, each with the module that first imported it."""
    seen: dict[str, str] = {start: ""}
    todo = [start]
    while todo:
        current = todo.pop()
        path = _module_file(current)
        if path is None:
            continue
        for target in _imports(path, current):
            if target not in seen and target not in PRIVILEGED:
                seen[target] = current
                todo.append(target)
    return seen


def _chain(seen: dict[str, str], end: str) -> str:
    chain = [end]
    while seen[chain[-1]]:
        chain.append(seen[chain[-1]])
    return " <- ".join(chain)


AGENT_MODULES = sorted(
    _module_name(p) for p in (ROOT / "agents").rglob("*.py")
    if _module_name(p) not in PRIVILEGED)


def test_the_walk_sees_the_agent_modules_and_catches_a_forbidden_import() -> None:
    assert {"agentic_env.agents.base", "agentic_env.agents.agenticlab.pipeline"} <= set(
        AGENT_MODULES)
    assert "agentic_env.envs.sim_env" in _reach("agentic_env.agents.models.oracle")


@pytest.mark.parametrize("module", AGENT_MODULES)
def test_agent_code_imports_nothing_that_holds_the_simulator(module: str) -> None:
    seen = _reach(module)
    leaks = [_chain(seen, m) for m in seen if m.startswith(FORBIDDEN)]
    assert not leaks, "agent code reaches privileged packages:\n" + "\n".join(leaks)


def _walk(value: Any, depth: int = 0, seen: set[int] | None = None) -> list[Any]:
    """Everything reachable from ``value`` through attributes, slots, dicts and sequences."""
    seen = set() if seen is None else seen
    if id(value) in seen or depth > 5:
        return []
    seen.add(id(value))
    found = [value]
    children: list[Any] = []
    if isinstance(value, dict):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set)):
        children = list(value)
    elif not isinstance(value, (str, bytes, int, float, np.ndarray)) and not callable(value):
        children = list(getattr(value, "__dict__", {}).values())
        children += [getattr(value, s) for s in getattr(type(value), "__slots__", ())
                     if hasattr(value, s)]
    for child in children:
        found += _walk(child, depth + 1, seen)
    return found


def test_the_robot_io_an_agent_receives_exposes_no_privileged_data() -> None:
    env = SimEnv("sorting")
    try:
        env.reset(seed=0)
        robot_io = EnvRobotIO(env)
        obs, status = robot_io.act(home())
        reachable = _walk(robot_io) + _walk(obs) + _walk(status)
        banned = (SimEnv, mujoco.MjData, mujoco.MjModel)
        assert not [v for v in reachable if isinstance(v, banned)]
        assert set(obs) == set(env.observation_space.spaces)
        assert set(status) == {"name", "ok", "reason", "message", "sim_duration"}
        public = {a for a in dir(robot_io) if not a.startswith("_")}
        assert public == {"act", "observe", "actions", "stopped", "workspace", "poll_events",
                      "wait"}
        assert robot_io.poll_events() == []  # announced events come as text only
    finally:
        env.close()

