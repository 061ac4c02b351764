"""The predictions ledger: each prediction frozen, with a hash of everything it depends on,
before it is first run.

One YAML file per prediction under ``predictions/`` at the repository root::

    id: agenticlab-table1
    target: AgenticLab Table I            # the paper's result the prediction is scored on
    sweep: sweeps/paper/table1-single-vlm.yaml
    seeds: {start: 1000, count: 20}       # seeds the project has not used before
    realism: ideal                        # the world (optional; the sweep's own otherwise)
    paper_trials: 20                      # the paper's trials per row (two-sided verdicts)
    seen_before: "..."                    # optional: the target's result was seen before the
                                          # first freeze (where), so every entry is after_target
    depends: [agentic_env/oracle/profiles/*.toml, agentic_env/sim/realism/*.toml, ...]
    entries:                              # the history, oldest first; never rewritten
      - revision: 1
        frozen_at: "2025-01-01T00:00:00+00:00"
        reason: first freeze
        after_target: false               # frozen after a run against the target was seen
        hashes: {agentic_env/oracle/profiles/gemini-3-pro.toml: 9f2c..., ...}
        tree: {agentic_env/harness: 41ac..., agents/agenticlab: 07d2..., ...}  # all that runs
        settings: {seeds: {start: 1000, count: 20}, realism: ideal, paper_trials: 20}
        commit: 5c49...                   # HEAD when frozen; dirty: uncommitted code then
        dirty: false
        runs:                             # a run not (yet) finished: complete: false
          - {at: ..., db: ..., summary: "...", commit: ..., dirty: false,
             tree: 3be1..., tree_after: 3be1...,      # the whole tree before and after it
             db_sha256: ..., counts: {"Gemini 3 Pro": [11, 20], ...},
             scoring: 8c2e..., freeze_committed: true}
    annotations:                          # appended later, never rewritten
      - {at: ..., kind: seen_before, revisions: [1], note: "measured in commit b14a8da"}

:func:`fingerprint` hashes the sweep file and every file the ``depends`` patterns match by
content, not by text: TOML and YAML as their parsed data, Python as its syntax tree, so a
comment or a reflowed line is no revision but any changed number is. :func:`freeze`
starts a ledger or appends a revision (with its reason); :func:`check_current` says what
changed since the last freeze; :func:`start_run` books a run on the newest entry as
incomplete before it starts, and :func:`record_run` completes it when it finishes, so a run
killed on the way stays on record as incomplete. A revision frozen after any earlier entry
was run (even incompletely) is marked ``after_target``: it was made with the
target's result in view. A prediction whose target had already been seen before it entered
the ledger (an earlier run outside it) says where in ``seen_before``; then its first freeze
is marked ``after_target`` too, and :func:`~agentic_env.reports.ledger_history.history`
says so. What was learnt later is appended (:func:`annotate`), never written over an entry:
an entry frozen after its target had been seen without being marked so gets a
``seen_before`` annotation naming it.

Beside the files ``depends`` names, every freeze records the digest of the whole tree that
runs (:mod:`agentic_env.reports.provenance`), the prediction's seeds, world and trial counts,
and the commit and dirty flag it was made on; a drift in any of them is a drift. Each run
records its commit, dirty flag, the tree's digest before and after it (code changed under a
run is on record), its results database's SHA-256, the per-row k/n it was scored on and the
digest of the scoring code that scored it. Entries and runs made before these were recorded
read as "not recorded".
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from agentic_env.errors import InvalidConfigError, check_keys
from agentic_env.harness.extras import require
from agentic_env.reports import provenance
from agentic_env.reports.provenance import content_hash

#: Where the ledger lives, relative to the repository root.
LEDGER_DIR = "predictions"
#: What every prediction depends on unless it says otherwise: the emulated models' profiles
#: and shared assumptions, the realistic world's parameters and models, and the emulation's
#: mechanisms. (Predictions frozen before the world's models were listed keep their own list.)
DEFAULT_DEPENDS: tuple[str, ...] = ("agentic_env/oracle/profiles/*.toml",
                                    "agentic_env/sim/realism/*.toml",
                                    "agentic_env/sim/realism/*.py",
                                    "agentic_env/oracle/*.py")
_KEYS = ("id", "target", "sweep", "seeds", "realism", "paper_trials", "seen_before", "depends",
         "entries", "annotations")
#: The one kind of annotation so far: an entry frozen after its target had been seen.
SEEN_BEFORE = "seen_before"
#: What a field missing from an older freeze or run reads as.
NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class Run:
    """One run of a frozen prediction.

    Attributes:
        at: when it finished (ISO 8601, UTC); while ``complete`` is false, when it started.
        db: the results database it wrote.
        summary: one line of what came out (e.g. ``rho 0.84, MMRV 0.14, 4/8 agree``).
        complete: false from its start until it is recorded as finished: a run killed (or
            still running) stays so.
        commit / dirty: ``HEAD`` and whether the tree had uncommitted changes when it
            started (``None``: not recorded, or not a git work tree).
        tree / tree_after: the whole tree's digest (:func:`tree_digest`) when it started and
            when it finished; they differ when code changed under the run.
        db_sha256: the results database's SHA-256 when it was scored.
        counts: paper row (or model) -> ``(successes, episodes)`` it was scored on.
        scoring: the scoring code's digest when it was scored.
        freeze_committed: whether the prediction's file (its freeze) was committed before
            the run started.
    """

    at: str
    db: str
    summary: str
    complete: bool = True
    commit: str | None = None
    dirty: bool | None = None
    tree: str | None = None
    tree_after: str | None = None
    db_sha256: str | None = None
    counts: Mapping[str, tuple[int, int]] | None = None
    scoring: str | None = None
    freeze_committed: bool | None = None

    @property
    def code_changed(self) -> bool | None:
        """Whether the tree changed while it ran (``None``: not recorded)."""
        if self.tree is None or self.tree_after is None:
            return None
        return self.tree != self.tree_after

    def to_dict(self) -> dict[str, Any]:
        """YAML-ready form (``complete`` only when false and provenance only where recorded,
        so finished runs of older files read as before)."""
        extra = {k: v for k, v in (("commit", self.commit), ("dirty", self.dirty),
                                   ("tree", self.tree), ("tree_after", self.tree_after),
                                   ("db_sha256", self.db_sha256), ("scoring", self.scoring),
                                   ("freeze_committed", self.freeze_committed))
                 if v is not None}
        if self.counts is not None:
            extra["counts"] = {k: list(v) for k, v in self.counts.items()}
        return {"at": self.at, "db": self.db, "summary": self.summary,
                **({} if self.complete else {"complete": False}), **extra}


@dataclass(frozen=True)
class Entry:
    """One freeze of a prediction (a revision after the first).

    Attributes:
        revision: 1, 2, ...
        frozen_at: when (ISO 8601, UTC).
        reason: why this revision was made (``first freeze`` for the first).
        after_target: whether an earlier entry had been run, so the target was seen.
        hashes: dependency path (relative to the root) -> content hash.
        runs: the runs made under this entry, oldest first.
        tree: folder -> digest of the whole tree that runs (``None``: not recorded).
        settings: the seeds, world and paper trials frozen (``None``: not recorded).
        commit / dirty: ``HEAD`` and uncommitted code when frozen (``None``: not recorded).
    """

    revision: int
    frozen_at: str
    reason: str
    after_target: bool
    hashes: Mapping[str, str]
    runs: tuple[Run, ...] = ()
    tree: Mapping[str, str] | None = None
    settings: Mapping[str, Any] | None = None
    commit: str | None = None
    dirty: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """YAML-ready form (the newer fields only where recorded)."""
        extra: dict[str, Any] = {}
        if self.tree is not None:
            extra["tree"] = dict(sorted(self.tree.items()))
        if self.settings is not None:
            extra["settings"] = dict(self.settings)
        extra.update({k: v for k, v in (("commit", self.commit), ("dirty", self.dirty))
                      if v is not None})
        return {"revision": self.revision, "frozen_at": self.frozen_at, "reason": self.reason,
                "after_target": self.after_target, "hashes": dict(sorted(self.hashes.items())),
                **extra, "runs": [r.to_dict() for r in self.runs]}


@dataclass(frozen=True)
class Annotation:
    """Something learnt about entries after they were frozen, appended to the history.

    Attributes:
        at: when it was appended (ISO 8601, UTC).
        kind: :data:`SEEN_BEFORE`: the entries were frozen after their target was seen.
        revisions: the entries it is about.
        note: where, and how it is known.
    """

    at: str
    kind: str
    revisions: tuple[int, ...]
    note: str

    def to_dict(self) -> dict[str, Any]:
        """YAML-ready form."""
        return {"at": self.at, "kind": self.kind, "revisions": list(self.revisions),
                "note": self.note}


@dataclass(frozen=True)
class Prediction:
    """A prediction and its history (see the module docstring for the fields)."""

    id: str
    target: str
    sweep: str
    seeds: Mapping[str, int]
    realism: str | None = None
    paper_trials: int | None = None
    seen_before: str | None = None
    depends: tuple[str, ...] = DEFAULT_DEPENDS
    entries: tuple[Entry, ...] = field(default_factory=tuple)
    annotations: tuple[Annotation, ...] = ()

    @property
    def current(self) -> Entry:
        """The newest entry.

        Raises:
            InvalidConfigError: the prediction was never frozen.
        """
        if not self.entries:
            raise InvalidConfigError(f"prediction {self.id!r} has no frozen entry")
        return self.entries[-1]

    @property
    def seen(self) -> bool:
        """Whether the target's result was seen: before the ledger (``seen_before``) or by a
        run of any entry, an incomplete one included (its episodes so far were shown)."""
        return bool(self.seen_before) or any(entry.runs for entry in self.entries)

    def seen_annotation(self, revision: int) -> Annotation | None:
        """The first annotation saying entry ``revision`` was frozen after its target was
        seen (``None``: none does)."""
        return next((a for a in self.annotations
                     if a.kind == SEEN_BEFORE and revision in a.revisions), None)

    def after_target(self, entry: Entry) -> bool:
        """Whether ``entry`` was made with the target in view: marked so when frozen, or
        annotated so since."""
        return entry.after_target or self.seen_annotation(entry.revision) is not None

    @property
    def settings(self) -> dict[str, Any]:
        """What a freeze records beside the files: seeds, world and the paper's trials."""
        return {"seeds": dict(self.seeds), "realism": self.realism,
                "paper_trials": self.paper_trials}

    def to_dict(self) -> dict[str, Any]:
        """YAML-ready form that :func:`parse_prediction` reads back."""
        return {"id": self.id, "target": self.target, "sweep": self.sweep,
                "seeds": dict(self.seeds), "realism": self.realism,
                "paper_trials": self.paper_trials,
                **({"seen_before": self.seen_before} if self.seen_before else {}),
                "depends": list(self.depends),
                "entries": [e.to_dict() for e in self.entries],
                **({"annotations": [a.to_dict() for a in self.annotations]}
                   if self.annotations else {})}


