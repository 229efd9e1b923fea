"""Oboe's meta-data: 219 scikit-learn models run on 418 OpenML classification datasets.

Oboe (Yang et al., KDD 2019) ships the matrices it learns from inside its wheel, in
``oboe/defaults/Oboe/``:

* ``error_matrix.csv`` -- datasets x models, fully dense. The first column holds zero-padded
  OpenML dataset ids (``00003``); every other column header is a Python dict literal such as
  ``{'algorithm': 'AB', 'hyperparameters': {'n_estimators': 50, 'learning_rate': 1}}``. The
  values are cross-validated *balanced error rates* (Oboe's default metric, ``oboe/util.py``).
* ``runtime_matrix.csv`` -- the same layout, training times in seconds.
* ``dataset_sizes.csv`` -- one row per dataset id: the number of rows and of columns Oboe
  recorded (its runtime predictor reads them as ``[n_rows, n_columns]``), kept as the
  meta-features ``NumberOfInstances`` and ``NumberOfFeatures`` (OpenML's names, which the
  hand-crafted provider gives a new dataset). The column count is Oboe's own, not always
  OpenML's feature count (kr-vs-kp, id 3, has 74 here).
* ``classification.json`` -- the space the models were drawn from: algorithm abbreviations
  and the values of each hyper-parameter. The 219 models are exactly its full grid.

Some OpenML datasets are uploads of the same data under several ids; 17 datasets, in 7
groups (e.g. 40474-40478), have identical error rows. They are kept as the file has them:
whoever splits datasets into train and test should keep such groups together.

The headers are read with :func:`ast.literal_eval`, never ``eval``: they are data, not code.
The models form a pool (:class:`PoolSpace` named ``"oboe"``); see :func:`encode_pipelines`
for how they are turned into vectors.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData
from automl_core.errors import DatasetError
from automl_core.space import INACTIVE
from automl_metadata.archive import read_csv, read_json_member
from automl_metadata.store import MetaDataSource, Package
from automl_spaces.pool_space import PoolSpace

FOLDER = "oboe/defaults/Oboe"
ERROR_MATRIX = f"{FOLDER}/error_matrix.csv"
RUNTIME_MATRIX = f"{FOLDER}/runtime_matrix.csv"
DATASET_SIZES = f"{FOLDER}/dataset_sizes.csv"
SPACE_FILE = f"{FOLDER}/classification.json"

#: What Oboe's abbreviations stand for: ``oboe/util.py`` imports these scikit-learn classes
#: under exactly these names (classification.json itself gives only the abbreviations).
ALGORITHM_CLASSES: dict[str, str] = {
    "KNN": "sklearn.neighbors.KNeighborsClassifier",
    "DT": "sklearn.tree.DecisionTreeClassifier",
    "RF": "sklearn.ensemble.RandomForestClassifier",
    "GBT": "sklearn.ensemble.GradientBoostingClassifier",
    "AB": "sklearn.ensemble.AdaBoostClassifier",
    "lSVM": "sklearn.svm.LinearSVC",
    "kSVM": "sklearn.svm.SVC",
    "Logit": "sklearn.linear_model.LogisticRegression",
    "Perceptron": "sklearn.linear_model.Perceptron",
    "GNB": "sklearn.naive_bayes.GaussianNB",
    "MLP": "sklearn.neural_network.MLPClassifier",
    "ExtraTrees": "sklearn.ensemble.ExtraTreesClassifier",
}

#: Hyper-parameters that scikit-learn reads as a count when given an int and as a fraction of
#: the samples when given a float: 2 and 1e-05 are not two points on one scale, so each kind
#: gets its own encoding column (``<name>`` and ``<name>_fraction``).
COUNT_OR_FRACTION = frozenset({"min_samples_split", "min_samples_leaf"})

#: A positive numeric hyper-parameter whose largest value is at least this many times its
#: smallest is encoded on a log10 scale (C, learning rates, split sizes), others linearly.
LOG_SCALE_RATIO = 10.0

#: The sizes' names: OpenML's (and the hand-crafted provider's), so that a new dataset
#: described by ``metafeatures: handcrafted`` is compared with Oboe's on the same columns.
SIZE_COLUMNS = ("NumberOfInstances", "NumberOfFeatures")

#: Oboe's wheel: also where Tensor-OBOE's dataset ids come from (:mod:`.deeppipe`).
OBOE_PACKAGE = Package("oboe", "0.2.0", size_mb=53)


class Oboe(MetaDataSource):
    """Oboe's error and runtime matrices (418 datasets x 219 models) as a pool meta-dataset.

    ``performance`` is the balanced error rate, ``runtimes`` the training time in seconds,
    ``metafeatures`` the two sizes Oboe recorded (as ``NumberOfInstances``,
    ``NumberOfFeatures``). Configurations
    are ``{"candidate": j}`` in the pool ``"oboe"``, whose descriptions are the parsed column
    headers: ``{"algorithm": "AB", "hyperparameters": {...}}``.
    """

    package = OBOE_PACKAGE
    #: 2: the sizes named as OpenML names them
    conversion = 2
    licence = "BSD-3-Clause"
    provenance = (
        "Yang, Akimoto, Kim & Udell (2019), OBOE: Collaborative filtering for AutoML model "
        "selection, KDD; the matrices shipped in the oboe 0.2.0 wheel (oboe/defaults/Oboe/)"
    )

    def build(self) -> MetaData:
        archive = self.package.fetch()
        algorithms = read_algorithms(archive)
        errors = read_matrix(archive, ERROR_MATRIX)
        where = f"{archive.name}:{ERROR_MATRIX}"
        pipelines = [
            parse_header(header, column, where) for column, header in enumerate(errors.columns, 1)
        ]
        check_known_algorithms(pipelines, algorithms, where)
        runtimes = read_matrix(archive, RUNTIME_MATRIX)
        check_same_layout(errors, runtimes, archive)
        datasets = dataset_ids(errors.index, where)
        encodings, columns = encode_pipelines(pipelines, algorithms)
        pool = PoolSpace(
            name="oboe",
            encodings=encodings,
            stage_names=("algorithm",),
            stage_choices=np.array([[algorithms.index(p["algorithm"])] for p in pipelines]),
            descriptions=pipelines,
        )
        return MetaData(
            datasets=datasets,
            configs=pool.candidates(),
            performance=errors.to_numpy(dtype=float),
            runtimes=runtimes.to_numpy(dtype=float),
            metafeatures=read_sizes(archive, datasets),
            space=pool.name,
            pool=pool,
            info=self._info(algorithms, columns),
        )

    def _info(self, algorithms: list[str], columns: list[str]) -> dict[str, Any]:
        return {
            "source": f"{self.package} wheel, {FOLDER}/",
            "metric": "balanced error rate (Oboe's default), lower is better",
            "runtime_unit": "seconds",
            "algorithms": algorithms,
            "algorithm_classes": {a: ALGORITHM_CLASSES.get(a, a) for a in algorithms},
            "encoding_columns": columns,
        }


# ---------------------------------------------------------------------------------------------
# Reading the files
# ---------------------------------------------------------------------------------------------


def read_algorithms(archive: Path) -> list[str]:
    """The algorithm abbreviations of classification.json, in its order (the stage choices
    index into this list)."""
    where = f"{archive.name}:{SPACE_FILE}"
    algorithms = read_json_member(archive, SPACE_FILE).get("algorithms")
    if not isinstance(algorithms, list) or not all(isinstance(a, str) for a in algorithms):
        raise DatasetError(f"{where} has no list of algorithm names under 'algorithms'")
    return algorithms


def read_matrix(archive: Path, member: str) -> pd.DataFrame:
    """A datasets x models matrix; the index is the first column as written (ids as str)."""
    where = f"{archive.name}:{member}"
    frame = read_csv(archive, member, index_col=0, dtype={0: str})
    frame.index = frame.index.astype(str)
    not_numeric = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if not_numeric:
        raise DatasetError(f"{where}: column {not_numeric[0]!r} holds values that are not numbers")
    return frame


def check_same_layout(errors: pd.DataFrame, runtimes: pd.DataFrame, archive: Path) -> None:
    """The runtime matrix must describe the same datasets and models in the same order."""
    if list(runtimes.index) != list(errors.index):
        raise DatasetError(
            f"{archive.name}: {RUNTIME_MATRIX} lists other datasets (or another order) than "
            f"{ERROR_MATRIX}"
        )
    if list(runtimes.columns) != list(errors.columns):
        raise DatasetError(
            f"{archive.name}: {RUNTIME_MATRIX} has other column headers than {ERROR_MATRIX}"
        )


def parse_header(header: str, column: int, where: str) -> dict[str, Any]:
    """``{'algorithm': ..., 'hyperparameters': {...}}`` from a column header, checked to hold
    only JSON-able scalars (the description is stored as JSON)."""
    try:
        value = ast.literal_eval(header)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = None
    algorithm = value.get("algorithm") if isinstance(value, dict) else None
    hyperparameters = value.get("hyperparameters") if isinstance(value, dict) else None
    if not isinstance(algorithm, str) or not isinstance(hyperparameters, dict):
        raise DatasetError(
            f"{where}: the header of column {column}, {header[:120]!r}, is not a Python dict "
            "literal {'algorithm': <name>, 'hyperparameters': {...}}"
        )
    for name, setting in hyperparameters.items():
        if not isinstance(name, str) or not (
            setting is None or isinstance(setting, (bool, int, float, str))
        ):
            raise DatasetError(
                f"{where}: column {column} sets {name!r} to {setting!r}; expected a string key "
                "and a number, string, boolean or None"
            )
    return {"algorithm": algorithm, "hyperparameters": dict(hyperparameters)}


def check_known_algorithms(
    pipelines: Sequence[dict[str, Any]], algorithms: list[str], where: str
) -> None:
    """Every model's algorithm must be one that classification.json declares."""
    unknown = sorted({p["algorithm"] for p in pipelines} - set(algorithms))
    if unknown:
        raise DatasetError(
            f"{where}: algorithm(s) {', '.join(unknown)} are not in {SPACE_FILE} "
            f"(which lists {', '.join(algorithms)})"
        )


