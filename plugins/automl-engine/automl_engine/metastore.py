"""Meta-data folders: the compact format every meta-data source converts into, and how a
run resolves a component's ``metadata`` parameter.

The folder format is also how users bring their own meta-data: ``metadata.json`` (names,
configurations, splits, the space and free-form ``info``), ``arrays.npz`` (the matrices) and,
optionally, ``metafeatures.csv`` (one row per dataset, first column the dataset id). See
``docs/data.md`` for the field-by-field description. The named sources, their package
downloads and the conversion cache live in automl-metadata (``automl_metadata.store``).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import json
import os
import shutil
import uuid
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from automl_core.contracts import (
    LocalMetaDataLoader,
    MetaData,
    MetaDataResolver,
    TaskDescription,
)
from automl_core.errors import DatasetError
from automl_spaces.pool_space import PoolSpace

if TYPE_CHECKING:
    from automl_core.plugins import Plugins

#: Bumped when the folder layout changes; older converted folders are then rebuilt.
FORMAT_VERSION = 1
METADATA_FILE = "metadata.json"
ARRAYS_FILE = "arrays.npz"
METAFEATURES_FILE = "metafeatures.csv"


def save_metadata(metadata: MetaData, folder: Path) -> None:
    """Write ``metadata`` to ``folder`` (created; replaced if it exists).

    The folder is written next to its final place and renamed into it, so a reader never
    sees half a folder (while an old folder is replaced it may briefly see none). When
    several processes convert the same data at once, none fails and one writer's whole
    folder is left.
    """
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Not mkdtemp: its 0700 mode would make a cache shared on a cluster unreadable to others.
    tmp = folder.parent / f".{folder.name}.{uuid.uuid4().hex}"
    tmp.mkdir()
    try:
        _write_folder(metadata, tmp)
        _move_into_place(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _move_into_place(tmp: Path, folder: Path) -> None:
    """Rename ``tmp`` to ``folder``, an existing ``folder`` first moved aside and removed.

    Folders only ever arrive at ``folder`` whole, by rename: if another writer's arrives
    between our moving the old one aside and renaming ours, theirs is as good, and ours is
    dropped.
    """
    try:
        os.replace(tmp, folder)  # atomic; fails only if ``folder`` is a non-empty directory
        return
    except OSError as error:
        if error.errno not in OCCUPIED:
            raise
    old = folder.parent / f".{folder.name}.old.{uuid.uuid4().hex}"
    with contextlib.suppress(FileNotFoundError):  # another writer moved it aside first
        os.replace(folder, old)
    try:
        os.replace(tmp, folder)
    except OSError as error:
        if error.errno not in OCCUPIED:
            raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


#: What renaming onto a non-empty directory raises (Linux: ENOTEMPTY; some systems: EEXIST).
OCCUPIED = (errno.ENOTEMPTY, errno.EEXIST)


def load_metadata(folder: Path) -> MetaData:
    """Read a folder written by :func:`save_metadata` (or by hand, in the same format).

    Raises :class:`DatasetError` naming the folder and the file that is missing or broken.
    """
    folder = Path(folder)
    header = _read_header(folder)
    arrays = _read_arrays(folder)
    try:
        return MetaData(
            datasets=[str(d) for d in header["datasets"]],
            configs=list(header["configs"]),
            performance=arrays["performance"],
            metafeatures=_read_metafeatures(folder),
            runtimes=arrays.get("runtimes"),
            splits={k: [str(d) for d in v] for k, v in header.get("splits", {}).items()},
            space=str(header.get("space", "")),
            pool=_pool_from(header.get("pool"), arrays),
            budgets=arrays.get("budgets"),
            curves=arrays.get("curves"),
            info=dict(header.get("info", {})),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise DatasetError(f"meta-data folder {folder} is inconsistent: {error}") from error


class MetaDataNotLocal(DatasetError):
    """A registered meta-data source not converted on this machine yet: loading it would
    download its package (see :func:`local_metadata_resolver`)."""


def resolve_metadata(
    reference: str | Path | MetaData,
    params: Mapping[str, Any] | None,
    plugins: Plugins,
    *,
    local_only: bool = False,
) -> MetaData:
    """The meta-data a component's parameter names: a source registered in ``plugins``
    (``autosklearn``, ``oboe``... see ``automl data list``) built with ``params``, a path to a
    meta-data folder, or a :class:`MetaData` given in code (returned as is). ``local_only``:
    a source that says it is not converted on this machine yet (a
    :class:`~automl_core.contracts.LocalMetaDataLoader`) raises :class:`MetaDataNotLocal`
    instead of downloading.

    A run binds this to its own registry (``TaskDescription.resolve_metadata``); there is no
    second, process-wide registry.
    """
    if isinstance(reference, MetaData):
        return reference
    text = str(reference)
    names = plugins.registry.names("metadata")
    if text in names:
        loader = plugins.create("metadata", text, dict(params or {}))
        if local_only and isinstance(loader, LocalMetaDataLoader) and not loader.is_converted():
            raise MetaDataNotLocal(f"meta-data {text!r} is not converted on this machine yet")
        return loader.load()
    folder = Path(text).expanduser()
    if is_metadata_folder(folder):
        if params:
            raise DatasetError(f"meta-data folder {folder} takes no parameters, got {params}")
        return load_metadata(folder)
    raise DatasetError(
        f"no meta-data {text!r}: neither a registered source ({', '.join(sorted(names))}) "
        "nor a meta-data folder (docs/data.md describes the format)"
    )


def local_metadata_resolver(plugins: Plugins) -> MetaDataResolver:
    """:func:`resolve_metadata` that never downloads, for ``automl validate``: a registered
    source not converted here yet raises :class:`MetaDataNotLocal`, and the check that needed
    it is left to the run."""
    return functools.partial(resolve_metadata, plugins=plugins, local_only=True)


def metadata_resolver(plugins: Plugins) -> MetaDataResolver:
    """:func:`resolve_metadata` bound to ``plugins``: what a run hands its components."""
    return functools.partial(resolve_metadata, plugins=plugins)


def metadata_for(
    reference: str | Path | MetaData,
    params: Mapping[str, Any] | None,
    task: TaskDescription | None,
    who: str,
) -> MetaData:
    """The meta-data a component's ``reference`` names, as the run resolves it for every
    component (its own registry, :meth:`TaskDescription.metadata`); a component used
    outside a run (no ``task``) must be given a :class:`MetaData` object."""
    if isinstance(reference, MetaData):
        return reference
    if task is None:
        raise ValueError(
            f"{who}: metadata {str(reference)!r} is resolved by a run; outside one, pass a "
            "MetaData object"
        )
    return task.metadata(reference, dict(params) if params else None)


def check_metadata_reference(reference: Any, params: Any) -> None:
    """The check of a component's ``metadata`` / ``metadata_params`` parameters (warm-starters,
    meta-trained surrogates): ``reference`` is None, a source name, a folder or a MetaData,
    and ``params`` a mapping or None. Raises ValueError naming the parameter."""
    if reference is not None and not isinstance(reference, (str, Path, MetaData)):
        raise ValueError(
            f"metadata: got {reference!r}, expected a meta-data source name, a folder or a MetaData"
        )
    if params is not None and not isinstance(params, Mapping):
        raise ValueError(f"metadata_params: got {params!r}, expected a mapping")


def check_dataset_ids(name: str, value: Any) -> list[str]:
    """A component's list-of-dataset-ids parameter (``exclude``), as strings; numbers are
    allowed (OpenML ids). Raises ValueError naming the parameter."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ValueError(f"{name}: got {value!r}, expected a list of dataset ids")
    ids = list(value)
    if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in ids):
        raise ValueError(f"{name}: got {value!r}, expected a list of dataset ids")
    return [str(v) for v in ids]


