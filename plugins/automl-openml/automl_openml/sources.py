"""The ``openml:<dataset id>`` and ``openml-task:<task id>`` dataset sources.

Both read the files openml-python caches (see :mod:`automl_openml.cache` for where) and let
the ``openml`` package parse them: it decodes the ARFF or parquet file, turns nominal
attributes into pandas categoricals and drops the ignored and row-id attributes.

Loading a cached dataset makes no network call. This is why the sources do not go through
``openml.datasets.get_dataset`` for cached data: with ``download_data=True`` it asks the
MinIO server for the parquet file whenever the description names one (every current OpenML
dataset) and the file is not cached, it asks the API server again for a description it
cannot parse, and when anything inside it fails it deletes the whole cached dataset folder
-- an offline machine would lose the files it was given. Instead the cached description is
checked here, and openml's ``_create_dataset_from_description`` builds the dataset from the
cached files, whose ``get_data`` only reads them.

Only a dataset or task that is not cached is downloaded, through openml's public
``get_dataset`` / ``get_task``, into a temporary folder whose files are then moved into the
cache, so a failed download never touches what was already there. When that fails too (no
network, unknown id), the error says which folder was searched and how to fill it offline.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xmltodict
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from automl_core.errors import DatasetError
from automl_engine.dataset import TASKS, Dataset, check_dataset
from automl_openml.cache import (
    ARFF_FILE,
    DESCRIPTION_FILE,
    FEATURES_FILE,
    QUALITIES_FILE,
    SPLITS_FILE,
    TASK_FILE,
    dataset_folder,
    openml_configured,
    openml_root,
    parquet_file_name,
    task_folder,
)

#: The description fields openml needs to build a dataset.
_REQUIRED_FIELDS = ("oml:id", "oml:name", "oml:version", "oml:format", "oml:url")
#: Qualities copied into ``Dataset.info`` (when the cache has qualities.xml).
INFO_QUALITIES = (
    "NumberOfInstances",
    "NumberOfFeatures",
    "NumberOfClasses",
    "NumberOfMissingValues",
    "NumberOfSymbolicFeatures",
    "NumberOfNumericFeatures",
)
#: OpenML task type id -> the core's task. Other types (clustering, learning curves,
#: survival...) have no single train/test split of a supervised problem.
TASK_TYPES = {1: "classification", 2: "regression"}


@dataclass
class CachedDataset:
    """The cached files of one dataset, checked before openml reads them."""

    dataset_id: int
    folder: Path
    description: dict[str, Any]
    data_file: Path
    qualities_file: Path | None

    @property
    def is_parquet(self) -> bool:
        return self.data_file.suffix == ".pq"


# --- openml:<dataset id> ---------------------------------------------------------------------


def load_openml(reference: str, *, target: str | None = None, task: str | None = None) -> Dataset:
    """An OpenML dataset by id (``openml:61``), read from the cache by the ``openml`` package.

    ``target`` defaults to the dataset's default target attribute; any other column may be
    named. The task follows the target's OpenML type (nominal or string: classification;
    numeric: regression, as OpenML itself defines tasks) unless ``task`` says otherwise;
    a numeric target may be treated as class labels, a nominal one cannot be regressed on.
    Nominal features arrive as pandas categoricals, so the core treats them as categorical;
    ignored and row-id attributes are left out, as OpenML intends.
    """
    dataset_id = parse_id(reference, "openml", "dataset")
    if task is not None and task not in TASKS:
        raise DatasetError(f"dataset 'openml:{reference}': task {task!r} is not one of {TASKS}")
    with openml_configured() as openml:
        cached = cached_dataset(openml, dataset_id)
        frame, nominal, openml_dataset = read_with_openml(openml, cached)
    return build_dataset(reference, cached, frame, nominal, openml_dataset, target, task)


def parse_id(reference: str, source: str, kind: str) -> int:
    """The positive integer id a reference names; OpenML names are not unique, ids are."""
    text = reference.strip()
    if not text.isdigit() or int(text) <= 0:
        raise DatasetError(
            f"'{source}:{reference}': an OpenML {kind} is named by its numeric id, e.g. "
            f"'{source}:61' (the number in its openml.org address), not {reference!r}"
        )
    return int(text)


def cached_dataset(openml: Any, dataset_id: int) -> CachedDataset:
    """The checked cache files of ``dataset_id``, downloading them first when not cached."""
    folder = dataset_folder(openml, dataset_id)
    cached = find_cached_dataset(folder, dataset_id)
    if cached is None:
        download_dataset(openml, dataset_id, folder)
        cached = find_cached_dataset(folder, dataset_id)
        if cached is None:  # the download brought no data file
            raise not_cached_error(dataset_id, folder, "the download left no data file")
    return cached


def find_cached_dataset(folder: Path, dataset_id: int) -> CachedDataset | None:
    """The cached files of a dataset, or None when its description or data file is missing.

    A cached parquet file is preferred over the ARFF file, as openml does. A description
    that exists but cannot be used raises: downloading would overwrite nothing, and the
    person should know the file is broken.
    """
    description_file = folder / DESCRIPTION_FILE
    parquet = folder / parquet_file_name(dataset_id)
    arff = folder / ARFF_FILE
    data_file = parquet if parquet.is_file() else arff
    if not description_file.is_file() or not data_file.is_file():
        return None
    description = read_description(description_file, dataset_id)
    qualities = folder / QUALITIES_FILE
    return CachedDataset(
        dataset_id, folder, description, data_file, qualities if qualities.is_file() else None
    )


def read_description(path: Path, dataset_id: int) -> dict[str, Any]:
    """Parse a cached ``description.xml`` as openml does, and check what openml relies on."""
    try:
        parsed = xmltodict.parse(path.read_text(encoding="utf8"))
        description = parsed["oml:data_set_description"]
    except Exception as error:  # xml.parsers.expat.ExpatError, KeyError, UnicodeDecodeError
        raise DatasetError(
            f"cannot read the OpenML dataset description {path}: {type(error).__name__}: "
            f"{error}. Expected an <oml:data_set_description> document; delete the file and "
            "import the dataset again (`automl data import-openml DIR`)"
        ) from error
    missing = [f for f in _REQUIRED_FIELDS if not description.get(f)]
    if missing:
        raise DatasetError(
            f"the OpenML dataset description {path} lacks {', '.join(missing)}; "
            "import the dataset again (`automl data import-openml DIR`)"
        )
    if str(description["oml:id"]).strip() != str(dataset_id):
        raise DatasetError(
            f"{path} describes OpenML dataset {description['oml:id']}, not {dataset_id}: the "
            "file is in the wrong folder"
        )
    return dict(description)


def download_dataset(openml: Any, dataset_id: int, folder: Path) -> None:
    """Fetch a dataset with openml's ``get_dataset`` into a temporary root, then move the
    files it wrote into ``folder`` (only those not there already)."""
    root = openml_root()
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".download-dataset-{dataset_id}-", dir=root) as tmp:
        try:
            with openml_configured(Path(tmp)) as fresh:
                fresh.datasets.get_dataset(
                    dataset_id,
                    download_data=True,
                    download_qualities=True,
                    download_features_meta_data=True,
                )
                fetched = dataset_folder(fresh, dataset_id)
        except Exception as error:  # requests' ConnectionError, OpenMLServerException...
            raise not_cached_error(dataset_id, folder, _reason(error)) from error
        move_new_files(fetched, folder)


def move_new_files(source: Path, destination: Path) -> None:
    """Move the files of ``source`` into ``destination``, keeping files already there."""
    destination.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if path.is_file() and not (destination / path.name).exists():
            os.replace(path, destination / path.name)


def not_cached_error(dataset_id: int, folder: Path, reason: str) -> DatasetError:
    """Say which dataset, where it was looked for, why it was not fetched, and how to add it."""
    return DatasetError(
        f"OpenML dataset {dataset_id} is not in the local cache and could not be downloaded "
        f"({reason}). Searched {folder}/ for {DESCRIPTION_FILE} and {ARFF_FILE} (or "
        f"{parquet_file_name(dataset_id)}). To provide it offline, either run "
        f"`automl data import-openml DIR` with a folder of OpenML API responses for it "
        f"(api-v1-jd-{dataset_id}.json.gz description, api-v1-jdf-{dataset_id}.json.gz "
        f"features, api-v1-jdq-{dataset_id}.json.gz qualities, data-v1-dl-<file id>.arff.gz "
        "data: the layout of scikit-learn's sklearn/datasets/tests/data/openml/id_<n>/), "
        f"or copy an openml-python cache folder datasets/{dataset_id}/ ({DESCRIPTION_FILE}, "
        f"{ARFF_FILE} or {parquet_file_name(dataset_id)}; {FEATURES_FILE} and "
        f"{QUALITIES_FILE} optional) to {folder}/. The cache root moves with $AUTOML_CACHE_DIR"
    )


def _reason(error: BaseException) -> str:
    text = " ".join(str(error).split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def read_with_openml(openml: Any, cached: CachedDataset) -> tuple[pd.DataFrame, list[str], Any]:
    """The data frame (all attributes but ignored and row-id ones), the names of its nominal
    columns as openml flags them, and the ``OpenMLDataset``, all read from the cache."""
    from openml.datasets.functions import _create_dataset_from_description

    data_format = str(cached.description["oml:format"]).lower()
    if data_format == "sparse_arff":
        raise DatasetError(
            f"OpenML dataset {cached.dataset_id} ({cached.description['oml:name']}) is stored "
            "as sparse ARFF; this source returns dense data frames and does not load sparse "
            "datasets"
        )
    try:
        openml_dataset = _create_dataset_from_description(
            cached.description,
            features_file=None,  # not needed for the data; openml refuses incomplete ones
            qualities_file=cached.qualities_file,
            arff_file=None if cached.is_parquet else cached.data_file,
            parquet_file=cached.data_file if cached.is_parquet else None,
        )
        frame, _, nominal_flags, names = openml_dataset.get_data(
            target=None, dataset_format="dataframe"
        )
    except Exception as error:  # arff.BadLayout, pyarrow errors, ValueError...
        raise DatasetError(
            f"openml {openml.__version__} could not read OpenML dataset {cached.dataset_id} "
            f"from {cached.data_file}: {_reason(error)}"
        ) from error
    if not isinstance(frame, pd.DataFrame):
        raise DatasetError(
            f"openml returned {type(frame).__name__} for dataset {cached.dataset_id}, not a "
            "data frame; only dense datasets are supported"
        )
    nominal = [str(n) for n, flag in zip(names, nominal_flags, strict=True) if flag]
    frame.columns = [str(c) for c in frame.columns]
    return frame, nominal, openml_dataset


def build_dataset(
    reference: str,
    cached: CachedDataset,
    frame: pd.DataFrame,
    nominal: list[str],
    openml_dataset: Any,
    target: str | None,
    task: str | None,
) -> Dataset:
    """Split off the target, settle the task and describe where the data came from."""
    name = f"openml:{reference}"
    where = f"dataset {name!r} ({openml_dataset.name})"
    target = choose_target(where, openml_dataset, list(frame.columns), target)
    values = frame[target]
    task = task or openml_task(values)
    if task == "regression":
        if not is_numeric_dtype(values.dtype) or is_bool_dtype(values.dtype):
            raise DatasetError(
                f"{where}: target {target!r} is not numeric (dtype {values.dtype}); "
                "regression needs a numeric target. Use task 'classification'"
            )
        y = values.to_numpy(dtype=float)
    else:
        y = class_labels(values)
    X = frame.drop(columns=[target])
    qualities = _info_qualities(openml_dataset) if cached.qualities_file else {}
    _warn_if_truncated(where, len(frame), qualities, cached.data_file)
    info = {
        "source": "openml",
        "reference": reference,
        "openml_id": cached.dataset_id,
        "name": str(openml_dataset.name),
        "version": int(openml_dataset.version),
        "url": f"https://www.openml.org/d/{cached.dataset_id}",
        "licence": openml_dataset.licence,
        "target": target,
        "default_target": openml_dataset.default_target_attribute,
        "columns": [str(c) for c in X.columns],
        "nominal_columns": [c for c in nominal if c != target],
        "ignored_columns": _as_list(openml_dataset.ignore_attribute),
        "row_id_column": openml_dataset.row_id_attribute,
        "data_file": str(cached.data_file),
        "openml_version": _openml_version(),
        "qualities": qualities,
    }
    return check_dataset(Dataset(name=name, X=X, y=np.asarray(y), task=task, info=info))


def class_labels(values: pd.Series) -> np.ndarray:
    """The labels themselves (a categorical column would otherwise keep its dtype object)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values.to_numpy(dtype=object)
    return values.to_numpy()


