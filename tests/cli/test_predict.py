"""``agentic-env predict`` on a scratch git repository: the freeze commits itself (its file
alone), ``annotate`` appends, a run records its provenance and ``check`` verifies it (the
database, its rows' k/n, the scoring code, code changed under the run)."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from agentic_env.cli.predict import main as predict_main
from agentic_env.harness.db import Finished, ResultStore
from agentic_env.harness.episode import EpisodeResult
from agentic_env.reports import ledger, ledger_history, provenance

SWEEP = "sweeps/s.yaml"


def _git(root: pathlib.Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture()
def repo(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """A git repository with a sweep, a profile, some harness and scoring code (its runs
    execute this checkout's code, which stands in for the scratch tree's)."""
    monkeypatch.setattr(provenance, "code_elsewhere", lambda root: [])
    (tmp_path / "sweeps").mkdir()
    (tmp_path / SWEEP).write_text("name: s\ngrid: {tasks: [sorting], models: [sim-oracle]}\n")
    for path, text in (("agentic_env/oracle/profiles/m.toml", "[modules.checker]\nx = 1\n"),
                       ("agentic_env/harness/run.py", "STEPS = 1\n"),
                       ("agentic_env/reports/score.py", "TOLERANCE = 1\n")):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "config", "user.email", "test@example.com")
    _git(tmp_path, "config", "user.name", "Test")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "start")
    return tmp_path


def _freeze(root: pathlib.Path, *extra: str) -> int:
    return predict_main(["--root", str(root), "freeze", "p", "--sweep", SWEEP, "--seeds",
                         "0:3", "--target", "Paper Table I", *extra])


def test_the_freeze_commits_its_file_alone(repo: pathlib.Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "agentic_env/harness/run.py").write_text("STEPS = 2\n")
    _git(repo, "add", "agentic_env/harness/run.py")  # another engineer's staged change
    assert _freeze(repo) == 0
    assert "committed p.yaml alone" in capsys.readouterr().out
    assert _git(repo, "show", "--name-only", "--format=%s", "HEAD").splitlines() == [
        "Ledger: freeze p revision 1 (first freeze)", "", "predictions/p.yaml"]
    assert "M  agentic_env/harness/run.py" in _git(repo, "status", "--porcelain")
    entry = ledger.load_prediction(repo, "p").current
    assert entry.dirty is True and entry.commit is not None  # frozen on a dirty tree
    # an annotation is appended, committed, and refused twice
    base = ["--root", str(repo), "annotate", "p", "--seen-before", "commit abc"]
    assert predict_main(base) == 0
    assert "annotated as frozen after the target" in _git(repo, "log", "-1", "--format=%s")
    assert predict_main(base) == 2
    assert predict_main(["--root", str(repo), "freeze", "p", "--seen-before", "x"]) == 2
    assert "predict annotate p" in capsys.readouterr().out


def test_no_commit_leaves_it_uncommitted_and_the_run_says_so(
        repo: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert _freeze(repo, "--no-commit") == 0
    _fake_sweep(monkeypatch, won=2)
    assert predict_main(["--root", str(repo), "run", "p"]) == 0
    run = ledger.load_prediction(repo, "p").current.runs[-1]
    assert run.freeze_committed is False
    assert "FREEZE NOT COMMITTED BEFORE THE RUN" in ledger_history.run_provenance(run)


def _fake_sweep(monkeypatch: pytest.MonkeyPatch, won: int,
                during: pathlib.Path | None = None) -> None:
    """``run_sweep`` replaced by one that stores ``won`` successes (and edits ``during``,
    as a change made while the sweep runs)."""
    import agentic_env.harness.run

    def run_sweep(sweep: object, db: pathlib.Path, workers: int = 1) -> None:
        with ResultStore(db) as store:
            for i, spec in enumerate(sweep.specs):  # type: ignore[attr-defined]
                result = EpisodeResult(spec=spec, success=i < won, progress=1.0, score=1.0,
                                       wall_s=1.0, sim_s=1.0, failure=None)
                store.record(Finished(key=spec.key(), result=result, run_s=0.1, worker="t"))
        if during is not None:
            during.write_text("STEPS = 99\n")

    monkeypatch.setattr(agentic_env.harness.run, "run_sweep", run_sweep)


def test_a_run_records_its_provenance_and_check_verifies_it(
        repo: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert _freeze(repo) == 0
    _fake_sweep(monkeypatch, won=2)
    assert predict_main(["--root", str(repo), "run", "p"]) == 0
    run = ledger.load_prediction(repo, "p").current.runs[-1]
    assert run.commit == _git(repo, "rev-parse", "HEAD").strip() and run.dirty is False
    assert run.freeze_committed is True and run.code_changed is False
    assert run.counts == {"sim-oracle": (2, 3)} and run.db_sha256 and run.scoring
    capsys.readouterr()
    assert predict_main(["--root", str(repo), "check", "p"]) == 0
    out = capsys.readouterr().out
    assert "database as recorded (sha256 matches)" in out
    assert "every row's k/n as recorded (1 rows)" in out
    assert "scored with the same scoring code as recorded" in out
    # the scoring code changes: check says its figures are today's code's
    (repo / "agentic_env/reports/score.py").write_text("TOLERANCE = 2\n")
    assert predict_main(["--root", str(repo), "check", "p"]) == 1  # the tree drifted too
    out = capsys.readouterr().out
    assert "SCORING CODE DIFFERS FROM THE ONE THIS RUN WAS SCORED WITH" in out
    assert "tree changed: agentic_env/reports" in out
    # the database is rewritten with other results
    db = repo / run.db
    with ResultStore(db) as store:
        store._conn.execute("UPDATE episodes SET success = 0")
    predict_main(["--root", str(repo), "check", "p"])
    out = capsys.readouterr().out
    assert "DATABASE CHANGED SINCE THE RUN" in out
    assert "ROWS' K/N DIFFER FROM THE RUN'S RECORD: sim-oracle 2/3 recorded, 0/3 now" in out


def test_code_changed_under_a_run_is_on_record(
        repo: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert _freeze(repo) == 0
    _fake_sweep(monkeypatch, won=1, during=repo / "agentic_env/harness/run.py")
    assert predict_main(["--root", str(repo), "run", "p"]) == 0
    assert "WARNING: the code changed while p ran" in capsys.readouterr().out
    prediction = ledger.load_prediction(repo, "p")
    assert prediction.current.runs[-1].code_changed is True
    assert "CODE CHANGED DURING THE RUN" in "\n".join(ledger_history.history(prediction))


def test_a_run_of_code_imported_from_another_checkout_is_refused(
        repo: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The scratch tree is not the code this interpreter imports (this checkout's editable
    install): a run would execute code the ledger never hashed, so it is refused before
    anything is booked."""
    monkeypatch.undo()  # the real check
    assert _freeze(repo, "--no-commit") == 0
    before = (repo / "predictions" / "p.yaml").read_text()
    assert predict_main(["--root", str(repo), "run", "p"]) == 2
    out = capsys.readouterr().out
    assert "refused" in out and "agentic_env.agents" in out and "pip install -e" in out
    assert (repo / "predictions" / "p.yaml").read_text() == before