def left_out_datasets(
    datasets: Iterable[str], task: TaskDescription, exclude: Iterable[str], exclude_self: bool
) -> list[str]:
    """The ids among ``datasets`` (a meta-data's) that a warm start or a meta-trained model
    for ``task`` must not learn from: those named in ``exclude`` and, with ``exclude_self``,
    the task's own dataset under any of its names (``task.dataset`` or one of
    ``task.aliases``), so that a benchmark on datasets that are also in the meta-data is a
    fair leave-one-out. All compared lower-case."""
    named = {str(d).lower() for d in exclude}
    own = {task.dataset.lower(), *(a.lower() for a in task.aliases)} if exclude_self else set()
    return [d for d in datasets if d.lower() in named or d.lower() in own]


def task_metafeatures(task: TaskDescription, table: pd.DataFrame) -> tuple[dict[str, float], str]:
    """The meta-features describing ``task``, and where they came from: what a warm-starter
    that compares datasets (k nearest datasets, a ranker of sources) describes the new one by.

    The task's own (``task.metafeatures``, from the recipe's ``metafeatures:`` provider)
    when it has any. A table-lookup task has none (no data, no provider), but its dataset is
    usually a row of the meta-data's own table: that row is used then. It describes the
    dataset, not how configurations did on it, so using it leaks nothing even when the
    dataset itself is left out of the neighbours (leave-one-out).
    """
    if task.metafeatures:
        return dict(task.metafeatures), "task"
    index = {str(d).lower(): d for d in table.index}
    for name in (task.dataset, *task.aliases):
        if name.lower() in index:
            row = table.loc[index[name.lower()]]
            return {str(k): metafeature_value(v) for k, v in row.items()}, f"meta-data row {name!r}"
    raise ValueError(
        f"the task on {task.dataset!r} has no meta-features (add a `metafeatures:` provider to "
        "the recipe) and its dataset is not a row of the meta-data's meta-feature table"
    )