def choose_target(where: str, openml_dataset: Any, columns: list[str], target: str | None) -> str:
    """The asked-for target, else the dataset's single default target attribute."""
    if target is None:
        default = openml_dataset.default_target_attribute
        targets = [t.strip() for t in str(default or "").split(",") if t.strip()]
        if not targets:
            raise DatasetError(
                f"{where} has no default target attribute on OpenML; name one with "
                f"target=<column>. Columns: {', '.join(columns)}"
            )
        if len(targets) > 1:
            raise DatasetError(
                f"{where} has {len(targets)} default target attributes ({', '.join(targets)}); "
                "a dataset here has one target: name it with target=<column>"
            )
        target = targets[0]
    if target not in columns:
        ignored = _as_list(openml_dataset.ignore_attribute) + _as_list(
            openml_dataset.row_id_attribute
        )
        why = " (it is an ignored or row-id attribute)" if target in ignored else ""
        raise DatasetError(f"{where} has no column {target!r}{why}. Columns: {', '.join(columns)}")
    return target


def openml_task(values: pd.Series) -> str:
    """OpenML's own rule: a numeric target is regressed on, a nominal or string one is
    classified. (The core's :func:`~automl_engine.dataset.infer_task` would call an integer
    target such as cpu's performance, 209 distinct counts, a classification.)"""
    if is_numeric_dtype(values.dtype) and not is_bool_dtype(values.dtype):
        return "regression"
    return "classification"


