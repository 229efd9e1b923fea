"""What a run leaves in its folder: the file names, the summary, and reading them back.

Every part of a run (the set-up, the loop, the finishing, the suites and the CLI) reads and
writes these, so they live apart from all of them.
"""

from __future__ import annotations

import contextlib
import errno
import json
import sys
import types
import warnings
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import joblib

from automl_core.contracts import Policy
from automl_core.errors import AutoMLError
from automl_engine.final_model import FinalChoice
from automl_engine.history import RunHistory, StoredTrial
from automl_engine.model import TrainedModel
from automl_engine.model_trust import checked_trust, declared_model_types

if TYPE_CHECKING:
    from automl_engine.recipe import Recipe

HISTORY_FILE = "history.sqlite"
MODEL_FILE = "model.skops"
#: A model skops could not write, pickled: loaded only when trusted.
PICKLED_MODEL_FILE = "model.joblib"
RECIPE_FILE = "recipe.yaml"
SUMMARY_FILE = "summary.json"
#: History meta key: seconds the run has searched so far (a resumed run starts from there).
ELAPSED = "elapsed"


class RunError(AutoMLError):
    """A run stopped on an error after saving what it had; ``summary`` says what was saved."""

    def __init__(self, message: str, summary: RunSummary) -> None:
        super().__init__(message)
        self.summary = summary


@dataclass
class RunInfo:
    """What observers are told about a run when it starts."""

    run_dir: Path
    recipe: Recipe
    dataset: str
    task: str
    metric: str
    started_at: float
    budget_trials: int | None
    budget_seconds: float | None
    #: A resumed run's trials finished before this session, and the best loss among them
    #: (None: none), so that a progress display goes on from them rather than from zero.
    trials_before: int = 0
    best_before: float | None = None


@dataclass
class RunSummary:
    """What a run produced."""

    run_dir: str
    n_trials: int
    best_trial: int | None
    best_loss: float | None
    best_config: dict[str, Any] | None
    metric: str
    elapsed: float
    stopped_because: str
    test_scores: dict[str, float] | None = None
    model_path: str | None = None
    ensemble: dict[int, float] = field(default_factory=dict)
    #: For a benchmark task: its name, the dataset, the best and worst stored losses, and
    #: the normalised regret of the best trial.
    benchmark: dict[str, Any] | None = None
    #: Seconds spent refitting the final model on all training rows (0 when bagged).
    refit_seconds: float | None = None
    #: Seconds spent reading a bagged search's fold models back as the final model (None:
    #: not bagged).
    bagged_seconds: float | None = None
    #: Ensemble members left out of the final model because their refit would have crossed
    #: the run's deadline: ``{"trial", "weight" (in the choice first made),
    #: "estimated_seconds"}``. ``ensemble`` then holds the weights of the choice made again
    #: over the members refitted (never the first weights renormalised).
    dropped_members: list[dict[str, Any]] = field(default_factory=list)
    #: How the final model was chosen (:meth:`automl_engine.final_model.FinalChoice.record`):
    #: ensemble or single best, both validation losses, and why.
    final_model: dict[str, Any] = field(default_factory=dict)
    #: Where the wall time went: ``{"search": seconds into the run when the search ended,
    #: "reserved": seconds it had kept back for finishing, "finishing": seconds finishing
    #: took}`` (empty when the search did not run in this process).
    timing: dict[str, float] = field(default_factory=dict)
    #: The final model as this process saved it; not part of the record (summary.json and
    #: the history never hold it), None for a summary read back from a folder. The
    #: estimators take it instead of reading ``model.skops`` back, which for a bagged
    #: ensemble (skops rebuilds every fold's estimators) took 5 s of a 30 s fit.
    model: TrainedModel | None = field(
        default=None, repr=False, compare=False, metadata={"recorded": False}
    )

    def record_choice(self, choice: FinalChoice) -> None:
        """The final model's members, their weights and why they were chosen."""
        self.ensemble = {
            t.trial.id: float(w) for t, w in zip(choice.members, choice.weights, strict=True)
        }
        self.final_model = choice.record()

    def to_record(self) -> dict[str, Any]:
        """Every field but the in-process ``model``, as JSON values."""
        kept = {
            f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("recorded", True)
        }
        plain: dict[str, Any] = json.loads(json.dumps(kept, default=str))
        return plain

    def save(self, run_dir: Path, history: RunHistory) -> None:
        """Write ``summary.json`` and keep the same record in the history."""
        record = self.to_record()
        (run_dir / SUMMARY_FILE).write_text(json.dumps(record, indent=2))
        history.set_meta("summary", record)


