"""The package layout's rules: every module imports, lower layers never reach upward, the
real env stays free of the simulator, and module-level imports form no cycle."""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

import agentic_env

ROOT = pathlib.Path(agentic_env.__file__).resolve().parent
REPO = ROOT.parent
#: Source folder of each top-level part of the ``agentic_env`` namespace.
FOLDERS = {"agentic_env": ROOT, "agentic_env.agents": REPO / "agents",
           "agentic_env.real": REPO / "real"}
#: Packages that sit below everything task-, agent- or command-specific.
LOWER = ("geometry", "contract", "robot", "primitives", "sim")
#: What the lower layers must never import.
UPPER = ("tasks", "experts", "envs", "harness", "agents", "real", "cli", "datasets", "rl")
#: Modules that need an optional extra's package the test machine need not have.
OPTIONAL = {"agentic_env.real.drivers.k4a"}


def _modules() -> dict[str, pathlib.Path]:
    modules = {}
    for package, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and parts[-1] == "__main__":
                continue
            modules[".".join((package, *parts))] = path
    return modules


MODULES = _modules()


def _module_level_imports(path: pathlib.Path, name: str) -> set[str]:
    """``agentic_env`` modules imported at module level (not under TYPE_CHECKING or in
    functions), resolved to module names (``from a import b`` yields ``a.b`` when that is a
    module, else ``a``)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                base = ".".join(name.split(".")[: -node.level] + [node.module])
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {module for module in found if module.startswith("agentic_env")}


def _all_imports(path: pathlib.Path) -> set[str]:
    """Every ``agentic_env`` module named in any import statement of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return {module for module in found if module.startswith("agentic_env")}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("module", sorted(set(MODULES) - OPTIONAL))
def test_every_module_imports(module: str) -> None:
    importlib.import_module(module)


def test_lower_layers_never_import_upper_ones() -> None:
    offences = [
        f"{module} imports {imported}"
        for module, path in MODULES.items() if _layer(module) in LOWER
        for imported in _all_imports(path) if _layer(imported) in UPPER
    ]
    assert not offences, "\n".join(offences)


def test_real_env_never_imports_the_simulator() -> None:
    """``real/`` runs on hardware: only its MuJoCo twins (test doubles) may use ``sim/``."""
    offences = [
        f"{module} imports {imported}"
        for module, path in MODULES.items()
        if module.startswith("agentic_env.real") and not module.startswith("agentic_env.real.twin")
        for imported in _all_imports(path)
        if _layer(imported) in ("sim", "envs", "experts")
    ]
    assert not offences, "\n".join(offences)


def test_module_level_imports_have_no_cycle() -> None:
    graph = {module: _module_level_imports(path, module) & set(MODULES)
             for module, path in MODULES.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        stack.append(module)
        for child in sorted(graph[module]):
            if child.startswith(module + "."):
                continue  # a package importing its own submodule is not a cycle
            if state.get(child) == 1:
                return stack[stack.index(child):] + [child]
            if child not in state and (cycle := visit(child)):
                return cycle
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


def test_no_module_is_over_600_lines() -> None:
    long = {module: n for module, path in MODULES.items()
            if (n := len(path.read_text().splitlines())) > 600}
    assert not long, f"split these modules: {long}"
