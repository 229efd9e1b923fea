"""The fold models of a bagged search: every cross-validated trial's k fitted pipelines, kept
in the run folder so that the final model can be their average instead of a refit.

Why files, written by the worker that fitted them: a trial runs in a worker process, and
sending k fitted forests back through a pipe with its result would cost more than writing
them where the run can read them once, at the end, for the few trials that become members.

Why pickles, and why signed: skops, which the final model is saved with, took ten times as
long (1.06 s against 0.11 s to write five 100-tree forests on digits, 0.92 against 0.15 s to
read them, measured once on the 2-core VM), and that time comes out of every trial. A pickle
runs code when loaded, so each file carries an HMAC-SHA256 of its bytes under a key kept in
the user's cache folder (:func:`fold_key`, readable by the user only): only files written
on this machine by this user are loaded. A file from elsewhere (a run folder copied in, a
Dask worker on another machine with another key) or altered is not loaded: its trial is
refitted as without bagging.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import secrets
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import joblib
import numpy as np
from joblib.numpy_pickle import NumpyPickler
from sklearn.base import BaseEstimator

from automl_engine.cache import cache_dir, write_atomically

FOLDER = "fold_models"
KEY_FILE = "fold-models.key"
_SIGNATURE = hashlib.sha256().digest_size


@dataclass(frozen=True)
class Parts:
    """What a fold-model file holds that saving it with skops costs time for, beside its
    bytes: skops writes every numpy array as a file of its own (a HistGradientBoosting model
    holds three per tree, thousands of them) and takes every scikit-learn estimator apart
    on its own (a forest holds one per tree), each at a cost per item that a byte count
    does not see (benchmarks/skops_save_rate.py)."""

    arrays: int = 0
    estimators: int = 0


class _PartsCountingPickler(NumpyPickler):
    """joblib's pickler, counting the numpy arrays and scikit-learn estimators it writes on
    the way (joblib's own pickler is a Python one, which sees every object: counting costs
    two ``isinstance`` each, where walking the models apart would cost a second pass)."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file)
        self.arrays = self.estimators = 0

    def save(self, obj: Any) -> Any:
        if isinstance(obj, np.ndarray):
            self.arrays += 1
        elif isinstance(obj, BaseEstimator):
            self.estimators += 1
        return super().save(obj)


def fold_key() -> bytes:
    """This user's key for signing fold-model files, made once (32 random bytes, mode
    0600) in the cache folder."""
    path = cache_dir() / KEY_FILE
    try:
        key = path.read_bytes()
        if len(key) == 32:
            return key
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    temporary = path.with_name(f"{path.name}.{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(key)
    os.replace(temporary, path)  # two processes racing: the last one's key wins for both
    return path.read_bytes()


class FoldModels:
    """The fold models of the trials of one run, one signed file per trial."""

    def __init__(self, folder: Path, key: bytes) -> None:
        self.folder = Path(folder)
        self.key = key

    def path(self, trial_id: int) -> Path:
        return self.folder / f"trial-{trial_id}.joblib"

    def parts_path(self, trial_id: int) -> Path:
        return self.folder / f"trial-{trial_id}.parts.json"

    def write(self, trial_id: int, models: list[Any]) -> None:
        """Keep ``models`` (the k fitted pipelines, in the order of the splits), and what
        they hold beside them (see :meth:`parts`)."""
        buffer = io.BytesIO()
        pickler = _PartsCountingPickler(buffer)
        pickler.dump(models)
        data = buffer.getvalue()
        signature = hmac.new(self.key, data, hashlib.sha256).digest()
        self.folder.mkdir(parents=True, exist_ok=True)
        parts = Parts(arrays=pickler.arrays, estimators=pickler.estimators)
        text = json.dumps(asdict(parts))
        write_atomically(self.parts_path(trial_id), lambda tmp: tmp.write_text(text))
        # a reader never sees half a file
        write_atomically(self.path(trial_id), lambda tmp: tmp.write_bytes(signature + data))

    def parts(self, trial_id: int) -> Parts:
        """How many numpy arrays and scikit-learn estimators the trial's fold models hold
        (none when unknown): what saving them takes time for besides bytes."""
        try:
            return Parts(**json.loads(self.parts_path(trial_id).read_text()))
        except (OSError, ValueError, TypeError):
            return Parts()

    def read(self, trial_id: int) -> list[Any] | None:
        """The trial's fold models, or None when there is no file or its signature is not
        this user's (written elsewhere, or altered): never unpickled then."""
        try:
            content = self.path(trial_id).read_bytes()
        except FileNotFoundError:
            return None
        signature, data = content[:_SIGNATURE], content[_SIGNATURE:]
        expected = hmac.new(self.key, data, hashlib.sha256).digest()
        if not hmac.compare_digest(signature, expected):
            return None
        return list(joblib.load(io.BytesIO(data)))

    def stored(self) -> set[int]:
        """The ids of the trials whose fold models are kept."""
        return {
            int(path.stem.removeprefix("trial-"))
            for path in self.folder.glob("trial-*.joblib")
            if path.stem.removeprefix("trial-").isdigit()
        }

    def keep_only(self, trial_ids: Iterable[int]) -> None:
        """Remove the files of every other trial: only trials that may still become members
        of the final model keep theirs (a long search would otherwise fill the disk)."""
        keep = set(trial_ids)
        for trial_id in self.stored() - keep:
            self.path(trial_id).unlink(missing_ok=True)
            self.parts_path(trial_id).unlink(missing_ok=True)