def how_trials_ended(trials: list[StoredTrial], stopped_because: str) -> str:
    """How many trials ended in each way, why the search stopped, and the first error of
    each kind (the last line of its traceback): what a run with no successful trial
    tells its user."""
    counts: dict[str, int] = {}
    first_error: dict[str, str] = {}
    for stored in trials:
        counts[stored.status] = counts.get(stored.status, 0) + 1
        if stored.error and stored.status not in first_error:
            first_error[stored.status] = stored.error.strip().splitlines()[-1]
    ended = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "none run"
    lines = [f"{len(trials)} trials ({ended}; {stopped_because})"]
    lines += [f"the first {status}: {error}" for status, error in first_error.items()]
    return "\n".join(lines)


#: What a trial's error says when it ran out of memory (numpy's, Python's, the executor's).
OUT_OF_MEMORY = ("MemoryError", "Unable to allocate", "memory limit", "out of memory")


def memory_limit_note(trials: list[StoredTrial], limit_mb: int | None) -> str:
    """Why trials failing on memory (a run where none succeeded, most on memory) may be the
    limit's doing, when ``budget.trial_memory_mb`` is set: it bounds a trial's virtual
    memory (address space), which counts every library and thread stack mapped, far above
    what the trial fills. (What a trial would have needed is not measured.)"""
    if limit_mb is None or not trials:
        return ""
    on_memory = [
        t
        for t in trials
        if t.status == "memout" or (t.error and any(m in t.error for m in OUT_OF_MEMORY))
    ]
    if 2 * len(on_memory) < len(trials):  # most trials failed otherwise: not the limit
        return ""
    return (
        f"\nthe trials ran out of memory under budget.trial_memory_mb={limit_mb}: the limit "
        "bounds a trial's virtual memory (address space), which counts every library and "
        "thread stack the process maps (often 1-3 GB with numpy and LightGBM loaded), not "
        "only the data it fills. Raise it (e.g. 4000) or leave it out"
    )


