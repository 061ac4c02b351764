"""The predictions ledger: hashes by content, freeze and revision, the refused run, the
history, and ``agentic-env predict`` on a scratch repository."""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

from agentic_env.cli.predict import main as predict_main
from agentic_env.errors import InvalidConfigError
from agentic_env.reports import ledger, ledger_history, provenance
from agentic_env.reports.scorecard import scorecard

SWEEP = "sweeps/s.yaml"


@pytest.fixture(autouse=True)
def _code_from_the_scratch_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scratch repositories' runs execute this checkout's code, which stands in for
    theirs (``predict run`` would refuse it: :func:`provenance.code_elsewhere`)."""
    monkeypatch.setattr(provenance, "code_elsewhere", lambda root: [])


def _repo(tmp_path: pathlib.Path) -> pathlib.Path:
    (tmp_path / "sweeps").mkdir()
    (tmp_path / SWEEP).write_text("name: s\ngrid: {tasks: [sorting]}\n")
    profiles = tmp_path / "agentic_env" / "oracle" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "m.toml").write_text("# a model\n[modules.checker]\nsuccess = 0.9\n")
    return tmp_path


def _new(root: pathlib.Path) -> ledger.Prediction:
    return ledger.freeze(root, ledger.Prediction(
        id="p", target="Paper Table I", sweep=SWEEP, seeds={"start": 1000, "count": 20},
        paper_trials=20))


def test_a_comment_is_no_revision_but_a_number_is(tmp_path: pathlib.Path) -> None:
    root = _repo(tmp_path)
    prediction = _new(root)
    assert set(prediction.current.hashes) == {SWEEP, "agentic_env/oracle/profiles/m.toml"}
    profile = root / "agentic_env/oracle/profiles/m.toml"
    profile.write_text("# reworded\n[modules.checker]\nsuccess   = 0.9\n")
    assert not ledger.check_current(root, prediction)
    profile.write_text("[modules.checker]\nsuccess = 0.8\n")
    (root / "agentic_env/sim/realism").mkdir(parents=True)
    (root / "agentic_env/sim/realism/world.toml").write_text("x = 1\n")
    drift = ledger.check_current(root, prediction)
    assert drift.changed == ("agentic_env/oracle/profiles/m.toml",)
    assert drift.added == ("agentic_env/sim/realism/world.toml",)


def test_a_revision_needs_a_reason_and_is_marked_after_a_run(tmp_path: pathlib.Path) -> None:
    root = _repo(tmp_path)
    prediction = ledger.record_run(_new(root), "runs/db", "3/8 rows agree")
    with pytest.raises(InvalidConfigError, match="nothing changed"):
        ledger.freeze(root, prediction, "again")
    (root / "agentic_env/oracle/profiles/m.toml").write_text("[modules.checker]\nsuccess = 1\n")
    with pytest.raises(InvalidConfigError, match="reason"):
        ledger.freeze(root, prediction)
    revised = ledger.freeze(root, prediction, "checker errors persist")
    assert [e.after_target for e in revised.entries] == [False, True]
    ledger.save_prediction(root, revised)
    loaded = ledger.load_prediction(root, "p")
    assert loaded == revised
    lines = ledger_history.history(loaded)
    assert "first freeze" in lines[0] and "3/8 rows agree" in lines[1]
    assert "REVISED AFTER SEEING THE TARGET" in lines[2]


def test_the_command_freezes_checks_and_refuses_a_drifted_run(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _repo(tmp_path)
    base = ["--root", str(root)]
    assert predict_main([*base, "freeze", "p", "--sweep", SWEEP, "--seeds", "1000:20",
                         "--target", "Paper Table I"]) == 0
    assert (root / "predictions" / "p.yaml").is_file()
    assert predict_main([*base, "check"]) == 0
    (root / "agentic_env/oracle/profiles/m.toml").write_text("[modules.checker]\nsuccess = 1\n")
    assert predict_main([*base, "check", "p"]) == 1
    assert predict_main([*base, "run", "p"]) == 2
    out = capsys.readouterr().out
    assert "refused" in out and "m.toml" in out
    assert predict_main([*base, "freeze", "p", "--seeds", "0:5"]) == 2  # seeds are frozen
    assert predict_main([*base, "freeze", "p", "--reason", "new checker rate"]) == 0
    assert predict_main([*base, "check"]) == 0
    assert len(ledger.load_prediction(root, "p").entries) == 2


def test_a_target_seen_before_the_ledger_marks_the_first_freeze(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _repo(tmp_path)
    fresh = _new(root)
    assert not fresh.seen and fresh.current.after_target is False
    seen = ledger.freeze(root, ledger.Prediction(
        id="q", target="Paper Fig. 7", sweep=SWEEP, seeds={"start": 5, "count": 2},
        seen_before="an earlier sweep outside the ledger"))
    assert seen.seen and [e.after_target for e in seen.entries] == [True]
    ledger.save_prediction(root, seen)
    loaded = ledger.load_prediction(root, "q")
    assert loaded == seen
    lines = ledger_history.history(loaded)
    assert lines[0] == ("TARGET SEEN BEFORE THE FIRST FREEZE: an earlier sweep outside the "
                        "ledger")
    assert "FROZEN AFTER SEEING THE TARGET" in lines[1]
    # a prediction without it keeps its file free of the key
    ledger.save_prediction(root, fresh)
    assert "seen_before" not in ledger.ledger_path(root, "p").read_text()
    base = ["--root", str(root)]
    assert predict_main([*base, "freeze", "r", "--sweep", SWEEP, "--seeds", "9:2", "--target",
                         "T", "--seen-before", "runs/sweeps", "--depends", "extra/*.py"]) == 0
    assert "frozen after seeing the target" in capsys.readouterr().out
    made = ledger.load_prediction(root, "r")
    assert made.seen_before == "runs/sweeps" and made.depends[-1] == "extra/*.py"
    assert predict_main([*base, "freeze", "r", "--seen-before", "x"]) == 2  # fixed at birth
    assert predict_main([*base, "check", "r"]) == 0
    assert "not run yet" in capsys.readouterr().out


def test_check_after_a_killed_run_says_which_revision_it_scores(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Revision 1 was run; revision 2's run is killed before it finishes: ``check`` must not
    pass revision 1's score off as the newest, and must say how to finish revision 2's run."""
    import agentic_env.harness.run

    root = _repo(tmp_path)
    ledger.save_prediction(root, ledger.record_run(_new(root), "runs/rev1.db", "3/8 agree"))
    (root / "agentic_env/oracle/profiles/m.toml").write_text("[modules.checker]\nsuccess = 1\n")

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # the sweep stopped half way (Ctrl-C, kill, power cut)

    monkeypatch.setattr(agentic_env.harness.run, "run_sweep", killed)
    with pytest.raises(KeyboardInterrupt):
        predict_main(["--root", str(root), "run", "p", "--revise", "new checker rate"])
    capsys.readouterr()
    assert predict_main(["--root", str(root), "check", "p"]) == 0
    out = capsys.readouterr().out
    assert "REVISION 2'S RUN IS INCOMPLETE" in out
    assert "agentic-env predict run p" in out  # what to do
    assert "newest run (revision 1" not in out
    assert "SCORING REVISION 1'S RUN" in out and "not revision 2's" in out
    assert "INCOMPLETE" in "\n".join(ledger_history.history(ledger.load_prediction(root, "p")))