@dataclass(frozen=True)
class Drift:
    """What differs between the newest entry's record and the files now.

    Attributes:
        changed / added / removed: dependency paths, sorted.
        tree: folders of the whole tree whose digest differs (changed, added or removed).
        settings: the frozen settings (``seeds``, ``realism``, ``paper_trials``) that differ.
        tree_recorded: whether the entry recorded the whole tree (older freezes did not, so
            only their ``depends`` files are compared).
    """

    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    tree: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    tree_recorded: bool = True

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed or self.tree or self.settings)

    def describe(self) -> str:
        """One line: ``changed: a, b; added: c; tree changed: agentic_env/harness``
        (``unchanged`` when nothing differs)."""
        parts = [f"{name}: {', '.join(paths)}" for name, paths in
                 (("changed", self.changed), ("added", self.added), ("removed", self.removed),
                  ("tree changed", self.tree), ("settings changed", self.settings))
                 if paths]
        return "; ".join(parts) or "unchanged"


def fingerprint(root: pathlib.Path, sweep: str, depends: Sequence[str]) -> dict[str, str]:
    """Path (relative to ``root``, POSIX) -> :func:`content_hash` of the sweep file and of
    every file the glob patterns ``depends`` match under ``root``, sorted by path.

    Raises:
        InvalidConfigError: the sweep file does not exist.
    """
    if not (root / sweep).is_file():
        raise InvalidConfigError(f"prediction's sweep {sweep!r} does not exist under {root}")
    paths = {pathlib.PurePosixPath(sweep)}
    for pattern in depends:
        paths |= {pathlib.PurePosixPath(p.relative_to(root).as_posix())
                  for p in root.glob(pattern) if p.is_file()}
    return {str(p): content_hash(root / p) for p in sorted(paths)}