def metafeature_value(value: Any) -> float:
    """A meta-feature's value as a float: NaN when it is not a number (a missing cell, a
    text), so that tables from any source compare alike."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


#: id(metadata) -> (a weak reference to it, its fingerprint): hashing PMF's 168 MB of losses
#: takes half a second, once per MetaData object is enough.
_FINGERPRINTS: dict[int, tuple[weakref.ref[MetaData], str]] = {}


def metadata_fingerprint(metadata: MetaData) -> str:
    """A hash of what a model learned from ``metadata`` depends on: the dataset ids, the
    splits, the configurations, the bytes of the performance matrix and of the pool's table.
    Components that cache what they learn (a portfolio, a meta-trained surrogate) key the
    cache with it: two equal meta-data give the same key, a source converted again from a new
    release a new one. Computed once per :class:`MetaData` object."""
    known = _FINGERPRINTS.get(id(metadata))
    if known is not None and known[0]() is metadata:
        return known[1]
    digest = hashlib.sha256()
    described = [list(metadata.datasets), metadata.splits, metadata.configs]
    digest.update(json.dumps(described, sort_keys=True, default=str).encode())
    tables = [metadata.performance] + ([metadata.pool.encodings] if metadata.pool else [])
    for table in tables:
        values = np.ascontiguousarray(table, dtype=np.float64)
        digest.update(str(values.shape).encode())
        digest.update(values.tobytes())
    value = digest.hexdigest()
    _FINGERPRINTS[id(metadata)] = (weakref.ref(metadata), value)
    return value


def is_metadata_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a complete meta-data folder of the current format."""
    path = Path(folder) / METADATA_FILE
    if not path.is_file() or not (Path(folder) / ARRAYS_FILE).is_file():
        return False
    try:
        return json.loads(path.read_text()).get("format") == FORMAT_VERSION
    except (OSError, ValueError):
        return False


# ---------------------------------------------------------------------------------------------
# The folder format
# ---------------------------------------------------------------------------------------------


def _write_folder(metadata: MetaData, folder: Path) -> None:
    pool = metadata.pool
    header: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "space": metadata.space,
        "datasets": list(metadata.datasets),
        "configs": metadata.configs,
        "splits": metadata.splits,
        "info": metadata.info,
        "pool": None,
    }
    arrays: dict[str, Any] = {"performance": metadata.performance}
    if metadata.runtimes is not None:
        arrays["runtimes"] = metadata.runtimes
    if metadata.budgets is not None and metadata.curves is not None:
        arrays["budgets"] = metadata.budgets
        arrays["curves"] = metadata.curves
    if pool is not None:
        header["pool"] = {
            "name": pool.name,
            "stage_names": list(pool.stage_names),
            "descriptions": pool.descriptions,
        }
        arrays["pool_encodings"] = pool.encodings
        if pool.stage_choices is not None:
            arrays["pool_stage_choices"] = pool.stage_choices
    (folder / METADATA_FILE).write_text(json.dumps(header, default=_json_default))
    np.savez_compressed(folder / ARRAYS_FILE, **arrays)
    if metadata.metafeatures is not None:
        metadata.metafeatures.to_csv(folder / METAFEATURES_FILE, index_label="dataset")


def _json_default(value: Any) -> Any:
    """numpy scalars and arrays, which sources often leave in configurations and info."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} in metadata.json: {value!r}")


def _read_header(folder: Path) -> dict[str, Any]:
    path = folder / METADATA_FILE
    if not path.is_file():
        raise DatasetError(f"{folder} is not a meta-data folder: {METADATA_FILE} is missing")
    try:
        header = json.loads(path.read_text())
    except ValueError as error:
        raise DatasetError(f"{path} is not valid JSON: {error}") from error
    missing = [k for k in ("datasets", "configs") if k not in header]
    if missing:
        raise DatasetError(f"{path} lacks the field(s) {', '.join(missing)}")
    return header


def _read_arrays(folder: Path) -> dict[str, np.ndarray]:
    path = folder / ARRAYS_FILE
    if not path.is_file():
        raise DatasetError(f"meta-data folder {folder}: {ARRAYS_FILE} is missing")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (OSError, ValueError) as error:
        raise DatasetError(f"{path} cannot be read: {error}") from error
    if "performance" not in arrays:
        raise DatasetError(f"{path} holds no 'performance' array")
    return arrays


def _read_metafeatures(folder: Path) -> pd.DataFrame | None:
    path = folder / METAFEATURES_FILE
    if not path.is_file():
        return None
    frame = pd.read_csv(path, index_col=0)
    frame.index = frame.index.astype(str)
    return frame


def _pool_from(header: dict[str, Any] | None, arrays: dict[str, np.ndarray]) -> PoolSpace | None:
    if header is None:
        return None
    return PoolSpace(
        name=header["name"],
        encodings=arrays["pool_encodings"],
        stage_names=tuple(header.get("stage_names", ())),
        stage_choices=arrays.get("pool_stage_choices"),
        descriptions=header.get("descriptions"),
    )
