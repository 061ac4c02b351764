"""What a prediction ran on, for the ledger (:mod:`agentic_env.reports.ledger`): a digest of
the whole tree that runs, the git commit and whether the work tree was dirty, a results
database's SHA-256, and committing a ledger file.

:func:`tree_digests` hashes every file under :data:`TREE_ROOTS` (the simulator, tasks, envs,
PDDL, harness, agents, scenes, assets, the lock file, the scoring code, the target tables) by
content (:func:`content_hash`: TOML and YAML as their parsed data, Python as its syntax
tree, so comments and layout do not count), one digest per folder two levels down
(``agentic_env/harness``, ``agents/alrm``, ``scenes/tasks``), so a drift names where the
code changed. In a git work tree the files are
git's (tracked, plus untracked ones not ignored); elsewhere every file but caches.
:func:`scoring_digest` is the digest of the scoring code alone (:data:`SCORING_ROOTS`), which
``predict check`` compares with the one a run was scored with.
"""

from __future__ import annotations

import ast
import hashlib
import json
import pathlib
import subprocess
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentic_env.errors import InvalidConfigError
from agentic_env.harness.extras import require

#: What runs, relative to the repository root (folders or files; an absent one is skipped).
TREE_ROOTS: tuple[str, ...] = ("agentic_env", "agents", "scenes", "assets",
                               "requirements-lock.txt", "reports", "predictions/targets")
#: The code that scores a run (its verdicts, baselines and findings; the paper's findings and
#: tables are declared and the findings checked in the harness, which reads them from sweeps).
SCORING_ROOTS: tuple[str, ...] = ("agentic_env/reports", "agentic_env/harness/findings.py",
                                  "agentic_env/harness/paper_tables.py",
                                  "agentic_env/stats.py")
#: The packages a run imports the tree's code through (the editable install maps the last
#: four to the repository's top-level folders).
CODE_PACKAGES: tuple[str, ...] = ("agentic_env", "agentic_env.agents", "agentic_env.assets",
                                  "agentic_env.real", "agentic_env.scenes")
_SKIP_PARTS = ("__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache")
_SKIP_SUFFIXES = (".pyc", ".pyo", ".tmp")
_HASH_CHARS = 16


@dataclass(frozen=True)
class GitState:
    """The repository's state when something was frozen or run.

    Attributes:
        commit: ``HEAD``'s full hash (``None``: not a git work tree).
        dirty: whether any file under :data:`TREE_ROOTS` differs from ``HEAD`` (tracked
            changes or untracked files not ignored); ``None`` outside git.
    """

    commit: str | None
    dirty: bool | None


def _git(root: pathlib.Path, *args: str) -> str | None:
    """``git args`` in ``root``: its standard output, ``None`` when git fails or is absent."""
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def in_git(root: pathlib.Path) -> bool:
    """Whether ``root`` is the top of a git work tree."""
    top = _git(root, "rev-parse", "--show-toplevel")
    return top is not None and pathlib.Path(top.strip()).resolve() == root.resolve()


def git_state(root: pathlib.Path, roots: Sequence[str] = TREE_ROOTS) -> GitState:
    """``HEAD`` and whether anything under ``roots`` is uncommitted (``None`` outside git)."""
    if not in_git(root):
        return GitState(None, None)
    head = _git(root, "rev-parse", "HEAD")
    status = _git(root, "status", "--porcelain", "--untracked-files=all", "--", *roots)
    return GitState(None if head is None else head.strip(),
                    None if status is None else bool(status.strip()))


def content_hash(path: pathlib.Path) -> str:
    """Hash of a file's content as data: TOML/YAML parsed, Python as its syntax tree (so
    comments and layout do not count), anything else byte for byte; 16 hex digits.

    Raises:
        InvalidConfigError: a TOML, YAML or Python file does not parse.
    """
    text = path.read_bytes()
    try:
        if path.suffix == ".toml":
            canonical = json.dumps(tomllib.loads(text.decode()), sort_keys=True).encode()
        elif path.suffix in (".yaml", ".yml"):
            yaml = require("yaml", "harness")
            canonical = json.dumps(yaml.safe_load(text), sort_keys=True, default=str).encode()
        elif path.suffix == ".py":
            canonical = ast.dump(ast.parse(text)).encode()
        else:
            canonical = text
    except (tomllib.TOMLDecodeError, SyntaxError, ValueError) as exc:
        raise InvalidConfigError(f"{path}: cannot be read to hash: {exc}") from exc
    return hashlib.sha256(canonical).hexdigest()[:_HASH_CHARS]