def drift(frozen: Mapping[str, str], now: Mapping[str, str]) -> Drift:
    """What differs between ``frozen`` and ``now`` hashes."""
    return Drift(changed=tuple(sorted(p for p in frozen.keys() & now.keys()
                                      if frozen[p] != now[p])),
                 added=tuple(sorted(now.keys() - frozen.keys())),
                 removed=tuple(sorted(frozen.keys() - now.keys())))


def tree_digests(root: pathlib.Path) -> dict[str, str]:
    """Folder -> digest of the whole tree that runs under ``root``
    (:func:`agentic_env.reports.provenance.tree_digests`)."""
    return provenance.tree_digests(root)


def tree_digest(root: pathlib.Path) -> str:
    """One digest of the whole tree that runs under ``root``."""
    return provenance.combined(tree_digests(root))


def scoring_digest(root: pathlib.Path) -> str:
    """The digest of the scoring code under ``root`` as it is now."""
    return provenance.scoring_digest(root)


def entry_drift(root: pathlib.Path, prediction: Prediction, entry: Entry,
                tree: Mapping[str, str] | None = None) -> Drift:
    """What differs between ``entry``'s record and ``root`` now: its ``depends`` files, the
    whole tree (``tree``: today's :func:`tree_digests`, computed when not given) and the
    settings, each only where the entry recorded it."""
    files = drift(entry.hashes, fingerprint(root, prediction.sweep, prediction.depends))
    if entry.tree is None:
        folders: tuple[str, ...] = ()
    else:
        now = tree_digests(root) if tree is None else tree
        folders = tuple(sorted(k for k in entry.tree.keys() | now.keys()
                               if entry.tree.get(k) != now.get(k)))
    settings = () if entry.settings is None else tuple(
        k for k, v in prediction.settings.items() if entry.settings.get(k) != v)
    return replace(files, tree=folders, settings=settings,
                   tree_recorded=entry.tree is not None)