def test_a_finished_run_completes_its_started_record_and_a_new_revision_is_unrun(
        tmp_path: pathlib.Path) -> None:
    """A run is booked incomplete when it starts (once, however often it is resumed) and
    completed when it finishes; a ledger file of finished runs reads as before."""
    root = _repo(tmp_path)
    started = ledger.start_run(_new(root), "runs/rev1.db")
    assert ledger.start_run(started, "runs/rev1.db").current.runs == started.current.runs
    assert [r.complete for r in started.current.runs] == [False] and started.seen
    ledger.save_prediction(root, started)
    assert ledger.load_prediction(root, "p") == started
    assert "complete: false" in ledger.ledger_path(root, "p").read_text()
    done = ledger.record_run(started, "runs/rev1.db", "3/8 agree")
    assert [(r.db, r.complete) for r in done.current.runs] == [("runs/rev1.db", True)]
    ledger.save_prediction(root, done)
    assert "complete" not in ledger.ledger_path(root, "p").read_text()
    (root / "agentic_env/oracle/profiles/m.toml").write_text("[modules.checker]\nsuccess = 1\n")
    revised = ledger.freeze(root, done, "new checker rate")
    lines = scorecard(root, revised)
    assert lines[0].startswith("REVISION 2 WAS NEVER RUN")
    assert lines[1].startswith("SCORING REVISION 1'S RUN")