def dataset_ids(index: pd.Index, where: str) -> list[str]:
    """OpenML ids without Oboe's zero padding (``00003`` -> ``3``), so that they match the ids
    other sources use."""
    ids = []
    for raw in index:
        text = str(raw).strip()
        if not text.isdigit():
            raise DatasetError(f"{where}: row label {raw!r} is not an OpenML dataset id")
        ids.append(str(int(text)))
    duplicated = sorted({d for d in ids if ids.count(d) > 1})
    if duplicated:
        raise DatasetError(f"{where}: dataset id(s) {', '.join(duplicated[:5])} occur twice")
    return ids


def read_sizes(archive: Path, datasets: list[str]) -> pd.DataFrame:
    """The two sizes per dataset (``SIZE_COLUMNS``), for the datasets of the matrices."""
    where = f"{archive.name}:{DATASET_SIZES}"
    frame = read_csv(archive, DATASET_SIZES, index_col=0, dtype=str)
    if frame.shape[1] != len(SIZE_COLUMNS):
        raise DatasetError(f"{where}: expected an id column and 2 size columns")
    try:
        sizes = frame.astype("int64")
    except ValueError as error:
        raise DatasetError(f"{where}: sizes must be whole numbers ({error})") from error
    sizes.columns = list(SIZE_COLUMNS)
    sizes.index = dataset_ids(sizes.index, where)
    return sizes.loc[[d for d in datasets if d in sizes.index]]


