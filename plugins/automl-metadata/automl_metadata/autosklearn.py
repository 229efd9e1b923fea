"""auto-sklearn 0.15.0's meta-data: the table behind auto-sklearn 1.0's k-nearest-datasets
warm start (Feurer et al., NeurIPS 2015; JMLR 2022).

The sdist ships ``autosklearn/metalearning/files/`` with 92 ASlib scenario folders, one per
metric, task label and data kind (``balanced_accuracy_binary.classification_dense``,
``r2_regression_sparse``...). Each folder holds:

* ``algorithm_runs.arff`` -- per OpenML dataset (named by its lower-case OpenML name) the best
  configuration auto-sklearn found and its *loss* (``maximize: false``; e.g. 1 - balanced
  accuracy, 1 - R², the MSE itself); ``?`` where the metric was ``not_applicable``;
* ``configurations.csv`` -- those configurations, with auto-sklearn's ConfigSpace names, one
  column per hyper-parameter and an empty cell where it is inactive; the text ``None`` is a
  real value (``max_depth = None``), so the file is read without pandas' NA detection;
* ``feature_values.arff`` -- 37 meta-features per dataset (31 for regression: no class
  statistics);
* ``description.txt`` -- the ASlib scenario (metric, cut-off times, whether to maximise).

The ARFF files use STRING attributes, which ``scipy.io.arff`` does not read, so a small reader
for the subset of ARFF these files use is included here.

The configurations are members of ``automl_sklearn``'s ``autosklearn-classification`` and
``autosklearn-regression`` spaces, which keep auto-sklearn's names for exactly this use.
"""

from __future__ import annotations

import csv
import difflib
import functools
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData
from automl_core.errors import DatasetError
from automl_metadata.archive import list_members, read_csv, read_member
from automl_metadata.store import MetaDataSource, Package

#: Where the ASlib folders lie inside the sdist (without its leading ``name-version/``).
FILES = "autosklearn/metalearning/files"
DEFAULT_FOLDER = "balanced_accuracy_binary.classification_dense"

RUNS_FILE = "algorithm_runs.arff"
CONFIGS_FILE = "configurations.csv"
FEATURES_FILE = "feature_values.arff"
DESCRIPTION_FILE = "description.txt"

#: The column of ``configurations.csv`` that holds auto-sklearn's configuration id (the
#: ``algorithm`` of ``algorithm_runs.arff``).
CONFIG_ID_COLUMN = "idx"
#: The columns of ``algorithm_runs.arff`` besides the one named after the metric.
RUN_COLUMNS = ("instance_id", "repetition", "algorithm", "runstatus")
#: The scalar fields of ``description.txt`` worth keeping (the others list every feature step
#: and every algorithm id).
DESCRIPTION_FIELDS = (
    "scenario_id",
    "performance_measures",
    "performance_type",
    "maximize",
    "algorithm_cutoff_time",
    "algorithm_cutoff_memory",
    "features_cutoff_time",
    "features_cutoff_memory",
)