def _info_qualities(openml_dataset: Any) -> dict[str, float | None]:
    qualities = openml_dataset.qualities or {}
    out: dict[str, float | None] = {}
    for key in INFO_QUALITIES:
        if key in qualities:
            value = float(qualities[key])
            out[key] = None if np.isnan(value) else value
    return out


def _warn_if_truncated(
    where: str, rows: int, qualities: dict[str, float | None], data_file: Path
) -> None:
    expected = qualities.get("NumberOfInstances")
    if expected is not None and int(expected) != rows:
        warnings.warn(
            f"{where}: {data_file} has {rows} rows, but OpenML's qualities say "
            f"NumberOfInstances = {int(expected)}; the data file may be truncated",
            UserWarning,
            stacklevel=4,
        )


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _openml_version() -> str:
    import openml

    return str(openml.__version__)


# --- openml-task:<task id> -------------------------------------------------------------------


def load_openml_task(
    reference: str, *, target: str | None = None, task: str | None = None
) -> Dataset:
    """An OpenML task (``openml-task:59``): its dataset and target, and its first split.

    The task fixes the target and the task type, so ``target`` and ``task`` may only repeat
    them. The test rows of the task's first split (repeat 0, fold 0, sample 0) become the
    dataset's ``test_rows``, so a run tests on exactly the task's split;
    ``info["openml_split"]`` says which split it is.
    """
    task_id = parse_id(reference, "openml-task", "task")
    name = f"openml-task:{reference}"
    with openml_configured() as openml:
        folder = task_folder(openml, task_id)
        if not (folder / TASK_FILE).is_file() or not (folder / SPLITS_FILE).is_file():
            download_task(openml, task_id, folder)
        openml_task_ = read_task(openml, folder, task_id)
        kind = _task_kind(name, openml_task_, folder)
        _check_fixed(name, "target", target, openml_task_.target_name)
        _check_fixed(name, "task", task, kind)
        data = load_openml(str(openml_task_.dataset_id), target=openml_task_.target_name, task=kind)
        train, test = first_split(openml_task_, folder, data.n_rows)
    procedure = openml_task_.estimation_procedure
    info = {
        **data.info,
        "source": "openml-task",
        "reference": reference,
        "openml_task_id": task_id,
        "dataset": data.name,
        "openml_split": {
            "task_id": task_id,
            "repeat": 0,
            "fold": 0,
            "sample": 0,
            "estimation_procedure": procedure.get("type"),
            "parameters": dict(procedure.get("parameters") or {}),
            "train_size": len(train),
            "test_size": len(test),
        },
    }
    dataset = Dataset(
        name=name, X=data.X, y=data.y, task=kind, info=info, test_rows=np.asarray(test, dtype=int)
    )
    return check_dataset(dataset)


