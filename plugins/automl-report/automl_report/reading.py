"""Reading a run folder for the page: its history, opened read-only (a dashboard beside a
live run must never write to it), and what the run recorded about itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from automl_core.errors import AutoMLError
from automl_engine.history import RunHistory, StoredTrial
from automl_engine.recipe import with_one_name_key
from automl_engine.run_folder import HISTORY_FILE, SUMMARY_FILE, finished_summary

#: The history's meta keys the page reads (``automl_engine.compose.record_setup`` and the
#: tasks write them): anything else the run keeps is not shown.
META_KEYS = (
    "recipe",
    "metric",
    "dataset",
    "benchmark",
    "metafeatures",
    "warmstart",
    "policy",
    "plugins",
    "versions",
    "setup_seconds",
    "started_at",
    "resumed_at",
    "elapsed",
    "summary",
)


@dataclass(frozen=True)
class RunRecord:
    """Everything the page is drawn from: the trials (in id order), the meta records, and
    the summary once the run finished (None while it runs)."""

    run_dir: Path
    trials: list[StoredTrial]
    meta: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] | None = None

    @property
    def recipe(self) -> dict[str, Any]:
        return self.meta.get("recipe") or {}

    @property
    def metric(self) -> str:
        return str(self.meta.get("metric") or "loss")

    @property
    def dataset(self) -> str:
        benchmark = self.meta.get("benchmark")
        if benchmark:
            return f"{benchmark['name']}:{benchmark['dataset']}"
        return str((self.meta.get("dataset") or {}).get("name", "?"))

    @property
    def started_at(self) -> float:
        """When the search started (time.time()); the first trial's start for a history
        that did not record it."""
        recorded = self.meta.get("started_at")
        if recorded is not None:
            return float(recorded)
        return min((t.started_at for t in self.trials), default=0.0)

    @property
    def finished(self) -> bool:
        return self.summary is not None

    @property
    def search(self) -> dict[str, Any]:
        """The recipe's ``search`` section as a mapping (a bare strategy name expanded; a
        recipe of before ``name`` was the one key, ``strategy:``, read as ``name``)."""
        search = self.recipe.get("search") or {}
        if isinstance(search, str):
            return {"name": search}
        return dict(with_one_name_key({"search": search})["search"])

    @property
    def strategy(self) -> str:
        return str(self.search.get("name", "?"))

    @property
    def surrogate(self) -> str | None:
        surrogate = self.search.get("surrogate")
        if isinstance(surrogate, dict):
            surrogate = surrogate.get("name")
        return None if surrogate is None else str(surrogate)


def history_path(run_dir: Path) -> Path:
    path = Path(run_dir) / HISTORY_FILE
    if not path.is_file():
        raise AutoMLError(f"{run_dir} is not a run folder (no {HISTORY_FILE})")
    return path


def read_run(run_dir: str | Path) -> RunRecord:
    """The run in ``run_dir`` as it stands now (a live run's finished and running trials)."""
    run_dir = Path(run_dir)
    with RunHistory(history_path(run_dir), read_only=True) as history:
        trials = history.trials()
        meta = {key: history.get_meta(key) for key in META_KEYS}
    return RunRecord(run_dir, trials, meta, _summary(run_dir, meta))


def _summary(run_dir: Path, meta: dict[str, Any]) -> dict[str, Any] | None:
    """``summary.json`` (read as the core reads it), or the same record kept in the
    history."""
    summary = finished_summary(run_dir)
    return summary.to_record() if summary is not None else meta.get("summary")


def history_stamp(run_dir: str | Path) -> tuple[int, ...]:
    """What changes when the run writes: the size and modification time of the history and
    of its write-ahead log (in WAL mode a write reaches the log first, the main file only at a
    checkpoint), and of the summary. The dashboard draws the page again when it changes."""
    run_dir = Path(run_dir)
    stamp: list[int] = []
    for name in (HISTORY_FILE, f"{HISTORY_FILE}-wal", SUMMARY_FILE):
        try:
            status = (run_dir / name).stat()
        except FileNotFoundError:
            stamp += [0, 0]
            continue
        stamp += [status.st_mtime_ns, status.st_size]
    return tuple(stamp)
