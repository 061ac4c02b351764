"""Sphinx configuration of the agentic_env docs site.

Build it as scripts/test.sh does (warnings are errors, nitpicky cross-references):

    .venv/bin/sphinx-build -W -n --keep-going -b html docs docs/_build/html

The CLI reference and the result pages are generated into docs/_generated/ on every build
(agentic_env.cli.docs_pages), from the commands' parsers and the predictions ledger.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import inspect
import pathlib
import re

from sphinx.util.nodes import make_refnode

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent

project = "agentic_env"
author = "the agentic_env authors"
copyright = "the agentic_env authors"  # noqa: A001 (Sphinx's name)
release = "0.1.0"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md"]
myst_heading_anchors = 3
html_theme = "alabaster"
html_title = "agentic_env"
html_static_path: list[str] = []
html_theme_options = {"description": "VLM/LLM robot agents on a MuJoCo workcell",
                      "fixed_sidebar": True, "page_width": "1200px", "body_max_width": "none"}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}

# --- autodoc: the project's Google-style docstrings ----------------------------------------
# Members defined in each module only: a package's re-exports are documented where they are
# defined, so every name has one target.
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_attr_annotations = True
# Attributes sections as fields, so a field that is also a property is described once.
napoleon_use_ivar = True
# Heavy optional packages the documented modules may import at module level.
autodoc_mock_imports = ["torch", "lerobot", "ray", "litellm", "transformers", "rtde_control",
                        "rtde_receive", "pyrealsense2", "pyk4a"]

# --- nitpicky: every cross-reference must resolve -------------------------------------------
# Third-party types are not documented here (no intersphinx: the build runs offline), so
# references into these packages are not checked.
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|mujoco|gymnasium|gym|argparse|pathlib|collections|typing|enum|"
               r"dataclasses|datetime|sqlite3|subprocess|threading|concurrent|multiprocessing|"
               r"os|io|logging|types|random|re|json|weakref|contextlib|abc|socket|asyncio|"
               r"PIL|mcp|yaml|cv2|torch|lerobot|ray|litellm|serial|imageio|mink|"
               r"unified_planning|matplotlib|pyarrow|RestrictedPython|starlette|uvicorn)"
               r"(\..*)?"),
    # Napoleon reads the text before a colon in Returns/Attributes entries as a type: prose
    # ("the sheet"), lists of fields ("n / successes") and units ("m", "rad") are no types.
    (r"py:class", r".*[\s/'\"].*|[a-z][a-z0-9_]*"),
    (r"py:(func|mod|class)", r"time\..*|timeit|atexit|string\..*"),
    # A PEP 695 type parameter (``def reshaped[Step](...)``), which Sphinx cannot resolve.
    (r"py:class", r"Step"),
    # Napoleon reads the first word of a constant's docstring before a colon as its type.
    (r"py:class", r"Depth|Gap|Tasks|Seeds"),
]
# Two objects of one short name (e.g. two modules' ``main``) make a
# short reference ambiguous; it resolves to the first and is not an error here.
suppress_warnings = ["ref.python"]


def _generate(app: object, config: object) -> None:
    from agentic_env.cli.docs_pages import generate

    generate(ROOT, DOCS / "_generated")


def _resolve(app, env, node, contnode):  # noqa: ANN001, ANN202 (Sphinx's signature)
    """Resolve the Python references Sphinx's own lookup misses, as Python would read them.

    The docstrings shorten names (``RealEnv``, ``Place.IN``, ``holding.HeldObject``) to what
    the referring module imports, and name objects by the package that re-exports them. Such
    a name is looked up in the referring module (and class), or imported when it is a full
    ``agentic_env`` name; what it finds is linked where the reference documents it and shown
    as code where it does not (a private name, a module outside the public API). A name that
    Python cannot find either stays unresolved and fails the nitpicky build: it is stale.
    """
    if node.get("refdomain") != "py":
        return None
    target = re.sub(r"\s+", "", node["reftarget"]).lstrip(".~")
    domain = env.get_domain("py")
    found = _lookup(target, node.get("py:module"), node.get("py:class"))
    if found is None:  # a name the module never imports: a documented object's, if only one
        head, _, rest = target.partition(".")
        owners = [name for name in domain.objects if name.endswith("." + head)]
        if len(owners) == 1:
            found = _lookup(".".join(filter(None, (owners[0], rest))), None, None)
    if found is None:
        return None
    for name in _names(found, target):
        if name in domain.objects:
            entry = domain.objects[name]
            return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id,
                                contnode, name)
    return contnode


_MISSING = object()


def _attribute(owner: object, name: str) -> object:
    value = getattr(owner, name, _MISSING)
    if value is not _MISSING:
        if (inspect.ismodule(value) or inspect.isclass(value) or inspect.isroutine(value)
                or isinstance(value, property)):
            return value
        # data (a constant, a field's default): named by where it was found
        where = (owner.__name__ if inspect.ismodule(owner)
                 else f"{getattr(owner, '__module__', '')}.{getattr(owner, '__qualname__', '')}")
        return f"{where}.{name}"
    if inspect.ismodule(owner):
        if name in getattr(owner, "__annotations__", {}):
            return f"{owner.__name__}.{name}"
        typed = _type_checking_imports(owner).get(name)  # imported for annotations only
        return _lookup(typed, None, None) if typed else _MISSING
    if isinstance(owner, type) and (name in getattr(owner, "__annotations__", {})
                                    or f"self.{name} " in _source(owner)):
        return f"{owner.__module__}.{owner.__qualname__}.{name}"  # a field, or set in __init__
    return _MISSING


@functools.cache
def _source(owner: type) -> str:
    try:
        return inspect.getsource(owner)
    except (OSError, TypeError):
        return ""


@functools.cache
def _type_checking_imports(module: object) -> dict[str, str]:
    """Name -> full name of what ``module`` imports under ``if TYPE_CHECKING:``."""
    try:
        tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    except (OSError, TypeError, SyntaxError):
        return {}
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom) and inner.module and not inner.level:
                    names.update({a.asname or a.name: f"{inner.module}.{a.name}"
                                  for a in inner.names})
    return names


def _walk(owner: object, parts: list[str]) -> object | None:
    for part in parts:
        if isinstance(owner, str):  # a field: nothing below it
            return None
        owner = _attribute(owner, part)
        if owner is _MISSING:
            return None
    return owner


def _lookup(target: str, module: str | None, cls: str | None) -> object | None:
    """The object (or, for a field, its full name) ``target`` names, from the referring
    ``module`` and ``cls``, or imported as a full name; ``None``: Python finds nothing."""
    parts = target.split(".")
    scopes = []
    if module:
        with contextlib.suppress(Exception):
            owner = importlib.import_module(module)
            if cls:
                scopes.append(_walk(owner, cls.split(".")))
            scopes.append(owner)
    for scope in scopes:
        if scope is not None and not isinstance(scope, str):
            found = _walk(scope, parts)
            if found is not None:
                return found
    for end in range(len(parts), 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:end]))
        except Exception:  # noqa: BLE001 (not a module: try a shorter prefix)
            continue
        return _walk(owner, parts[end:])
    return None


def _names(found: object, target: str) -> list[str]:
    """Full names ``found`` may be documented under, most specific first."""
    if isinstance(found, str):
        return [found]
    if inspect.ismodule(found):
        return [found.__name__]
    names = []
    owner = getattr(found, "__module__", None)
    qualname = getattr(found, "__qualname__", None)
    if owner and qualname:
        names.append(f"{owner}.{qualname}")
    if isinstance(found, property) and found.fget is not None:
        names.append(f"{found.fget.__module__}.{found.fget.__qualname__}")
    return names + [target]


def setup(app):  # noqa: ANN001, ANN201 (Sphinx's signature)
    app.connect("config-inited", _generate)
    app.connect("missing-reference", _resolve)