def ledger_path(root: pathlib.Path, prediction_id: str) -> pathlib.Path:
    """``root/predictions/<id>.yaml``."""
    return root / LEDGER_DIR / f"{prediction_id}.yaml"


def parse_prediction(data: Any) -> Prediction:
    """Validate a ledger file's mapping.

    Raises:
        InvalidConfigError: a key is unknown or missing, or a value has the wrong shape.
    """
    if not isinstance(data, Mapping):
        raise InvalidConfigError("a prediction is a mapping with keys " + ", ".join(_KEYS))
    check_keys(data, _KEYS, "prediction")
    for key in ("id", "target", "sweep", "seeds"):
        if not data.get(key):
            raise InvalidConfigError(f"prediction needs {key!r}")
    seeds = data["seeds"]
    if not (isinstance(seeds, Mapping) and set(seeds) == {"start", "count"}):
        raise InvalidConfigError(f"prediction {data['id']}: seeds is {{start, count}}")
    entries = tuple(_entry(e) for e in data.get("entries") or ())
    annotations = tuple(
        Annotation(at=str(a["at"]), kind=str(a["kind"]),
                   revisions=tuple(int(r) for r in a.get("revisions") or ()),
                   note=str(a["note"]))
        for a in data.get("annotations") or ())
    trials = data.get("paper_trials")
    return Prediction(id=str(data["id"]), target=str(data["target"]), sweep=str(data["sweep"]),
                      seeds={"start": int(seeds["start"]), "count": int(seeds["count"])},
                      realism=data.get("realism"),
                      paper_trials=None if trials is None else int(trials),
                      seen_before=data.get("seen_before") or None,
                      depends=tuple(data.get("depends") or DEFAULT_DEPENDS), entries=entries,
                      annotations=annotations)


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _optional_bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _entry(e: Mapping[str, Any]) -> Entry:
    """One entry of a ledger file (the fields older files lack read as ``None``)."""
    tree = e.get("tree")
    return Entry(revision=int(e["revision"]), frozen_at=str(e["frozen_at"]),
                 reason=str(e["reason"]), after_target=bool(e["after_target"]),
                 hashes={str(k): str(v) for k, v in (e.get("hashes") or {}).items()},
                 runs=tuple(_run(r) for r in e.get("runs") or ()),
                 tree=None if tree is None else {str(k): str(v) for k, v in tree.items()},
                 settings=e.get("settings"), commit=_optional_str(e.get("commit")),
                 dirty=_optional_bool(e.get("dirty")))


