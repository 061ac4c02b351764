"""What the ledger hashes and commits: the whole tree by folder, git's view of the files,
the dirty flag and a commit of one ledger file alone (on a scratch git repository)."""

from __future__ import annotations

import pathlib
import subprocess

from agentic_env.reports import provenance


def git(root: pathlib.Path, *args: str) -> str:
    """Run git in ``root`` (the test's scratch repository) and return its output."""
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def scratch_repo(root: pathlib.Path) -> pathlib.Path:
    """A git repository with a little of each tree root, committed."""
    (root / "agentic_env" / "harness").mkdir(parents=True)
    (root / "agentic_env" / "harness" / "run.py").write_text("X = 1\n")
    (root / "agentic_env" / "__init__.py").write_text("")
    (root / "scenes").mkdir()
    (root / "scenes" / "lab.toml").write_text("light = 1.0\n")
    (root / "requirements-lock.txt").write_text("numpy==2.0\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "user.name", "Test")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root


def test_the_tree_is_hashed_by_folder_and_by_content(tmp_path: pathlib.Path) -> None:
    root = scratch_repo(tmp_path)
    digests = provenance.tree_digests(root)
    assert set(digests) == {"agentic_env/__init__.py", "agentic_env/harness",
                            "requirements-lock.txt", "scenes/lab.toml"}
    (root / "agentic_env" / "harness" / "run.py").write_text("# a comment\nX  =  1\n")
    assert provenance.tree_digests(root) == digests  # layout is no change
    (root / "agentic_env" / "harness" / "run.py").write_text("X = 2\n")
    (root / "agentic_env" / "harness" / "debug.log").write_text("ignored by git\n")
    (root / "agentic_env" / "harness" / "__pycache__").mkdir()
    (root / "agentic_env" / "harness" / "__pycache__" / "run.pyc").write_bytes(b"\0")
    now = provenance.tree_digests(root)
    assert [k for k in now if now[k] != digests[k]] == ["agentic_env/harness"]
    assert "agentic_env/harness/debug.log" not in provenance.tree_files(root)
    (root / "agentic_env" / "harness" / "new.py").write_text("Y = 1\n")  # untracked counts
    assert "agentic_env/harness/new.py" in provenance.tree_files(root)


def test_outside_git_every_file_but_caches_counts(tmp_path: pathlib.Path) -> None:
    (tmp_path / "agents" / "alrm").mkdir(parents=True)
    (tmp_path / "agents" / "alrm" / "planner.py").write_text("A = 1\n")
    (tmp_path / "agents" / "alrm" / ".hidden").write_text("x")
    assert provenance.tree_files(tmp_path) == ["agents/alrm/planner.py"]
    assert provenance.git_state(tmp_path) == provenance.GitState(None, None)
    assert provenance.commit_file(tmp_path, tmp_path / "agents/alrm/planner.py", "m") is None


def test_git_state_and_a_commit_of_one_file_alone(tmp_path: pathlib.Path) -> None:
    root = scratch_repo(tmp_path)
    state = provenance.git_state(root)
    assert state.commit == git(root, "rev-parse", "HEAD").strip() and state.dirty is False
    (root / "scenes" / "lab.toml").write_text("light = 2.0\n")
    git(root, "add", "scenes/lab.toml")  # someone else's staged change
    assert provenance.git_state(root).dirty is True
    ledger_file = root / "predictions" / "p.yaml"
    ledger_file.parent.mkdir()
    ledger_file.write_text("id: p\n")
    assert provenance.committed(root, ledger_file) is False
    commit = provenance.commit_file(root, ledger_file, "Ledger: freeze p revision 1")
    assert commit == git(root, "rev-parse", "HEAD").strip()
    assert git(root, "show", "--name-only", "--format=%s", "HEAD").split() == [
        "Ledger:", "freeze", "p", "revision", "1", "predictions/p.yaml"]
    assert "M  scenes/lab.toml" in git(root, "status", "--porcelain")  # still staged
    assert provenance.committed(root, ledger_file) is True
    assert len(provenance.file_sha256(ledger_file)) == 64


def test_code_imported_from_outside_the_root_is_named(tmp_path: pathlib.Path) -> None:
    """A run must execute the tree it hashes: every package the code is imported through
    comes from this checkout, and from any other root all of them are named."""
    here = pathlib.Path(provenance.__file__).resolve().parents[2]
    assert provenance.code_elsewhere(here) == []
    elsewhere = provenance.code_elsewhere(tmp_path)
    assert [entry.split(" ")[0] for entry in elsewhere] == list(provenance.CODE_PACKAGES)
    assert all(str(here) in entry for entry in elsewhere)
    assert provenance.code_elsewhere(here, ("agentic_env.no_such_package",)) == [
        "agentic_env.no_such_package (not found)"]