def download_task(openml: Any, task_id: int, folder: Path) -> None:
    """Fetch a task, its splits and its dataset's description with openml's ``get_task``
    into a temporary root, then move the new files into the cache."""
    root = openml_root()
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".download-task-{task_id}-", dir=root) as tmp:
        try:
            with openml_configured(Path(tmp)) as fresh:
                fetched_task = fresh.tasks.get_task(task_id, download_splits=True)
                fetched_folder = task_folder(fresh, task_id)
                dataset_id = int(fetched_task.dataset_id)
                fetched_dataset = dataset_folder(fresh, dataset_id)
        except Exception as error:
            raise DatasetError(
                f"OpenML task {task_id} is not in the local cache and could not be downloaded "
                f"({_reason(error)}). Searched {folder}/ for {TASK_FILE} and {SPLITS_FILE}. "
                f"To provide it offline, copy an openml-python cache folder tasks/{task_id}/ "
                f"({TASK_FILE}: the task description, {SPLITS_FILE}: its splits) to {folder}/, "
                "and its dataset as `openml:<dataset id>` needs it (see `automl data "
                "import-openml`). The cache root moves with $AUTOML_CACHE_DIR"
            ) from error
        move_new_files(fetched_folder, folder)
        move_new_files(fetched_dataset, dataset_folder(openml, dataset_id))