def _run(r: Mapping[str, Any]) -> Run:
    """One run of a ledger file (the fields older files lack read as ``None``)."""
    counts = r.get("counts")
    return Run(at=str(r["at"]), db=str(r["db"]), summary=str(r["summary"]),
               complete=bool(r.get("complete", True)), commit=_optional_str(r.get("commit")),
               dirty=_optional_bool(r.get("dirty")), tree=_optional_str(r.get("tree")),
               tree_after=_optional_str(r.get("tree_after")),
               db_sha256=_optional_str(r.get("db_sha256")),
               counts=None if counts is None else {str(k): (int(v[0]), int(v[1]))
                                                   for k, v in counts.items()},
               scoring=_optional_str(r.get("scoring")),
               freeze_committed=_optional_bool(r.get("freeze_committed")))


def load_prediction(root: pathlib.Path, prediction_id: str) -> Prediction:
    """The ledger entry ``prediction_id`` under ``root``.

    Raises:
        InvalidConfigError: no such prediction, or its file is invalid.
    """
    path = ledger_path(root, prediction_id)
    if not path.is_file():
        raise InvalidConfigError(f"no prediction {prediction_id!r} ({path} does not exist); "
                                 "freeze it first")
    yaml = require("yaml", "harness")
    return parse_prediction(yaml.safe_load(path.read_text()))


def all_predictions(root: pathlib.Path) -> list[Prediction]:
    """Every prediction of the ledger under ``root``, by id."""
    folder = root / LEDGER_DIR
    return [load_prediction(root, p.stem) for p in sorted(folder.glob("*.yaml"))]


