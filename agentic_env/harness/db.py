"""SQLite results store: one row per episode, one per model call, one per module-benchmark
instance, one per measurement of a measurement benchmark (``bench``, ``bench-grasp``,
``soak``, ...: figures, not episodes).

The database runs in WAL mode and every finished episode is written in a single
transaction (its row and all its call rows), so a sweep killed at any moment leaves only
whole episodes behind; the episode key (:meth:`EpisodeSpec.key`) is the primary key, so a
re-run skips what is there and can never insert an episode twice. Every text goes through
:func:`agentic_env.text.safe_text` on its way in (invalid Unicode replaced, long texts cut),
so no model output can make an episode's row fail to store.
"""

from __future__ import annotations

import json
import pathlib
import sqlite3
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from agentic_env.harness.episode import EpisodeResult, json_key
from agentic_env.harness.sweep import disturbance_label, model_label
from agentic_env.text import safe_data, safe_text

_SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (
    key TEXT PRIMARY KEY,
    spec_json TEXT NOT NULL,
    task TEXT NOT NULL, setting TEXT NOT NULL, seed INTEGER NOT NULL, agent TEXT NOT NULL,
    model TEXT NOT NULL, verification TEXT NOT NULL, disturbance TEXT NOT NULL,
    instruction_category TEXT,
    success INTEGER NOT NULL, progress REAL NOT NULL, score REAL NOT NULL,
    n_done INTEGER, n_extra INTEGER, n_required INTEGER, goal_checker_error INTEGER,
    actions INTEGER, replans INTEGER, wall_s REAL, sim_s REAL, run_s REAL, model_s REAL,
    input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL,
    failure TEXT, failure_detail TEXT, trace_dir TEXT, error TEXT,
    worker TEXT, finished_at TEXT NOT NULL, judge_score REAL, intervention_json TEXT,
    judge_panel_json TEXT, objects_json TEXT
);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    episode_key TEXT NOT NULL REFERENCES episodes(key),
    seq INTEGER NOT NULL, module TEXT NOT NULL, model TEXT NOT NULL, latency_s REAL,
    input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL, attempts INTEGER,
    verdict TEXT, error TEXT, truth TEXT,
    UNIQUE (episode_key, seq)
);
CREATE INDEX IF NOT EXISTS calls_episode ON calls(episode_key);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY, value_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS module_instances (
    model TEXT NOT NULL, module TEXT NOT NULL, instance TEXT NOT NULL,
    task TEXT, setting TEXT, seed INTEGER,
    success INTEGER NOT NULL, metric REAL, latency_s REAL,
    input_tokens INTEGER, output_tokens INTEGER,
    label_json TEXT, answer_json TEXT, error TEXT, finished_at TEXT NOT NULL,
    PRIMARY KEY (model, module, instance)
);
CREATE TABLE IF NOT EXISTS measurements (
    bench TEXT NOT NULL, key TEXT NOT NULL, params_json TEXT NOT NULL,
    figures_json TEXT NOT NULL, run_s REAL, worker TEXT, finished_at TEXT NOT NULL,
    PRIMARY KEY (bench, key)
);
"""


@dataclass(frozen=True)
class Finished:
    """One episode as a runner hands it back.

    Attributes:
        key: the spec's key.
        result: the episode's result (an error result when it crashed).
        run_s: wall time of the episode function call, measured in the worker, seconds.
        worker: where it ran, ``host:pid``.
    """

    key: str
    result: EpisodeResult
    run_s: float
    worker: str


@dataclass(frozen=True)
class ModuleInstance:
    """One graded module-benchmark instance.

    Attributes:
        model: model spec under test.
        module: pipeline module (``parser``, ``checker``, ``detector``, ``grasp``, ``goal``).
        instance: stable instance id (task, setting, seed and the instance's own index).
        task / setting / seed: the rollout the instance came from.
        success: the model's answer matches the ground-truth label.
        metric: a graded figure where the module has one (detector: box IoU 0..1).
        latency_s / input_tokens / output_tokens: the model call's usage.
        label: the ground truth (JSON-ready).
        answer: the parsed answer (JSON-ready), ``None`` when the call failed.
        error: why the call failed, ``None`` otherwise.
    """

    model: str
    module: str
    instance: str
    task: str
    setting: str
    seed: int
    success: bool
    metric: float | None
    latency_s: float
    input_tokens: int
    output_tokens: int
    label: Any
    answer: Any
    error: str | None = None


@dataclass(frozen=True)
class Measurement:
    """One measurement of a measurement benchmark (not an episode: no spec, no success).

    Attributes:
        bench: the command that made it (``bench-grasp``, ``bench-calibration``, ...).
        params: the parameters that define it (JSON-ready: a task, a world, seeds, sizes);
            with ``bench``, its identity (:meth:`key`), so the same measurement made again
            replaces the stored one.
        figures: what it measured (JSON-ready), units in the names (``_s``, ``_mm``, ...).
        run_s: wall time of the run that made it, seconds.
        worker: where it ran, ``host:pid``.
    """

    bench: str
    params: dict[str, Any]
    figures: dict[str, Any]
    run_s: float
    worker: str

    def key(self) -> str:
        """Stable 16-hex-digit identity of :attr:`params` (same parameters -> same key)."""
        return json_key(self.params)


class ResultStore:
    """The results database (created on first use). Use one store per process.

    Args:
        path: SQLite file; its folder is created if missing.
    """

    def __init__(self, path: str | pathlib.Path) -> None:
        self.path = pathlib.Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=60.0)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.executescript(_SCHEMA)
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(episodes)")}
        if "judge_score" not in columns:  # a database written before the trace judge
            self._conn.execute("ALTER TABLE episodes ADD COLUMN judge_score REAL")
        if "intervention_json" not in columns:  # written before the intervention trials
            self._conn.execute("ALTER TABLE episodes ADD COLUMN intervention_json TEXT")
        if "judge_panel_json" not in columns:  # written before the judges were recorded
            self._conn.execute("ALTER TABLE episodes ADD COLUMN judge_panel_json TEXT")
        if "model_s" not in columns:  # written before model time was reported
            self._conn.execute("ALTER TABLE episodes ADD COLUMN model_s REAL")
        if "objects_json" not in columns:  # written before per-object outcomes
            self._conn.execute("ALTER TABLE episodes ADD COLUMN objects_json TEXT")
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(calls)")}
        if "truth" not in columns:  # a database written before calls were scored
            self._conn.execute("ALTER TABLE calls ADD COLUMN truth TEXT")

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def finished_keys(self) -> set[str]:
        """Keys of every episode in the database (errors included)."""
        return {row[0] for row in self._conn.execute("SELECT key FROM episodes")}

    def delete_errors(self, keys: Iterable[str]) -> int:
        """Delete the error rows (and their calls) among ``keys``; returns how many."""
        wanted = list(keys)
        with self._transaction():
            errors = [row[0] for row in self._conn.execute(
                "SELECT key FROM episodes WHERE failure = 'error'")]
            doomed = sorted(set(errors) & set(wanted))
            self._conn.executemany("DELETE FROM calls WHERE episode_key = ?",
                                   [(k,) for k in doomed])
            self._conn.executemany("DELETE FROM episodes WHERE key = ?", [(k,) for k in doomed])
        return len(doomed)

    def record(self, finished: Finished, replace: bool = False) -> bool:
        """Insert an episode and its calls in one transaction.

        Args:
            replace: first delete the episode stored under the same key, in the same
                transaction (a real trial stored unscored, then scored by the rubric).

        Returns:
            ``False`` (and writes nothing) if the key is already stored and not replaced.
        """
        result = finished.result
        spec = result.spec
        row = {
            "key": finished.key, "spec_json": json.dumps(spec.to_dict(), sort_keys=True),
            "task": spec.task, "setting": spec.setting, "seed": spec.seed, "agent": spec.agent,
            "model": model_label(spec), "verification": spec.verification,
            "disturbance": disturbance_label(spec),
            "instruction_category": spec.instruction_category,
            "success": int(result.success), "progress": result.progress, "score": result.score,
            "n_done": result.n_done, "n_extra": result.n_extra, "n_required": result.n_required,
            "goal_checker_error": int(result.goal_checker_error), "actions": result.actions,
            "replans": result.replans, "wall_s": result.wall_s, "sim_s": result.sim_s,
            "run_s": finished.run_s, "model_s": result.model_s,
            "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens, "cost_usd": result.cost_usd,
            "failure": result.failure, "failure_detail": result.failure_detail,
            "trace_dir": result.trace_dir, "error": result.error, "worker": finished.worker,
            "finished_at": _now(), "judge_score": result.judge_score,
            "intervention_json": (None if result.intervention is None
                                  else json.dumps(result.intervention, sort_keys=True)),
            "judge_panel_json": (json.dumps({"judges": list(result.judges),
                                             "notes": list(result.judge_notes)})
                                 if result.judges else None),
            "objects_json": (json.dumps([asdict(o) for o in result.objects])
                             if result.objects else None),
        }
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        with self._transaction():
            if replace:
                self._conn.execute("DELETE FROM calls WHERE episode_key = ?", (finished.key,))
                self._conn.execute("DELETE FROM episodes WHERE key = ?", (finished.key,))
            inserted = self._conn.execute(
                f"INSERT OR IGNORE INTO episodes ({columns}) VALUES ({marks})",
                tuple(value if column.endswith("_json") else _storable(value)
                      for column, value in row.items())).rowcount
            if inserted:
                self._conn.executemany(
                    "INSERT INTO calls (episode_key, seq, module, model, latency_s, input_tokens,"
                    " output_tokens, cost_usd, attempts, verdict, error, truth)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [tuple(map(_storable, (finished.key, i, c.module, c.model, c.latency_s,
                                           c.input_tokens, c.output_tokens, c.cost_usd,
                                           c.attempts, c.verdict, c.error, c.truth)))
                     for i, c in enumerate(result.calls)])
        return bool(inserted)

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON-serialisable value under ``key`` (replacing any earlier one)."""
        with self._transaction():
            self._conn.execute("INSERT OR REPLACE INTO meta (key, value_json) VALUES (?, ?)",
                               (key, json.dumps(value, sort_keys=True)))

    def meta(self, key: str, default: Any = None) -> Any:
        """The value stored under ``key`` by :meth:`set_meta`, or ``default``."""
        row = self._conn.execute("SELECT value_json FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def record_module_instance(self, item: ModuleInstance) -> None:
        """Insert (or replace) one graded module-benchmark instance."""
        with self._transaction():
            self._conn.execute(
                "INSERT OR REPLACE INTO module_instances (model, module, instance, task, setting,"
                " seed, success, metric, latency_s, input_tokens, output_tokens, label_json,"
                " answer_json, error, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (item.model, item.module, item.instance, item.task, item.setting, item.seed,
                 int(item.success), item.metric, item.latency_s, item.input_tokens,
                 item.output_tokens, json.dumps(safe_data(item.label), sort_keys=True, default=str),
                 json.dumps(safe_data(item.answer), sort_keys=True, default=str),
                 _storable(item.error), _now()))

    def record_measurement(self, item: Measurement) -> None:
        """Insert one measurement, replacing the one stored under the same bench and key."""
        with self._transaction():
            self._conn.execute(
                "INSERT OR REPLACE INTO measurements (bench, key, params_json, figures_json,"
                " run_s, worker, finished_at) VALUES (?,?,?,?,?,?,?)",
                (_storable(item.bench), item.key(),
                 json.dumps(safe_data(item.params), sort_keys=True, default=str),
                 json.dumps(safe_data(item.figures), sort_keys=True, default=str),
                 item.run_s, _storable(item.worker), _now()))

    def measurements(self) -> list[dict[str, Any]]:
        """Every measurement row as a dict (``params`` and ``figures`` decoded), by bench,
        then in the order they were stored."""
        rows = [dict(r) for r in self._conn.execute(
            "SELECT * FROM measurements ORDER BY bench, rowid")]
        for row in rows:
            row["params"] = json.loads(row.pop("params_json"))
            row["figures"] = json.loads(row.pop("figures_json"))
        return rows

    def episodes(self) -> list[dict[str, Any]]:
        """Every episode row as a dict (``success`` as bool, ``intervention``: the measures
        or ``None``; ``judges`` and ``judge_notes``: the trace judges that scored and the
        panel's shortcomings, lists; ``objects``: the per-object outcomes as dicts of
        :class:`~agentic_env.harness.episode.ObjectOutcome` fields, ``[]`` when none were
        stored), in insertion order."""
        rows = [dict(r) for r in self._conn.execute("SELECT * FROM episodes ORDER BY rowid")]
        for row in rows:
            row["success"] = bool(row["success"])
            text = row.pop("intervention_json", None)
            row["intervention"] = None if text is None else json.loads(text)
            panel = json.loads(row.pop("judge_panel_json", None) or "{}")
            row["judges"], row["judge_notes"] = panel.get("judges", []), panel.get("notes", [])
            row["objects"] = json.loads(row.pop("objects_json", None) or "[]")
        return rows


    def calls(self) -> list[dict[str, Any]]:
        """Every model-call row as a dict."""
        return [dict(r) for r in self._conn.execute("SELECT * FROM calls ORDER BY id")]

    def module_instances(self) -> list[dict[str, Any]]:
        """Every module-benchmark row as a dict (``success`` as bool)."""
        rows = [dict(r) for r in self._conn.execute(
            "SELECT * FROM module_instances ORDER BY rowid")]
        for row in rows:
            row["success"] = bool(row["success"])
        return rows

    def _transaction(self) -> _Transaction:
        return _Transaction(self._conn)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an exception)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        self._conn.execute("ROLLBACK" if exc_type else "COMMIT")


def _storable(value: Any) -> Any:
    """A column's value, a text made safe to store (JSON columns are written as ASCII and
    cut through their strings by :func:`~agentic_env.text.safe_data` instead)."""
    return safe_text(value) if isinstance(value, str) else value


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")