# ---------------------------------------------------------------------------------------------
# Encoding the pool
# ---------------------------------------------------------------------------------------------


def encode_pipelines(
    pipelines: Sequence[dict[str, Any]], algorithms: list[str]
) -> tuple[np.ndarray, list[str]]:
    """One row per model: a one-hot block of the algorithm, then one column per (algorithm,
    hyper-parameter), and the names of the columns.

    A hyper-parameter column is ``-1`` (:data:`INACTIVE`) for models of other algorithms and
    in [0, 1] otherwise: numbers are min-max scaled over the pool's values, after log10 when
    they are positive and span an order of magnitude (:data:`LOG_SCALE_RATIO`); other values
    (strings, None) are categories, numbered in sorted order and scaled to [0, 1]. Count-or-
    fraction hyper-parameters (:data:`COUNT_OR_FRACTION`) get a column per kind.
    """
    n = len(pipelines)
    one_hot = np.zeros((n, len(algorithms)))
    for row, pipeline in enumerate(pipelines):
        one_hot[row, algorithms.index(pipeline["algorithm"])] = 1.0
    blocks = [one_hot]
    names = [f"algorithm={a}" for a in algorithms]
    for (algorithm, name), settings in hyperparameter_columns(pipelines, algorithms).items():
        column = np.full(n, INACTIVE)
        scaled, how = scale_values(list(settings.values()))
        column[list(settings)] = scaled
        blocks.append(column[:, None])
        names.append(f"{algorithm}:{name} ({how})")
    return np.hstack(blocks), names


def hyperparameter_columns(
    pipelines: Sequence[dict[str, Any]], algorithms: list[str]
) -> dict[tuple[str, str], dict[int, Any]]:
    """``(algorithm, column name) -> {row: value}``, ordered by algorithm (as in
    classification.json), then by first appearance of the hyper-parameter (a fraction column
    right after its count column)."""
    columns: dict[tuple[str, str], dict[int, Any]] = {}
    for algorithm in algorithms:
        found: dict[tuple[str, str], dict[int, Any]] = {}
        for row, pipeline in enumerate(pipelines):
            if pipeline["algorithm"] != algorithm:
                continue
            for name, value in pipeline["hyperparameters"].items():
                found.setdefault((name, column_name(name, value)), {})[row] = value
        first_seen = list(dict.fromkeys(name for name, _ in found))
        for name, column in sorted(found, key=lambda key: (first_seen.index(key[0]), key[1])):
            columns[(algorithm, column)] = found[(name, column)]
    return columns


def column_name(name: str, value: Any) -> str:
    """The encoding column of one setting: fractions of count-or-fraction parameters apart."""
    if name in COUNT_OR_FRACTION and isinstance(value, float):
        return f"{name}_fraction"
    return name


def scale_values(values: list[Any]) -> tuple[np.ndarray, str]:
    """``values`` mapped into [0, 1], and a few words saying how."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        numbers = np.asarray(values, dtype=float)
        how = "linear"
        if (numbers > 0).all() and numbers.max() >= LOG_SCALE_RATIO * numbers.min():
            numbers, how = np.log10(numbers), "log10"
        low, high = numbers.min(), numbers.max()
        if high > low:
            return (numbers - low) / (high - low), f"{how}, min-max scaled"
        return np.zeros(len(values)), "constant, 0"
    levels = sorted({repr(v) for v in values})
    position = {level: i for i, level in enumerate(levels)}
    spread = max(len(levels) - 1, 1)
    scaled = np.array([position[repr(v)] / spread for v in values])
    return scaled, "categories " + ", ".join(f"{lv}={i / spread:g}" for i, lv in enumerate(levels))