def test_check_names_the_newest_revision_when_no_run_of_it_or_before_it_finished(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Revision 1's only run was killed and revision 2 was frozen since: with nothing to
    score, ``check`` still names revision 2 as unrun and the command that runs it (not a
    bare 'not run yet' beside revision 1's incomplete run)."""
    root = _repo(tmp_path)
    killed = ledger.start_run(_new(root), "runs/rev1.db")
    (root / "agentic_env/oracle/profiles/m.toml").write_text("[modules.checker]\nsuccess = 1\n")
    ledger.save_prediction(root, ledger.freeze(root, killed, "new checker rate"))
    assert predict_main(["--root", str(root), "check", "p"]) == 0
    out = capsys.readouterr().out
    assert "REVISION 2 WAS NEVER RUN: run it with 'agentic-env predict run p'" in out
    assert "no run of any revision finished" in out
    assert "SCORING" not in out and "newest run" not in out


def test_a_freeze_records_the_whole_tree_and_the_settings(tmp_path: pathlib.Path) -> None:
    """Code outside ``depends`` (the harness) and a hand-edited trial count are drifts too."""
    root = _repo(tmp_path)
    (root / "agentic_env" / "harness").mkdir()
    (root / "agentic_env" / "harness" / "run.py").write_text("STEPS = 1\n")
    prediction = _new(root)
    entry = prediction.current
    assert entry.tree is not None and "agentic_env/harness" in entry.tree
    assert entry.settings == {"seeds": {"start": 1000, "count": 20}, "realism": None,
                              "paper_trials": 20}
    ledger.save_prediction(root, prediction)
    assert ledger.load_prediction(root, "p") == prediction
    assert not ledger.check_current(root, prediction)
    (root / "agentic_env" / "harness" / "run.py").write_text("STEPS = 2\n")
    drift = ledger.check_current(root, prediction)
    assert drift and drift.tree == ("agentic_env/harness",) and not drift.changed
    assert "tree changed: agentic_env/harness" in drift.describe()
    (root / "agentic_env" / "harness" / "run.py").write_text("STEPS = 1\n")
    edited = dataclasses.replace(prediction, paper_trials=9)  # as a hand edit would
    assert ledger.check_current(root, edited).settings == ("paper_trials",)


def test_old_freezes_read_as_not_recorded(tmp_path: pathlib.Path) -> None:
    """Entries and runs written before the whole tree was hashed load, compare their own
    files only, say 'not recorded' and are written back unchanged."""
    root = _repo(tmp_path)
    old = {"id": "p", "target": "T", "sweep": SWEEP, "seeds": {"start": 1, "count": 2},
           "realism": None, "paper_trials": 20, "depends": ["agentic_env/oracle/profiles/*"],
           "entries": [{"revision": 1, "frozen_at": "2026-01-01T00:00:00+00:00",
                        "reason": "first freeze", "after_target": False,
                        "hashes": ledger.fingerprint(root, SWEEP,
                                                     ["agentic_env/oracle/profiles/*"]),
                        "runs": [{"at": "2026-01-02T00:00:00+00:00", "db": "runs/x.db",
                                  "summary": "3/8 agree"}]}]}
    prediction = ledger.parse_prediction(old)
    assert prediction.to_dict() == old
    drift = ledger.check_current(root, prediction)
    assert not drift and not drift.tree_recorded
    lines = ledger_history.history(prediction)
    assert "whole tree not recorded" in lines[0]
    assert "provenance not recorded" in lines[1]


def test_the_shipped_ledger_round_trips() -> None:
    """Every file under predictions/ reads and writes back as it is (no field lost)."""
    yaml = pytest.importorskip("yaml")
    repo = pathlib.Path(__file__).resolve().parents[2]
    for path in sorted((repo / "predictions").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        assert ledger.parse_prediction(data).to_dict() == data, path.name


def test_seen_before_is_appended_not_written_over(tmp_path: pathlib.Path) -> None:
    root = _repo(tmp_path)
    prediction = _new(root)
    annotated = ledger.annotate(prediction, "measured in commit b14a8da", [1])
    assert annotated.entries == prediction.entries  # nothing already written changes
    assert annotated.after_target(annotated.current) and not prediction.seen_annotation(1)
    with pytest.raises(InvalidConfigError, match="already carries"):
        ledger.annotate(annotated, "measured in commit b14a8da", [1])
    with pytest.raises(InvalidConfigError, match="no revision"):
        ledger.annotate(prediction, "x", [3])
    ledger.save_prediction(root, annotated)
    loaded = ledger.load_prediction(root, "p")
    assert loaded == annotated
    lines = ledger_history.history(loaded)
    assert "FROZEN AFTER SEEING THE TARGET (annotated" in lines[0]
    assert lines[-1].startswith("ANNOTATED ") and "revision 1 frozen after the target was " \
        "seen: measured in commit b14a8da" in lines[-1]