def save_prediction(root: pathlib.Path, prediction: Prediction) -> pathlib.Path:
    """Write ``prediction`` to its ledger file in one step (a temporary file renamed over
    it, so a killed run leaves the old file or the new one, never half of one); returns the
    path."""
    yaml = require("yaml", "harness")
    path = ledger_path(root, prediction.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(yaml.safe_dump(prediction.to_dict(), sort_keys=False, width=100))
    os.replace(partial, path)
    return path


def check_current(root: pathlib.Path, prediction: Prediction,
                  tree: Mapping[str, str] | None = None) -> Drift:
    """What changed since ``prediction``'s newest freeze (``tree``: today's
    :func:`tree_digests`, when already computed)."""
    return entry_drift(root, prediction, prediction.current, tree)


def freeze(root: pathlib.Path, prediction: Prediction, reason: str | None = None,
           now: datetime | None = None) -> Prediction:
    """``prediction`` with a new entry holding today's hashes, the whole tree's digests, the
    settings and the git state: its first (``reason`` defaults to ``first freeze``) or a
    revision, which needs a ``reason`` and is marked ``after_target`` when an earlier entry
    was run; every entry, the first included, is marked so when the target was seen before
    the ledger (``seen_before``). A revision of an entry that did not record the whole tree
    may change nothing else (it records it).

    Raises:
        InvalidConfigError: a revision without a reason, or nothing changed since the
            newest entry.
    """
    hashes = fingerprint(root, prediction.sweep, prediction.depends)
    tree = tree_digests(root)
    if prediction.entries:
        if (not entry_drift(root, prediction, prediction.current, tree)
                and prediction.current.tree is not None):
            raise InvalidConfigError(f"prediction {prediction.id!r}: nothing changed since "
                                     f"revision {prediction.current.revision}")
        if not reason:
            raise InvalidConfigError(f"prediction {prediction.id!r}: a revision needs its "
                                     "reason")
    state = provenance.git_state(root)
    entry = Entry(revision=len(prediction.entries) + 1,
                  frozen_at=(now or datetime.now(UTC)).isoformat(timespec="seconds"),
                  reason=reason or "first freeze", after_target=prediction.seen,
                  hashes=hashes, tree=tree, settings=prediction.settings,
                  commit=state.commit, dirty=state.dirty)
    return replace(prediction, entries=(*prediction.entries, entry))


def annotate(prediction: Prediction, note: str, revisions: Sequence[int],
             kind: str = SEEN_BEFORE, now: datetime | None = None) -> Prediction:
    """``prediction`` with an annotation appended (its entries untouched): ``revisions``
    were frozen after their target was seen, ``note`` says where.

    Raises:
        InvalidConfigError: no note, an unknown kind or revision, or the same annotation
            is already there (appending it twice says nothing new).
    """
    known = {e.revision for e in prediction.entries}
    if kind != SEEN_BEFORE:
        raise InvalidConfigError(f"annotation kind {kind!r}: only {SEEN_BEFORE!r} is known")
    if not note.strip() or not revisions:
        raise InvalidConfigError("an annotation needs its note and the revisions it is about")
    missing = sorted(set(revisions) - known)
    if missing:
        raise InvalidConfigError(f"prediction {prediction.id!r} has no revision {missing}")
    wanted = tuple(sorted(set(revisions)))
    if any(a.kind == kind and a.revisions == wanted and a.note == note
           for a in prediction.annotations):
        raise InvalidConfigError(f"prediction {prediction.id!r} already carries this "
                                 "annotation")
    annotation = Annotation(at=(now or datetime.now(UTC)).isoformat(timespec="seconds"),
                            kind=kind, revisions=wanted, note=note)
    return replace(prediction, annotations=(*prediction.annotations, annotation))


#: The summary of a run booked by :func:`start_run` until it finishes.
INCOMPLETE = "INCOMPLETE: started, not finished (killed, or still running)"


def start_run(prediction: Prediction, db: str, now: datetime | None = None) -> Prediction:
    """``prediction`` with an incomplete run of ``db`` (started ``now``) on its newest entry,
    to be saved before the sweep starts, so that a run killed on the way is on record. A run
    of the same ``db`` that did not finish is the same run resumed: it stays as it is."""
    if any(run.db == db and not run.complete for run in prediction.current.runs):
        return prediction
    return _with_run(prediction, Run(at=(now or datetime.now(UTC)).isoformat(
        timespec="seconds"), db=db, summary=INCOMPLETE, complete=False))


def record_run(prediction: Prediction, db: str, summary: str, now: datetime | None = None,
               **recorded: Any) -> Prediction:
    """``prediction`` with a finished run of ``db`` on its newest entry, in place of the
    incomplete one :func:`start_run` booked for it (if any); ``recorded``: the run's
    provenance fields (:class:`Run`'s ``commit``, ``dirty``, ``tree``, ``tree_after``,
    ``db_sha256``, ``counts``, ``scoring``, ``freeze_committed``)."""
    return _with_run(prediction, Run(at=(now or datetime.now(UTC)).isoformat(
        timespec="seconds"), db=db, summary=summary, **recorded))


def _with_run(prediction: Prediction, run: Run) -> Prediction:
    """``prediction`` with ``run`` last on its newest entry, replacing an incomplete run of
    the same database."""
    current = prediction.current
    kept = tuple(r for r in current.runs if r.complete or r.db != run.db)
    return replace(prediction, entries=(*prediction.entries[:-1],
                                        replace(current, runs=(*kept, run))))
