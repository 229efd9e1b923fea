"""The tabular dataset type every source produces, and the checks every dataset passes.

Sources (``sklearn:``, ``csv:``, ``keel:``... see :mod:`automl_engine.sources`) are plugins
registered with ``register_dataset_sources``; each returns a :class:`Dataset`, and
:func:`check_dataset` rejects data a search cannot use, with a message that says why.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from automl_core.errors import DatasetError

TASKS = ("classification", "regression")


@dataclass
class Dataset:
    """Features as a DataFrame (dtypes kept: ``category``/``object``/``bool`` columns are
    categorical), a 1-d target, and the task.

    ``test_rows`` are the rows the source itself sets aside for testing (an OpenML task's
    split): a run then tests on exactly those instead of drawing ``task.test_size`` rows.
    """

    name: str
    X: pd.DataFrame
    y: np.ndarray
    task: str
    info: dict[str, Any] = field(default_factory=dict)
    test_rows: np.ndarray | None = None

    @property
    def categorical_columns(self) -> list[str]:
        return [c for c in self.X.columns if is_categorical(self.X[c])]

    @property
    def n_rows(self) -> int:
        return len(self.X)

    @property
    def n_features(self) -> int:
        return self.X.shape[1]


def is_categorical(column: pd.Series) -> bool:
    """Whether a column is treated as categorical by the pipelines."""
    return not is_numeric_dtype(column.dtype) or is_bool_dtype(column.dtype)


def infer_task(y: pd.Series | np.ndarray) -> str:
    """``regression`` for a float target with non-integer values, else ``classification``."""
    series = pd.Series(y).dropna()
    if is_numeric_dtype(series.dtype) and not is_bool_dtype(series.dtype):
        values = series.to_numpy(dtype=float)
        if series.dtype.kind == "f" and not np.all(np.equal(np.mod(values, 1), 0)):
            return "regression"
    return "classification"


def check_target_column(where: str, target: str, columns: Sequence[str]) -> None:
    """Raise :class:`DatasetError` if ``target`` is not one of ``columns``, naming the
    closest column (a typo, or the same name in another case) so the recipe is easy to fix.

    ``where`` starts the message (``"data.csv"``, ``"dataset 'MASS/Boston'"``).
    """
    if target in columns:
        return
    close = difflib.get_close_matches(target, list(columns), n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in columns}
        close = [lowered[target.lower()]] if target.lower() in lowered else []
    hint = f"; did you mean {close[0]!r}?" if close else "."
    listed = ", ".join(columns)
    raise DatasetError(f"{where} has no target column {target!r}{hint} Columns: {listed}")


def target_array(where: str, target: str, values: pd.Series, task: str) -> np.ndarray:
    """The target column as the 1-d array a :class:`Dataset` holds: floats for regression
    (a non-numeric column is refused with a message naming it), the labels as they are for
    classification (strings as ``object``, so that they stay strings).
    """
    if task == "regression":
        if not is_numeric_dtype(values.dtype) or is_bool_dtype(values.dtype):
            examples = values.dropna().astype(str).unique()[:3].tolist()
            raise DatasetError(
                f"{where}: target column {target!r} is not numeric (dtype {values.dtype}, "
                f"values such as {examples}); regression needs a numeric target. Use task "
                "'classification', or name another target column"
            )
        return values.to_numpy(dtype=float)
    if is_numeric_dtype(values.dtype):
        return values.to_numpy()
    return values.to_numpy(dtype=object)


def check_dataset(dataset: Dataset) -> Dataset:
    """Reject a dataset that no search can use; return it unchanged otherwise."""
    where = f"dataset {dataset.name!r}"
    if dataset.task not in TASKS:
        raise DatasetError(f"{where}: task {dataset.task!r} is not one of {', '.join(TASKS)}")
    if dataset.X.shape[0] == 0:
        raise DatasetError(f"{where}: has no rows")
    if dataset.X.shape[1] == 0:
        raise DatasetError(f"{where}: has no feature columns")
    _check_columns(where, dataset.X)
    y = np.asarray(dataset.y)
    if y.ndim != 1 or len(y) != len(dataset.X):
        raise DatasetError(
            f"{where}: target has shape {y.shape}, expected ({len(dataset.X)},) (one value per row)"
        )
    missing = pd.isna(pd.Series(y))
    if missing.any():
        rows = np.flatnonzero(missing.to_numpy())[:5].tolist()
        raise DatasetError(
            f"{where}: target has {int(missing.sum())} missing values (first rows: {rows}); "
            "drop or fill those rows first"
        )
    if dataset.task == "classification":
        classes = pd.unique(pd.Series(y))
        if len(classes) < 2:
            raise DatasetError(
                f"{where}: classification needs at least 2 classes, the target has "
                f"{len(classes)} ({classes[:1].tolist()})"
            )
    else:
        series = pd.Series(y)
        if not is_numeric_dtype(series.dtype) or is_bool_dtype(series.dtype):
            examples = series.astype(str).unique()[:3].tolist()
            raise DatasetError(
                f"{where}: regression needs a numeric target, got dtype {series.dtype} "
                f"(values such as {examples})"
            )
        if not np.all(np.isfinite(series.to_numpy(dtype=float))):
            raise DatasetError(f"{where}: regression target has infinite values")
    if dataset.test_rows is not None:
        _check_test_rows(where, np.asarray(dataset.test_rows), len(y))
    return dataset


def _check_columns(where: str, X: pd.DataFrame) -> None:
    """Column names are unique (a pipeline selects columns by name) and numeric features are
    finite (missing values are imputed; an infinity fails every pipeline's fit)."""
    names = pd.Series([str(c) for c in X.columns])
    repeated = names[names.duplicated()].unique().tolist()
    if repeated:
        raise DatasetError(
            f"{where}: the column names {repeated} appear more than once; rename them"
        )
    numeric = X.select_dtypes(include="number")
    infinite = np.isinf(numeric.to_numpy(dtype=float, na_value=np.nan)).sum(axis=0)
    if infinite.sum():
        columns = [str(c) for c, n in zip(numeric.columns, infinite, strict=True) if n]
        raise DatasetError(
            f"{where}: {int(infinite.sum())} infinite values in the columns {columns[:5]}; "
            "replace them (with NaN, they are imputed as missing values)"
        )


def _check_test_rows(where: str, rows: np.ndarray, n_rows: int) -> None:
    if rows.ndim != 1 or rows.dtype.kind not in "iu":
        raise DatasetError(f"{where}: test_rows must be a 1-d array of row numbers")
    if rows.size and (rows.min() < 0 or rows.max() >= n_rows):
        raise DatasetError(f"{where}: test_rows holds row numbers outside 0..{n_rows - 1}")
    if not 0 < len(np.unique(rows)) < n_rows:
        raise DatasetError(
            f"{where}: test_rows must leave some rows for training and hold at least one "
            f"(it has {len(np.unique(rows))} of {n_rows})"
        )