def finished_summary(folder: Path) -> RunSummary | None:
    """The summary a finished run left in ``folder``; None when it did not finish."""
    path = folder / SUMMARY_FILE
    if not path.is_file():
        return None
    try:
        return RunSummary(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None


def save_model(run_dir: Path, payload: dict[str, Any]) -> Path:
    """Write the final model and what ``automl predict`` checks (``payload``) to
    :data:`MODEL_FILE`, in skops' format, which loads without running code. A model skops
    cannot write (a type it does not know how to take apart) is pickled to
    :data:`PICKLED_MODEL_FILE` instead, with a warning: that file loads only when trusted.

    A disk that cannot take the file (full, over quota, read-only, not writable: an
    ``OSError``) is no reason for a pickle: :class:`ModelNotSavedError` says so, naming the
    file, and no part of a model file is left behind; the history is intact, so resuming
    the run saves the model once the disk is fixed."""
    skops_io = import_skops()

    path = run_dir / MODEL_FILE
    try:
        # deflate at its fastest level: a bagged ensemble's 96 MB file becomes 17 MB for
        # about the same time (7.8 vs 8.2 s, measured once on the 2-core VM)
        with linear_skops_archive():
            skops_io.dump(payload, path, compression=zipfile.ZIP_DEFLATED, compresslevel=1)
        return path
    except OSError as error:
        path.unlink(missing_ok=True)
        raise ModelNotSavedError(run_dir, path, error) from error
    except Exception as error:  # skops refuses what it cannot take apart
        path.unlink(missing_ok=True)
        pickled = run_dir / PICKLED_MODEL_FILE
        try:
            joblib.dump(payload, pickled)
        except OSError as disk_error:
            pickled.unlink(missing_ok=True)
            raise ModelNotSavedError(run_dir, pickled, disk_error) from disk_error
        warnings.warn(
            f"the model could not be saved in skops' format ({type(error).__name__}: {error}); "
            f"it was pickled to {pickled}, which loads only with --trust (trust=True)",
            stacklevel=2,
        )
        return pickled


class _IndexedZipFile(zipfile.ZipFile):
    """A zip archive whose :meth:`namelist` is a view of its name index rather than a new
    list. skops (0.16) writes every numpy array of a model as a member of its own and, before
    each, asks ``name not in zip_file.namelist()``: a fresh list of every member so far, so
    saving ``n`` arrays costs ``n**2``. A HistGradientBoosting model holds three arrays per
    tree (512 iterations x 10 classes: 15,360), and a bagged model five of them: saving five
    such fold models took 175 s where one took 5 s. With the view the question is a dict
    lookup and the save is linear (three 200-iteration digits models: 8.6 s before, 2.3 s
    after, on the 2-core VM)."""

    def namelist(self) -> Any:  # a KeysView, which answers ``in`` and iterates like the list
        return self.NameToInfo.keys()


@contextlib.contextmanager
def linear_skops_archive() -> Iterator[None]:
    """Have skops write its archive with :class:`_IndexedZipFile` for the time of one save.

    skops opens the archive itself (``skops.io._persist.ZipFile``), so the class is swapped
    there and put back after. Should a later skops no longer open it that way, nothing is
    swapped and the save is only slower."""
    persist = sys.modules.get("skops.io._persist")
    if persist is None or getattr(persist, "ZipFile", None) is not zipfile.ZipFile:
        yield
        return
    setattr(persist, "ZipFile", _IndexedZipFile)  # noqa: B010 (a module attribute mypy cannot see)
    try:
        yield
    finally:
        setattr(persist, "ZipFile", zipfile.ZipFile)  # noqa: B010


class ModelNotSavedError(AutoMLError):
    """The final model could not be written: the disk holding the run folder is full, over
    quota, read-only or not writable (``error``, the ``OSError``)."""

    def __init__(self, run_dir: Path, path: Path, error: OSError) -> None:
        self.path = path
        self.error = error
        why = error.strerror or str(error)
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            problem = f"no space left on the disk holding {run_dir}"
            fix = "free space"
        elif error.errno == errno.EROFS:
            problem = f"the disk holding {run_dir} is read-only"
            fix = "make it writable"
        elif error.errno in (errno.EACCES, errno.EPERM):
            problem = f"{run_dir} may not be written to"
            fix = "make it writable"
        else:
            problem = f"writing in {run_dir} failed"
            fix = "fix that"
        super().__init__(
            f"the model could not be saved to {path}: {problem} ({why}). The search's trials "
            f"are kept in the history: {fix} and `automl resume {run_dir}` to save the model"
        )


def prepare_saving() -> None:
    """Import skops now, in the run's set-up. Its import takes seconds (it imports every
    scikit-learn module to list the estimators): paid after the search, it would come out
    of the time planned for the refit. (Importing it in a thread beside the search is not
    safe: two threads importing modules that import each other can leave one of them
    half-initialised, which failed trials of the ``sequential`` executor.)"""
    import_skops()


#: scikit-learn's bundled array-API adapters for other libraries: packages that import those
#: libraries (torch, dask...) when imported themselves, and contain no estimator.
_ARRAY_API_ADAPTERS = tuple(
    f"sklearn.externals.array_api_compat.{name}" for name in ("torch", "dask", "cupy", "jax")
)


def import_skops() -> types.ModuleType:
    """``skops.io``, imported without importing torch and dask along with it.

    skops lists scikit-learn's estimators at import (``all_estimators``), which walks every
    scikit-learn package with ``pkgutil.walk_packages``; that imports each package to look
    inside it, the array-API adapters under ``sklearn.externals`` included, and the torch
    adapter imports torch (and the dask one dask) wherever they are installed: seconds of a
    run's budget for nothing, as ``externals`` is skipped for estimators anyway. While skops
    is imported, those adapters not imported yet are stood in for by empty modules (which
    ``walk_packages`` does not look into), then removed, so that a later real import of one
    finds nothing in its way."""
    if "skops.io" in sys.modules:
        return sys.modules["skops.io"]
    stand_ins = {
        name: types.ModuleType(name) for name in _ARRAY_API_ADAPTERS if name not in sys.modules
    }
    sys.modules.update(stand_ins)
    try:
        import skops.io
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    return skops.io


def load_saved_model(
    run_dir: Path, *, trust: bool = False, allowed: Iterable[str] | None = None
) -> dict[str, Any]:
    """The dict a run saved (see :func:`save_model`); the error says why there is none.

    A skops file is rebuilt only when every type and function it names beyond those skops
    trusts itself is declared, exactly, by the core or in ``allowed``: by default what the
    installed plugins declare (:func:`~automl_engine.model_trust.declared_model_types`); pass
    that of the plugins you have loaded. A file naming any other is refused, as is a
    pickled model, unless ``trust`` is set: loading a pickle runs whatever code its author
    put in it, and a model calls the functions it holds (see :mod:`automl_engine.model_trust`)."""
    path = run_dir / MODEL_FILE
    if not path.is_file():
        pickled = run_dir / PICKLED_MODEL_FILE
        if pickled.is_file():
            return _load_pickled(pickled, trust)
        raise AutoMLError(
            f"{run_dir} holds no model ({MODEL_FILE} is missing): {_why_none(run_dir)}"
        )
    skops_io = import_skops()
    try:
        named = skops_io.get_untrusted_types(file=path)
    except Exception as error:
        raise AutoMLError(f"{path} is not a model saved by a run: {error}") from None
    if allowed is None and not trust:
        from automl_core.plugins import load_plugins

        allowed = declared_model_types(load_plugins())
    checked = checked_trust(path, named, allowed or (), trust)
    stored = skops_io.load(path, trusted=checked)
    return _checked(stored, path)


def _load_pickled(path: Path, trust: bool) -> dict[str, Any]:
    if not trust:
        raise AutoMLError(
            f"{path} is a pickle: loading it runs whatever code its author put in it. Load it "
            "only if you made it yourself: automl predict --trust (load_saved_model(..., "
            "trust=True))"
        )
    return _checked(joblib.load(path), path)


def _checked(stored: Any, path: Path) -> dict[str, Any]:
    if not isinstance(stored, dict) or not isinstance(stored.get("model"), TrainedModel):
        raise AutoMLError(f"{path} was not written by an automl run (no TrainedModel in it)")
    return stored


def _why_none(run_dir: Path) -> str:
    if not run_dir.is_dir():
        return "no such folder"
    if (run_dir / HISTORY_FILE).is_file():
        return "the run saved no model: no trial succeeded, or it was a benchmark task"
    return f"not a run folder (no {HISTORY_FILE} either)"


def stored_policy(run_dir: Path) -> Policy | None:
    """The policy recorded in the history of the run in ``run_dir``, if any."""
    path = run_dir / HISTORY_FILE
    if not path.is_file():
        return None
    with RunHistory(path) as history:
        record = history.get_meta("policy")
    if not record:
        return None
    return Policy(**{f.name: record[f.name] for f in fields(Policy) if f.name in record})


def stored_elapsed(run_dir: Path) -> float:
    """The seconds the run in ``run_dir`` has searched so far (0 without a history), so
    that a resumed strategy is told the time left before the loop counts it."""
    path = run_dir / HISTORY_FILE
    if not path.is_file():
        return 0.0
    with RunHistory(path) as history:
        return float(history.get_meta(ELAPSED, 0.0))


def resumable(folder: Path) -> bool:
    """Whether ``folder`` holds an interrupted run to resume. A run killed before it stored
    its recipe left a history with nothing to resume (and that the runner would refuse as
    another search): it is removed, and the run starts afresh."""
    path = folder / HISTORY_FILE
    if not path.exists():
        return False
    with RunHistory(path) as history:
        started = history.get_meta("recipe") is not None
    if not started:
        for leftover in folder.glob(f"{HISTORY_FILE}*"):
            leftover.unlink()
    return started


def safe_folder_name(name: str) -> str:
    """``name`` with every character but letters, digits, ``-``, ``_`` and ``.`` as ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "_"
