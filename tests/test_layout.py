"""The package layout's rules: every module imports, each layer imports only the layers below
it, the real env stays free of the simulator, and imports form no cycle (imports inside
functions count: they run, only later)."""

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
#: The layers of ``agentic_env``, bottom to top (the README's "Layout"): a module imports its
#: own package and the packages of lower layers only; packages side by side in one layer
#: never import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("geometry", "entry_points", "visualize", "text", "stats"),
    ("robot",),
    ("contract",),
    ("primitives",),
    ("sim",),
    ("pddl",),
    ("tasks",),
    ("experts",),
    ("envs", "registry"),
    ("agents", "real"),
    ("oracle",),
    ("harness", "datasets", "rl"),
    ("bench",),
    ("reports",),
    ("cli",),
)
#: Modules that need an optional extra's package the test machine need not have.
OPTIONAL = {"agentic_env.real.drivers.k4a", "agentic_env.envs.lerobot",
            *(f"agentic_env.envs.lerobot.{name}" for name in ("config", "env", "render",
                                                               "suite"))}


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


def _imports(path: pathlib.Path, name: str, type_checking: bool) -> set[str]:
    """``agentic_env`` modules ``path`` (module ``name``) imports anywhere, in functions too,
    resolved to module names (``from a import b`` yields ``a.b`` when that is a module, else
    ``a``); with ``type_checking``, also those imported only under ``TYPE_CHECKING``."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    if not type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skipped |= {id(inner) for branch in node.body for inner in ast.walk(branch)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {module for module in found if module.startswith("agentic_env")}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


RANK = {package: rank for rank, layer in enumerate(LAYERS) for package in layer}


@pytest.mark.parametrize("module", sorted(set(MODULES) - OPTIONAL))
def test_every_module_imports(module: str) -> None:
    importlib.import_module(module)


def test_every_layer_imports_only_lower_layers() -> None:
    """Annotations count too: a type named under ``TYPE_CHECKING`` is still a dependency."""
    offences = []
    for module, path in MODULES.items():
        if module == "agentic_env":
            continue  # the namespace itself: it registers the env ids
        if _layer(module) not in RANK:
            offences.append(f"{module}: add {_layer(module)!r} to a layer of LAYERS")
            continue
        for imported in _imports(path, module, type_checking=True):
            layer = _layer(imported)
            if layer != _layer(module) and RANK.get(layer, len(LAYERS)) >= RANK[_layer(module)]:
                offences.append(f"{module} imports {imported}")
    assert not offences, "\n".join(sorted(offences))


def test_harness_never_imports_reports() -> None:
    """``harness/`` runs and stores episodes; ``reports/`` only analyses what it stored, so
    the arrow points one way (the layers say so too; this names the rule)."""
    offences = [f"{module} imports {imported}" for module, path in MODULES.items()
                if _layer(module) == "harness"
                for imported in _imports(path, module, type_checking=True)
                if _layer(imported) == "reports"]
    assert not offences, "\n".join(offences)


def test_real_env_never_imports_the_simulator() -> None:
    """``real/`` runs on hardware: only its MuJoCo twins (test doubles) may use ``sim/``."""
    offences = [
        f"{module} imports {imported}"
        for module, path in MODULES.items()
        if module.startswith("agentic_env.real") and not module.startswith("agentic_env.real.twin")
        for imported in _imports(path, module, type_checking=True)
        if _layer(imported) in ("sim", "envs", "experts")
    ]
    assert not offences, "\n".join(offences)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the modules importing it runs: what it imports (in functions too, not under
    ``TYPE_CHECKING``) and their packages, but not its own packages or subpackages (a package
    importing its own submodule is not a cycle)."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        targets: set[str] = set()
        for imported in _imports(path, module, type_checking=False):
            parts = imported.split(".")
            targets |= {".".join(parts[:n]) for n in range(2, len(parts) + 1)}
        graph[module] = {target for target in targets & set(MODULES)
                         if not module.startswith(target + ".")
                         and not target.startswith(module + ".") and target != module}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component of ``graph`` that has one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[set[str]] = []

    def connect(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for child in sorted(graph[module]):
            if child not in index:
                connect(child)
                low[module] = min(low[module], low[child])
            elif child in stack:
                low[module] = min(low[module], index[child])
        if low[module] == index[module]:
            component = set(stack[stack.index(module):])
            del stack[stack.index(module):]
            if len(component) > 1:
                components.append(component)

    for module in sorted(graph):
        if module not in index:
            connect(module)
    cycles = []
    for component in components:
        start = min(component)
        paths = {start: [start]}
        todo = [start]
        while todo:  # breadth first: the shortest way back to the start
            module = todo.pop(0)
            for child in sorted(graph[module] & component):
                if child == start:
                    cycles.append(paths[module] + [start])
                    todo = []
                    break
                if child not in paths:
                    paths[child] = paths[module] + [child]
                    todo.append(child)
    return sorted(cycles)


def test_imports_have_no_cycle() -> None:
    cycles = _cycles(_import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_module_is_over_600_lines() -> None:
    long = {module: n for module, path in MODULES.items()
            if (n := len(path.read_text().splitlines())) > 600}
    assert not long, f"split these modules: {long}"
