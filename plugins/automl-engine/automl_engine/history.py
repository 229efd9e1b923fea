"""The run history: every trial of a run, in one SQLite file in the run folder.

One writer, the driver process, so there is no locking contention. A trial is written when it
starts (status ``running``) and again when it ends, each in its own transaction (the end with
everything the loop records about it: predictions, the run's elapsed time), before the
strategy hears of it: a run killed at any moment (``kill -9`` included: a commit in WAL mode is
in the operating system's hands once it returns) leaves a consistent file that says which
trials finished and which were in flight, and loses no result the loop had. Out-of-sample
predictions are stored beside each trial for ensembling.
"""

from __future__ import annotations

import io
import json
import math
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from automl_core.errors import AutoMLError
from automl_core.space import config_key
from automl_core.trial import Result, Status, Trial

RUNNING = "running"
#: The columns StoredTrial is read from, in the order of ``RunHistory._row``.
SELECT_TRIALS = (
    "SELECT id, config, budget, origin, status, loss, metrics, fit_time, predict_time, "
    "duration, error, started_at, finished_at, tell_order, asked_at_tell, fit_cpu_time, info "
    "FROM trials"
)
#: Columns added after the first release, with their types: a history written before
#: them gains them (empty) when opened.
ADDED_COLUMNS = {
    "tell_order": "INTEGER",
    "asked_at_tell": "INTEGER",
    "fit_cpu_time": "REAL",
    "info": "TEXT",
}

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials (
    id INTEGER PRIMARY KEY,
    config TEXT NOT NULL,
    budget REAL,
    origin TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    loss REAL,
    metrics TEXT NOT NULL DEFAULT '{}',
    fit_time REAL,
    predict_time REAL,
    duration REAL,
    error TEXT,
    started_at REAL NOT NULL,
    finished_at REAL,
    tell_order INTEGER,
    asked_at_tell INTEGER,
    fit_cpu_time REAL,
    info TEXT
);
CREATE TABLE IF NOT EXISTS predictions (
    trial_id INTEGER PRIMARY KEY REFERENCES trials(id),
    array BLOB NOT NULL
);
"""


@dataclass(frozen=True)
class StoredTrial:
    """A row of the history: the trial and, once finished, its result (without predictions)."""

    trial: Trial
    status: str
    loss: float
    metrics: dict[str, float] = field(default_factory=dict)
    fit_time: float | None = None
    predict_time: float | None = None
    duration: float | None = None
    error: str | None = None
    started_at: float = 0.0
    finished_at: float | None = None
    #: The position of this trial's result among those told to the strategy (1 for the
    #: first), and how many trials had been asked for by then: what a resumed run replays
    #: (:func:`automl_engine.loop.replay_calls`). None when it was not told (cut at the wall
    #: time) or in a history written before they were kept.
    tell_order: int | None = None
    asked_at_tell: int | None = None
    #: CPU seconds of the fits (None: not measured; see :attr:`Result.fit_cpu_time`).
    fit_cpu_time: float | None = None
    #: The result's ``info`` as JSON keeps it (numpy values as numbers and lists), so that a
    #: resumed run tells the strategy what the interrupted one was told.
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.status != RUNNING

    @property
    def ranks(self) -> bool:
        """Whether the trial competes for best (:meth:`RunHistory.best`): it succeeded with
        a finite loss."""
        return self.status == Status.OK.value and math.isfinite(self.loss)

    @classmethod
    def of(cls, trial: Trial, result: Result) -> StoredTrial:
        """The row ``trial`` and its ``result`` are stored as (without its time stamps)."""
        return cls(
            trial=trial,
            status=result.status.value,
            loss=result.loss,
            metrics=dict(result.metrics),
            fit_time=result.fit_time,
            predict_time=result.predict_time,
            duration=result.duration,
            error=result.error,
            fit_cpu_time=result.fit_cpu_time or None,
            info=json.loads(_info_json(result.info)),
        )

    def result(self) -> Result:
        """The stored result: what the history keeps of it (no predictions)."""
        return Result(
            status=Status(self.status),
            loss=self.loss,
            metrics=dict(self.metrics),
            fit_time=self.fit_time or 0.0,
            predict_time=self.predict_time or 0.0,
            duration=self.duration or 0.0,
            error=self.error,
            fit_cpu_time=self.fit_cpu_time or 0.0,
            info=dict(self.info),
        )


def _dump_array(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _info_json(info: Mapping[str, Any]) -> str:
    """``info`` as JSON: numpy numbers and arrays as Python's, anything else JSON lacks as
    its text."""

    def plain(value: Any) -> Any:
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            return value.tolist()
        return str(value)

    if not info:
        return "{}"
    return json.dumps(dict(info), default=plain)


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def rank_key(stored: StoredTrial) -> tuple[float, float, int]:
    """How trials rank, best first. Losses at different budgets (multi-fidelity search) are
    not comparable: a trial at a larger budget ranks before any at a smaller one (no budget
    counts as the full one), then by loss, ties to the earliest."""
    budget = math.inf if stored.trial.budget is None else stored.trial.budget
    return (-budget, stored.loss, stored.trial.id)


class HistoryError(AutoMLError):
    """The history file cannot be read or written: damaged, read-only, or a full disk."""


class _Database:
    """The SQLite connection, with every error said as a :class:`HistoryError` that names
    the file and what to do, instead of SQLite's own words (``database disk image is
    malformed``)."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        with self._said():
            if read_only:
                self.connection = sqlite3.connect(
                    _read_only_uri(path), isolation_level=None, uri=True
                )
            else:
                self.connection = sqlite3.connect(path, isolation_level=None)

    def execute(self, sql: str, parameters: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        with self._said():
            return self.connection.execute(sql, parameters)

    def executescript(self, script: str) -> None:
        with self._said():
            self.connection.executescript(script)

    def close(self) -> None:
        self.connection.close()

    @contextmanager
    def _said(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as error:
            raise HistoryError(storage_problem(self.path, error)) from error


def _read_only_uri(path: Path) -> str:
    """``mode=ro``: SQLite refuses every write, and a missing file is an error. A history
    with no write-ahead log beside it has no writer (the last connection to close removes
    the log): it is also opened ``immutable``, else reading it would leave an empty log and
    its index beside it. Nor does one in a folder this process cannot write (a read-only
    mount, a finished run made read-only): ``mode=ro`` would need to create the log's
    index there, and fail."""
    live = path.with_name(f"{path.name}-wal").exists() and os.access(path.parent, os.W_OK)
    return f"{path.resolve().as_uri()}?mode=ro" + ("" if live else "&immutable=1")


def storage_problem(path: Path, error: sqlite3.Error) -> str:
    """What a SQLite error means for the run whose history is ``path``."""
    text = str(error)
    if "malformed" in text or "not a database" in text:
        return (
            f"the history {path} is damaged ({text}): it was truncated or overwritten, and "
            "cannot be read. Restore it from a copy, or start the run again in a new folder"
        )
    if "disk is full" in text or "disk I/O error" in text:
        return (
            f"cannot write the history {path}: {text}. The trials stored before are "
            f"intact: free some space and resume the run (automl resume {path.parent})"
        )
    if "readonly" in text or "unable to open" in text:
        return f"cannot open the history {path} for writing ({text}): is its folder writable?"
    return f"the history {path}: {text}"


class RunHistory:
    """Read and write access to ``history.sqlite`` of a run folder; ``read_only`` opens an
    existing one for reading only (a dashboard beside a live run: WAL lets it read while the
    run writes, and it can change nothing)."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self._told: int | None = None  # the last tell order written (read on first use)
        if read_only:
            self._db = _Database(self.path, read_only=True)
            self._check_is_history()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = _Database(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(trials)")}
        for column, kind in ADDED_COLUMNS.items():
            if column not in columns:
                self._db.execute(f"ALTER TABLE trials ADD COLUMN {column} {kind}")

    def _check_is_history(self) -> None:
        """A reader refuses a file that holds no run's tables (an empty or foreign file)
        rather than reporting "0 trials" or "no such table"; it writes nothing to it."""
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master")}
        if not {"meta", "trials"} <= tables:
            self._db.close()
            size = self.path.stat().st_size
            raise HistoryError(
                f"{self.path} holds no run history ({size:,} bytes, no trials table): it is "
                "empty, truncated or another file. It was not changed; restore it from a "
                "copy, or start the run again in a new folder"
            )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> RunHistory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- metadata ------------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(value))
        )

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    # -- trials --------------------------------------------------------------------------
    def start(self, trial: Trial) -> None:
        """Record that ``trial`` was handed to an executor (again, for a trial re-queued on
        resume: its row is replaced)."""
        self._db.execute(
            "INSERT OR REPLACE INTO trials (id, config, budget, origin, status, started_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                trial.id,
                json.dumps(dict(trial.config)),
                trial.budget,
                trial.origin,
                RUNNING,
                time.time(),
            ),
        )

    def finish(
        self,
        trial: Trial,
        result: Result,
        asked: int | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Record the result of ``trial`` (and its predictions) in one transaction.
        ``asked`` is how many trials had been asked for when the result is told to the
        strategy (None: it is not told); the result's place among those told is kept too.
        ``meta`` entries (:meth:`set_meta`) are written in the same transaction: what the
        loop records after each result costs one commit, not one per write."""
        order = None if asked is None else self._last_tell_order() + 1
        alone = result.predictions is None and not meta  # one statement: its own transaction
        with nullcontext() if alone else self._transaction():
            self._db.execute(
                "UPDATE trials SET status=?, loss=?, metrics=?, fit_time=?, predict_time=?, "
                "duration=?, error=?, finished_at=?, tell_order=?, asked_at_tell=?, "
                "fit_cpu_time=?, info=? WHERE id=?",
                (
                    result.status.value,
                    _finite_or_none(result.loss),
                    json.dumps(result.metrics),
                    result.fit_time,
                    result.predict_time,
                    result.duration,
                    result.error,
                    time.time(),
                    order,
                    asked,
                    result.fit_cpu_time or None,
                    _info_json(result.info),
                    trial.id,
                ),
            )
            if result.predictions is not None:
                self._db.execute(
                    "INSERT OR REPLACE INTO predictions (trial_id, array) VALUES (?, ?)",
                    (trial.id, _dump_array(result.predictions)),
                )
            for key, value in (meta or {}).items():
                self.set_meta(key, value)
        if order is not None:
            self._told = order

    def _last_tell_order(self) -> int:
        """The highest tell order written, read from the file once: this history is the
        run's one writer (a query at every finish would scan every row)."""
        if self._told is None:
            row = self._db.execute("SELECT COALESCE(MAX(tell_order), 0) FROM trials").fetchone()
            self._told = int(row[0])
        return self._told

    def trials(self, *, finished_only: bool = False) -> list[StoredTrial]:
        if finished_only:
            rows = self._db.execute(f"{SELECT_TRIALS} WHERE status != ? ORDER BY id", (RUNNING,))
        else:
            rows = self._db.execute(f"{SELECT_TRIALS} ORDER BY id")
        return [self._row(row) for row in rows]

    def running(self) -> list[StoredTrial]:
        """Trials started and never finished: those in flight when a run was killed."""
        rows = self._db.execute(f"{SELECT_TRIALS} WHERE status = ? ORDER BY id", (RUNNING,))
        return [self._row(row) for row in rows]

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM trials").fetchone()[0])

    def best(self, n: int = 1) -> list[StoredTrial]:
        """The ``n`` best finished trials of different configurations, in :func:`rank_key`
        order; a configuration evaluated at several budgets appears once, at its largest."""
        # rank_key's order, sorted by SQLite: only the rows read until n are chosen are
        # parsed (the loop asks at every new best; parsing them all grew with the run)
        rows = self._db.execute(
            f"{SELECT_TRIALS} WHERE status = ? AND loss IS NOT NULL "
            "ORDER BY budget IS NULL DESC, budget DESC, loss, id",
            (Status.OK.value,),
        )
        chosen: list[StoredTrial] = []
        seen: set[str] = set()
        for stored in map(self._row, rows):
            if len(chosen) == n:
                break
            key = config_key(stored.trial.config)
            if key not in seen:
                seen.add(key)
                chosen.append(stored)
        return chosen

    def predictions(self, trial_id: int) -> np.ndarray | None:
        row = self._db.execute(
            "SELECT array FROM predictions WHERE trial_id = ?", (trial_id,)
        ).fetchone()
        return np.load(io.BytesIO(row[0]), allow_pickle=False) if row else None

    @staticmethod
    def _row(row: tuple) -> StoredTrial:
        (
            id_,
            config,
            budget,
            origin,
            status,
            loss,
            metrics,
            fit_time,
            predict_time,
            duration,
            error,
            started_at,
            finished_at,
            tell_order,
            asked_at_tell,
            fit_cpu_time,
            info,
        ) = row
        return StoredTrial(
            trial=Trial(id_, json.loads(config), budget, origin),
            status=status,
            loss=math.inf if loss is None else loss,
            metrics=json.loads(metrics),
            fit_time=fit_time,
            predict_time=predict_time,
            duration=duration,
            error=error,
            started_at=started_at,
            finished_at=finished_at,
            tell_order=tell_order,
            asked_at_tell=asked_at_tell,
            fit_cpu_time=fit_cpu_time,
            info=json.loads(info) if info else {},
        )

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN")
        try:
            yield
        except BaseException:
            if self._db.connection.in_transaction:  # SQLite may have rolled back itself
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