def _skipped(path: pathlib.PurePosixPath) -> bool:
    return (any(part in _SKIP_PARTS or part.startswith(".") for part in path.parts)
            or path.suffix in _SKIP_SUFFIXES)


def tree_files(root: pathlib.Path, roots: Sequence[str] = TREE_ROOTS) -> list[str]:
    """The files under ``roots`` (POSIX, relative to ``root``, sorted): git's tracked and
    untracked-but-not-ignored files in a git work tree, else every file; caches and hidden
    files left out either way."""
    present = [r for r in roots if (root / r).exists()]
    if not present:
        return []
    listed = (_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                   *present) if in_git(root) else None)
    if listed is not None:
        names: Iterable[str] = (name for name in listed.split("\0") if name)
    else:
        names = (p.relative_to(root).as_posix() for r in present
                 for p in ([root / r] if (root / r).is_file() else (root / r).rglob("*")))
    return sorted({n for n in names if (root / n).is_file()
                   and not _skipped(pathlib.PurePosixPath(n))})


def group_of(path: str) -> str:
    """The folder a file's digest is grouped under: its first two path parts when it lies
    deeper (``agentic_env/harness/run.py`` -> ``agentic_env/harness``), else the file."""
    parts = pathlib.PurePosixPath(path).parts
    return "/".join(parts[:2]) if len(parts) > 2 else path


def tree_digests(root: pathlib.Path, roots: Sequence[str] = TREE_ROOTS) -> dict[str, str]:
    """Group (:func:`group_of`) -> digest of its files' paths and :func:`content_hash`
    contents, for every file :func:`tree_files` lists, sorted by group.

    Raises:
        InvalidConfigError: a TOML, YAML or Python file does not parse.
    """
    groups: dict[str, list[str]] = {}
    for name in tree_files(root, roots):
        groups.setdefault(group_of(name), []).append(f"{name}\0{content_hash(root / name)}\n")
    return {group: hashlib.sha256("".join(groups[group]).encode()).hexdigest()[:_HASH_CHARS]
            for group in sorted(groups)}


def combined(digests: dict[str, str]) -> str:
    """One digest of several (16 hex digits)."""
    text = "".join(f"{k}\0{v}\n" for k, v in sorted(digests.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:_HASH_CHARS]


def scoring_digest(root: pathlib.Path) -> str:
    """One digest of the scoring code (:data:`SCORING_ROOTS`) as it is now."""
    return combined(tree_digests(root, SCORING_ROOTS))


def code_elsewhere(root: pathlib.Path,
                   packages: Sequence[str] = CODE_PACKAGES) -> list[str]:
    """Those of ``packages`` this interpreter would import from outside ``root``, each as
    ``"package (folder)"``: a run would then execute code the ledger did not hash (an
    editable install of another checkout maps ``agentic_env.agents`` to that checkout's
    ``agents/`` even when ``agentic_env`` itself comes from ``root``)."""
    import importlib.util

    root = root.resolve()
    elsewhere = []
    for name in packages:
        spec = importlib.util.find_spec(name)
        folders = list(spec.submodule_search_locations or []) if spec is not None else []
        outside = [f for f in folders if not pathlib.Path(f).resolve().is_relative_to(root)]
        if spec is None or outside or not folders:
            elsewhere.append(f"{name} ({', '.join(outside) or 'not found'})")
    return elsewhere


def file_sha256(path: pathlib.Path) -> str:
    """The full SHA-256 of a file's bytes (hex)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def committed(root: pathlib.Path, path: pathlib.Path) -> bool | None:
    """Whether ``path`` is tracked and has no uncommitted change (``None`` outside git)."""
    if not in_git(root):
        return None
    name = path.resolve().relative_to(root.resolve()).as_posix()
    tracked = _git(root, "ls-files", "--error-unmatch", "--", name)
    status = _git(root, "status", "--porcelain", "--", name)
    return tracked is not None and status is not None and not status.strip()


def commit_file(root: pathlib.Path, path: pathlib.Path, message: str) -> str | None:
    """``git add`` ``path`` and commit that file alone (whatever else is staged stays staged,
    uncommitted) with ``message``; the new commit's hash, ``None`` when ``root`` is no git
    work tree.

    Raises:
        RuntimeError: git refused the commit (its message says why).
    """
    if not in_git(root):
        return None
    name = path.resolve().relative_to(root.resolve()).as_posix()
    for args in (("add", "--", name), ("commit", "--only", "-m", message, "--", name)):
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              check=False, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"git {args[0]} {name}: {(done.stderr or done.stdout).strip()}")
    head = _git(root, "rev-parse", "HEAD")
    return None if head is None else head.strip()