_CLASSIFICATION = re.compile(
    r"^(?P<metric>.+)_(?P<task>binary|multiclass)\.classification_(?P<kind>dense|sparse)$"
)
_REGRESSION = re.compile(r"^(?P<metric>.+)_(?P<task>regression)_(?P<kind>dense|sparse)$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_NUMERIC_TYPES = ("numeric", "real", "integer")
MISSING = "?"


class AutoSklearnMetaData(MetaDataSource):
    """One ASlib folder of auto-sklearn 0.15.0's meta-data (see the module docstring).

    ``folder`` selects the metric, task label and data kind; :meth:`folders` lists them. The
    ``binary`` and ``multiclass`` folders of a metric hold the same files in 0.15.0 (the label
    says which auto-sklearn task reads the folder, not which datasets it covers), as do the
    ``dense`` and ``sparse`` regression folders.
    """

    package = Package("auto-sklearn", "0.15.0", source=True, size_mb=6.5)
    licence = "BSD-3-Clause"
    provenance = (
        "auto-sklearn 0.15.0's meta-learning files: the best configuration per OpenML dataset "
        "and 37 meta-features, the k-nearest-datasets warm-start table of auto-sklearn 1.0 "
        "(Feurer et al., NeurIPS 2015; JMLR 2022)"
    )

    def __init__(self, folder: str = DEFAULT_FOLDER) -> None:
        # Whether the folder exists is checked in build(), against the archive: a constructor
        # must not download anything (sources are listed before any data is fetched).
        if not folder or any(c in folder for c in "/\\") or folder.startswith("."):
            raise DatasetError(
                f"auto-sklearn meta-data: {folder!r} is not a folder name "
                f"(expected e.g. {DEFAULT_FOLDER!r}; AutoSklearnMetaData.folders() lists them)"
            )
        self.folder = folder

    @classmethod
    def folders(cls) -> list[str]:
        """The 92 folder names in the archive (downloads the sdist on first use)."""
        assert cls.package is not None
        return list(_folders_in(cls.package.fetch()))

    def cache_name(self) -> str:
        return f"{super().cache_name()}-{self.folder}"

    def build(self) -> MetaData:
        assert self.package is not None
        archive = self.package.fetch()
        _check_folder(self.folder, list(_folders_in(archive)))
        scenario = _scenario(self.folder)
        prefix = f"{FILES}/{self.folder}"
        description = _read_description(read_member(archive, f"{prefix}/{DESCRIPTION_FILE}"))
        runs = _read_runs(read_member(archive, f"{prefix}/{RUNS_FILE}"), f"{prefix}/{RUNS_FILE}")
        config_ids, configs = _read_configs(archive, f"{prefix}/{CONFIGS_FILE}")
        metafeatures = _read_metafeatures(
            read_member(archive, f"{prefix}/{FEATURES_FILE}"), f"{prefix}/{FEATURES_FILE}"
        )
        _check_metric(runs.metric, scenario["metric"], description, prefix)
        datasets = sorted(set(metafeatures.index) | set(runs.instances))
        performance = _performance(runs, datasets, config_ids, f"{prefix}/{RUNS_FILE}")
        return MetaData(
            datasets=datasets,
            configs=configs,
            performance=performance,
            metafeatures=metafeatures,
            space=_space_name(scenario["task"]),
            info={
                "folder": self.folder,
                "metric": runs.metric,
                "task": scenario["task"],
                "sparse": scenario["kind"] == "sparse",
                "source": str(self.package),
                "config_ids": config_ids,
                "runstatus": dict(sorted(Counter(runs.status).items())),
                "description": description,
            },
        )


# ---------------------------------------------------------------------------------------------
# Folder names
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _folders_in(archive: Path) -> tuple[str, ...]:
    """The ASlib folders of ``archive``: those under :data:`FILES` that hold a runs file."""
    names = list_members(archive, f"{FILES}/")
    folders = {
        name[len(FILES) + 1 :].split("/")[0]
        for name in names
        if name.endswith(f"/{RUNS_FILE}") and name.count("/") == FILES.count("/") + 2
    }
    if not folders:
        raise DatasetError(f"{archive.name} holds no meta-data folders under {FILES}/")
    return tuple(sorted(folders))


def _check_folder(folder: str, known: list[str]) -> None:
    if folder in known:
        return
    close = difflib.get_close_matches(folder, known, n=5, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "."
    raise DatasetError(
        f"auto-sklearn 0.15.0 has no meta-data folder {folder!r}{hint} "
        f"It has {len(known)}: <metric>_binary.classification_<dense|sparse>, "
        f"<metric>_multiclass.classification_<dense|sparse> and "
        f"<metric>_regression_<dense|sparse> (AutoSklearnMetaData.folders() lists them)"
    )


def _space_name(task: str) -> str:
    """The automl_sklearn space the folder's configurations belong to."""
    return "autosklearn-regression" if task == "regression" else "autosklearn-classification"


def _scenario(folder: str) -> dict[str, str]:
    """Metric, task label and data kind, as the folder name states them."""
    match = _CLASSIFICATION.match(folder) or _REGRESSION.match(folder)
    if match is None:
        raise DatasetError(
            f"auto-sklearn meta-data folder {folder!r} does not follow the naming scheme "
            "<metric>_<binary|multiclass>.classification_<dense|sparse> or "
            "<metric>_regression_<dense|sparse>"
        )
    return match.groupdict()


# ---------------------------------------------------------------------------------------------
# A reader for the ARFF these files use
# ---------------------------------------------------------------------------------------------


@dataclass
class ArffTable:
    """An ARFF file's attributes (name, declared type) and data rows (text values)."""

    where: str
    attributes: list[tuple[str, str]]
    rows: list[list[str]]
    lines: list[int]

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.attributes]

    def index(self, name: str) -> int:
        if name not in self.names:
            raise DatasetError(f"{self.where}: no attribute {name!r} (it has {self.names})")
        return self.names.index(name)

    def strings(self, name: str) -> list[str]:
        column = self.index(name)
        return [row[column] for row in self.rows]

    def numbers(self, name: str) -> np.ndarray:
        """A NUMERIC attribute as floats; ``?`` (missing) becomes NaN."""
        column = self.index(name)
        kind = self.attributes[column][1]
        if kind.lower() not in _NUMERIC_TYPES:
            raise DatasetError(f"{self.where}: attribute {name!r} is {kind}, not NUMERIC")
        values = np.empty(len(self.rows))
        for i, (row, line) in enumerate(zip(self.rows, self.lines, strict=True)):
            text = row[column]
            if text == MISSING:
                values[i] = np.nan
            elif _FLOAT.match(text):
                values[i] = float(text)
            else:
                raise DatasetError(f"{self.where}, line {line}: {name} = {text!r} is not a number")
        return values


def read_arff(data: bytes, where: str) -> ArffTable:
    """Parse ARFF text: ``@ATTRIBUTE name type`` lines, then comma-separated ``@DATA`` rows
    (values may be single-quoted). Sparse ARFF rows (``{...}``) are not supported."""
    attributes: list[tuple[str, str]] = []
    rows: list[list[str]] = []
    lines: list[int] = []
    in_data = False
    for number, raw in enumerate(_decode(data, where).splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        if in_data:
            rows.append(_split_row(line, len(attributes), where, number))
            lines.append(number)
            continue
        keyword = line.split(None, 1)[0].lower()
        if keyword == "@attribute":
            attributes.append(_parse_attribute(line, where, number))
        elif keyword == "@data":
            in_data = True
        elif keyword != "@relation":
            raise DatasetError(f"{where}, line {number}: unexpected header line {line[:60]!r}")
    if not in_data or not attributes:
        raise DatasetError(f"{where} is not an ARFF file: no @ATTRIBUTE or @DATA section")
    return ArffTable(where, attributes, rows, lines)


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DatasetError(f"{where} is not UTF-8 text: {error}") from error


def _parse_attribute(line: str, where: str, number: int) -> tuple[str, str]:
    parts = line.split(None, 2)
    if len(parts) != 3:
        raise DatasetError(f"{where}, line {number}: malformed attribute {line[:60]!r}")
    return parts[1].strip("'\""), parts[2].strip()


def _split_row(line: str, width: int, where: str, number: int) -> list[str]:
    if line.startswith("{"):
        raise DatasetError(f"{where}, line {number}: sparse ARFF rows are not supported")
    values = [v.strip() for v in next(csv.reader([line], quotechar="'", skipinitialspace=True))]
    if len(values) != width:
        raise DatasetError(
            f"{where}, line {number}: {len(values)} values, expected one per attribute ({width})"
        )
    return values


# ---------------------------------------------------------------------------------------------
# The four files
# ---------------------------------------------------------------------------------------------


@dataclass
class _Runs:
    metric: str
    instances: list[str]
    algorithms: list[int]
    losses: np.ndarray
    status: list[str]


def _read_runs(data: bytes, where: str) -> _Runs:
    """``algorithm_runs.arff``: one row per (dataset, configuration) with its loss. A run whose
    status is not ``ok`` has no loss (NaN)."""
    table = read_arff(data, where)
    metrics = [name for name in table.names if name not in RUN_COLUMNS]
    missing = [name for name in RUN_COLUMNS if name not in table.names]
    if missing or len(metrics) != 1:
        raise DatasetError(
            f"{where}: expected the attributes {', '.join(RUN_COLUMNS)} and one metric, "
            f"got {table.names}"
        )
    _check_single_repetition(table)
    status = table.strings("runstatus")
    losses = np.where(np.asarray(status) == "ok", table.numbers(metrics[0]), np.nan)
    return _Runs(
        metric=metrics[0],
        instances=table.strings("instance_id"),
        algorithms=[_config_id(v, where) for v in table.strings("algorithm")],
        losses=losses,
        status=status,
    )


def _check_single_repetition(table: ArffTable) -> None:
    """Every row must be repetition 1: the conversion keeps one value per cell and would
    otherwise mix repetitions silently."""
    repetitions = table.numbers("repetition")
    other = sorted({float(r) for r in repetitions if r != 1.0})
    if other:
        raise DatasetError(
            f"{table.where}: repetitions {other} besides 1; only single-repetition files "
            "are supported"
        )


def _config_id(text: str, where: str) -> int:
    if not _INTEGER.match(text.strip()):
        raise DatasetError(f"{where}: configuration id {text!r} is not an integer")
    return int(text)


def _read_configs(archive: Path, member: str) -> tuple[list[int], list[dict[str, Any]]]:
    """``configurations.csv``: auto-sklearn's ids and the configurations as plain dicts.

    Read as text without NA detection (``None``, ``True`` and ``False`` are values of
    categorical hyper-parameters and stay strings); numbers become int or float; an empty
    cell is an inactive hyper-parameter and is left out.
    """
    where = member
    frame = read_csv(archive, member, dtype=str, keep_default_na=False)
    if CONFIG_ID_COLUMN not in frame.columns:
        raise DatasetError(f"{where}: no column {CONFIG_ID_COLUMN!r} with configuration ids")
    ids = [_config_id(v, where) for v in frame[CONFIG_ID_COLUMN]]
    duplicated = sorted(i for i, n in Counter(ids).items() if n > 1)
    if duplicated:
        raise DatasetError(f"{where}: configuration ids {duplicated[:5]} appear more than once")
    names = [c for c in frame.columns if c != CONFIG_ID_COLUMN]
    configs = [
        {name: _value(text) for name, text in zip(names, row, strict=True) if text != ""}
        for row in frame[names].itertuples(index=False, name=None)
    ]
    return ids, configs


def _value(text: str) -> int | float | str:
    """A cell of ``configurations.csv`` as the type ConfigSpace expects."""
    if _INTEGER.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    return text


def _read_metafeatures(data: bytes, where: str) -> pd.DataFrame:
    """``feature_values.arff``: one row per dataset, one column per meta-feature."""
    table = read_arff(data, where)
    _check_single_repetition(table)
    instances = table.strings("instance_id")
    duplicated = sorted(d for d, n in Counter(instances).items() if n > 1)
    if duplicated:
        raise DatasetError(f"{where}: datasets {duplicated[:5]} have more than one row")
    features = [name for name in table.names if name not in ("instance_id", "repetition")]
    frame = pd.DataFrame({name: table.numbers(name) for name in features}, index=instances)
    frame.index.name = "dataset"
    return frame


def _read_description(data: bytes) -> dict[str, Any]:
    """The scalar fields of ``description.txt`` (``key: value`` lines)."""
    fields: dict[str, Any] = {}
    for line in data.decode("utf-8", errors="replace").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in DESCRIPTION_FIELDS:
            text = value.strip()
            fields[key.strip()] = (
                text.lower() == "true" if text.lower() in ("true", "false") else _value(text)
            )
    return fields


def _check_metric(metric: str, folder_metric: str, description: dict[str, Any], where: str) -> None:
    """The runs' metric column, the folder name and the description must agree, and the
    values must be losses: MetaData.performance is lower-is-better."""
    stated = description.get("performance_measures", metric)
    if not metric == folder_metric == stated:
        raise DatasetError(
            f"{where}: the metric is {metric!r} in {RUNS_FILE}, {folder_metric!r} in the "
            f"folder name and {stated!r} in {DESCRIPTION_FILE}"
        )
    if description.get("maximize") is True:
        raise DatasetError(f"{where}/{DESCRIPTION_FILE}: maximize is true; expected losses")


def _performance(runs: _Runs, datasets: list[str], config_ids: list[int], where: str) -> np.ndarray:
    """datasets x configurations: each run's loss in its cell, NaN elsewhere."""
    row = {d: i for i, d in enumerate(datasets)}
    column = {c: j for j, c in enumerate(config_ids)}
    unknown = sorted({a for a in runs.algorithms if a not in column})
    if unknown:
        raise DatasetError(f"{where}: runs of configurations {unknown[:5]} not in {CONFIGS_FILE}")
    pairs = Counter(zip(runs.instances, runs.algorithms, strict=True))
    repeated = [pair for pair, n in pairs.items() if n > 1]
    if repeated:
        raise DatasetError(f"{where}: (dataset, configuration) {repeated[:3]} run more than once")
    performance = np.full((len(datasets), len(config_ids)), np.nan)
    for instance, algorithm, loss in zip(runs.instances, runs.algorithms, runs.losses, strict=True):
        performance[row[instance], column[algorithm]] = loss
    return performance