def read_task(openml: Any, folder: Path, task_id: int) -> Any:
    """Parse the cached ``task.xml`` with openml's own task reader."""
    from openml.tasks.functions import _create_task_from_xml

    path = folder / TASK_FILE
    try:
        openml_task_ = _create_task_from_xml(path.read_text(encoding="utf8"))
    except Exception as error:  # ExpatError, KeyError for a missing element, ValueError...
        raise DatasetError(
            f"cannot read the OpenML task description {path}: {_reason(error)}. Expected an "
            "<oml:task> document with a source_data input (data_set_id, target_feature) and "
            "an estimation_procedure input"
        ) from error
    if openml_task_.task_id != task_id:
        raise DatasetError(
            f"{path} describes OpenML task {openml_task_.task_id}, not {task_id}: the file is "
            "in the wrong folder"
        )
    return openml_task_


def _task_kind(name: str, openml_task_: Any, folder: Path) -> str:
    type_id = openml_task_.task_type_id.value
    if type_id not in TASK_TYPES:
        raise DatasetError(
            f"{name}: {folder / TASK_FILE} is a {openml_task_.task_type!r} task (type "
            f"{type_id}); only supervised classification (1) and regression (2) tasks are "
            "datasets with a target"
        )
    return TASK_TYPES[type_id]


def _check_fixed(name: str, what: str, given: str | None, fixed: str) -> None:
    if given is not None and given != fixed:
        raise DatasetError(
            f"dataset {name!r}: the task fixes the {what} ({fixed!r}); {what}={given!r} "
            "cannot be chosen. Use the openml:<dataset id> source to choose it"
        )


def first_split(openml_task_: Any, folder: Path, n_rows: int) -> tuple[list[int], list[int]]:
    """Train and test row positions of repeat 0, fold 0, sample 0, read by openml from the
    cached ``datasplits.arff``; checked against the dataset's row count."""
    path = folder / SPLITS_FILE
    try:
        train, test = openml_task_.get_train_test_split_indices(fold=0, repeat=0, sample=0)
    except Exception as error:  # arff.BadLayout, ValueError("Repeat 0 not known")...
        raise DatasetError(
            f"cannot read split repeat 0, fold 0 of OpenML task {openml_task_.task_id} from "
            f"{path}: {_reason(error)}. Expected an ARFF file with the attributes type "
            "{TRAIN,TEST}, rowid, repeat and fold"
        ) from error
    train_rows = sorted(int(r) for r in np.asarray(train).ravel())
    test_rows = sorted(int(r) for r in np.asarray(test).ravel())
    problem = _split_problem(train_rows, test_rows, n_rows)
    if problem:
        raise DatasetError(
            f"{path}: split repeat 0, fold 0 of OpenML task {openml_task_.task_id} does not "
            f"fit its dataset ({n_rows} rows): {problem}"
        )
    return train_rows, test_rows


def _split_problem(train: list[int], test: list[int], n_rows: int) -> str:
    if not train or not test:
        return f"{len(train)} training and {len(test)} test rows (both must be non-empty)"
    outside = [r for r in (train[0], train[-1], test[0], test[-1]) if not 0 <= r < n_rows]
    if outside:
        return f"row ids outside 0..{n_rows - 1}, e.g. {outside[0]}"
    if len(set(train)) != len(train) or len(set(test)) != len(test):
        return "a row id appears twice in one part"
    shared = sorted(set(train) & set(test))
    if shared:
        return f"{len(shared)} rows are both training and test rows (first: {shared[:5]})"
    return ""
