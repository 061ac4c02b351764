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
        runs: [{at: ..., db: ..., summary: "..."}]   # a run not (yet) finished: complete: false

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
is marked ``after_target`` too, and :func:`history` says so.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import pathlib
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from agentic_env.errors import InvalidConfigError, check_keys
from agentic_env.harness.extras import require

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
         "entries")
_HASH_CHARS = 16


@dataclass(frozen=True)
class Run:
    """One run of a frozen prediction.

    Attributes:
        at: when it finished (ISO 8601, UTC); while ``complete`` is false, when it started.
        db: the results database it wrote.
        summary: one line of what came out (e.g. ``rho 0.84, MMRV 0.14, 4/8 agree``).
        complete: false from its start until it is recorded as finished: a run killed (or
            still running) stays so.
    """

    at: str
    db: str
    summary: str
    complete: bool = True

    def to_dict(self) -> dict[str, Any]:
        """YAML-ready form (``complete`` only when false, so finished runs read as before)."""
        return {"at": self.at, "db": self.db, "summary": self.summary,
                **({} if self.complete else {"complete": False})}


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
    """

    revision: int
    frozen_at: str
    reason: str
    after_target: bool
    hashes: Mapping[str, str]
    runs: tuple[Run, ...] = ()


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

    def to_dict(self) -> dict[str, Any]:
        """YAML-ready form that :func:`parse_prediction` reads back."""
        return {"id": self.id, "target": self.target, "sweep": self.sweep,
                "seeds": dict(self.seeds), "realism": self.realism,
                "paper_trials": self.paper_trials,
                **({"seen_before": self.seen_before} if self.seen_before else {}),
                "depends": list(self.depends),
                "entries": [{"revision": e.revision, "frozen_at": e.frozen_at,
                             "reason": e.reason, "after_target": e.after_target,
                             "hashes": dict(sorted(e.hashes.items())),
                             "runs": [r.to_dict() for r in e.runs]} for e in self.entries]}


@dataclass(frozen=True)
class Drift:
    """What differs between the newest entry's hashes and the files now.

    Attributes:
        changed / added / removed: dependency paths, sorted.
    """

    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed)

    def describe(self) -> str:
        """One line: ``changed: a, b; added: c`` (``unchanged`` when nothing differs)."""
        parts = [f"{name}: {', '.join(paths)}" for name, paths in
                 (("changed", self.changed), ("added", self.added), ("removed", self.removed))
                 if paths]
        return "; ".join(parts) or "unchanged"


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
    entries = tuple(
        Entry(revision=int(e["revision"]), frozen_at=str(e["frozen_at"]),
              reason=str(e["reason"]), after_target=bool(e["after_target"]),
              hashes={str(k): str(v) for k, v in (e.get("hashes") or {}).items()},
              runs=tuple(Run(at=str(r["at"]), db=str(r["db"]), summary=str(r["summary"]),
                             complete=bool(r.get("complete", True)))
                         for r in e.get("runs") or ()))
        for e in data.get("entries") or ())
    trials = data.get("paper_trials")
    return Prediction(id=str(data["id"]), target=str(data["target"]), sweep=str(data["sweep"]),
                      seeds={"start": int(seeds["start"]), "count": int(seeds["count"])},
                      realism=data.get("realism"),
                      paper_trials=None if trials is None else int(trials),
                      seen_before=data.get("seen_before") or None,
                      depends=tuple(data.get("depends") or DEFAULT_DEPENDS), entries=entries)


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


def check_current(root: pathlib.Path, prediction: Prediction) -> Drift:
    """What changed since ``prediction``'s newest freeze."""
    now = fingerprint(root, prediction.sweep, prediction.depends)
    return drift(prediction.current.hashes, now)


def freeze(root: pathlib.Path, prediction: Prediction, reason: str | None = None,
           now: datetime | None = None) -> Prediction:
    """``prediction`` with a new entry holding today's hashes: its first (``reason``
    defaults to ``first freeze``) or a revision, which needs a ``reason`` and is marked
    ``after_target`` when an earlier entry was run; every entry, the first included, is
    marked so when the target was seen before the ledger (``seen_before``).

    Raises:
        InvalidConfigError: a revision without a reason, or nothing changed since the
            newest entry.
    """
    hashes = fingerprint(root, prediction.sweep, prediction.depends)
    if prediction.entries:
        if not drift(prediction.current.hashes, hashes):
            raise InvalidConfigError(f"prediction {prediction.id!r}: nothing changed since "
                                     f"revision {prediction.current.revision}")
        if not reason:
            raise InvalidConfigError(f"prediction {prediction.id!r}: a revision needs its "
                                     "reason")
    entry = Entry(revision=len(prediction.entries) + 1,
                  frozen_at=(now or datetime.now(UTC)).isoformat(timespec="seconds"),
                  reason=reason or "first freeze", after_target=prediction.seen,
                  hashes=hashes)
    return replace(prediction, entries=(*prediction.entries, entry))


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


def record_run(prediction: Prediction, db: str, summary: str, now: datetime | None = None
               ) -> Prediction:
    """``prediction`` with a finished run of ``db`` on its newest entry, in place of the
    incomplete one :func:`start_run` booked for it (if any)."""
    return _with_run(prediction, Run(at=(now or datetime.now(UTC)).isoformat(
        timespec="seconds"), db=db, summary=summary))


def _with_run(prediction: Prediction, run: Run) -> Prediction:
    """``prediction`` with ``run`` last on its newest entry, replacing an incomplete run of
    the same database."""
    current = prediction.current
    kept = tuple(r for r in current.runs if r.complete or r.db != run.db)
    return replace(prediction, entries=(*prediction.entries[:-1],
                                        replace(current, runs=(*kept, run))))


def history(prediction: Prediction) -> list[str]:
    """One line per entry and run, oldest first, for reports and ``predict check``."""
    lines = ([f"TARGET SEEN BEFORE THE FIRST FREEZE: {prediction.seen_before}"]
             if prediction.seen_before else [])
    for entry in prediction.entries:
        mark = ((" FROZEN AFTER SEEING THE TARGET" if entry.revision == 1
                 else " REVISED AFTER SEEING THE TARGET") if entry.after_target else "")
        lines.append(f"revision {entry.revision}, frozen {entry.frozen_at}{mark}: "
                     f"{entry.reason} ({len(entry.hashes)} files hashed)")
        lines += [f"  run {'' if run.complete else 'started '}{run.at} -> {run.db}: "
                  f"{run.summary}" for run in entry.runs]
    return lines
