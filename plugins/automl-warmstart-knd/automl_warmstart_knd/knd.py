"""auto-sklearn 1.0's warm start: the best configurations of the k nearest datasets.

Feurer, Springenberg & Hutter (AAAI 2015) and Feurer et al. (NeurIPS 2015) describe each
dataset by meta-features, find the meta-datasets nearest to a new one, and evaluate the best
configuration stored for each of them first, nearest first (25 of them in auto-sklearn 1.0).
Auto-sklearn 2.0 (Feurer et al., JMLR 2022, section 1.5) replaced it by a portfolio; this
plugin keeps it as the baseline that portfolio is measured against, and as a warm start for
any meta-data that has meta-features (hand-crafted or learned).

Everything here is written against :class:`~automl_core.contracts.MetaData` only: a table of
one best configuration per dataset (auto-sklearn's) and a full matrix of a pool (Oboe, PMF)
are both a performance matrix with meta-features.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData, TaskDescription, WarmStart, WarmStarter
from automl_core.errors import AutoMLError, InvalidConfigurationError
from automl_core.space import SearchSpace
from automl_engine.metastore import (
    check_dataset_ids,
    check_metadata_reference,
    left_out_datasets,
    metafeature_value,
)
from automl_engine.metastore import task_metafeatures as task_features

log = logging.getLogger(__name__)

#: How many configurations a suggestion holds when the run asks for no particular number:
#: auto-sklearn 1.0's ``initial_configurations_via_metalearning``.
DEFAULT_CONFIGS = 25
DISTANCES = ("l1", "l2")

#: The meta-data source used when the recipe names none: auto-sklearn's own tables.
AUTOSKLEARN_SOURCE = "autosklearn"
#: Our metric names -> the metric part of auto-sklearn's folder names. Each folder holds the
#: configurations auto-sklearn found best *for that metric*, so the run's metric picks it.
AUTOSKLEARN_METRICS = {
    "accuracy": "accuracy",
    "balanced_accuracy": "balanced_accuracy",
    "roc_auc": "roc_auc",
    "log_loss": "log_loss",
    "f1_macro": "f1_macro",
    "r2": "r2",
    "rmse": "root_mean_squared_error",
    "mse": "mean_squared_error",
    "mae": "mean_absolute_error",
}
#: The folder metric used for a metric auto-sklearn has no table for (with a warning).
FALLBACK_METRICS = {"classification": "balanced_accuracy", "regression": "r2"}
#: auto-sklearn's meta-feature holding the number of classes (it picks binary or multiclass).
CLASSES_FEATURE = "NumberOfClasses"


# ---------------------------------------------------------------------------------------------
# Pure functions (also used by benchmarks/warmstart_regret.py)
# ---------------------------------------------------------------------------------------------


def nearest_datasets(
    features: Mapping[str, float],
    table: pd.DataFrame,
    *,
    distance: str = "l1",
    exclude: Iterable[str] = (),
) -> list[tuple[str, float]]:
    """The datasets of ``table`` (rows: datasets, columns: meta-features) nearest to a dataset
    described by ``features``, nearest first, as ``(dataset id, distance)``.

    Only the columns ``table`` shares with the finite ``features`` are compared. Each is
    min-max scaled over the table's datasets plus the new one, so that a count of rows does
    not outweigh a ratio; a column constant over all of them says nothing and is dropped.
    The distance to a dataset is the mean absolute difference (``l1``) or the root mean
    squared difference (``l2``) over the columns finite on both sides: a mean, not a sum, so
    that a dataset missing some meta-features is not made to look near. A dataset with no
    such column cannot be compared and is left out. Ties keep the table's order.

    ``exclude`` names datasets (compared lower-case) removed before anything is computed,
    scaling included. Raises ValueError when no column is shared, naming both sides' names.
    """
    return _neighbours(features, table, distance, exclude)[0]


def _neighbours(
    features: Mapping[str, float], table: pd.DataFrame, distance: str, exclude: Iterable[str]
) -> tuple[list[tuple[str, float]], list[str]]:
    """:func:`nearest_datasets`, and the columns that were compared."""
    if distance not in DISTANCES:
        raise ValueError(f"distance: got {distance!r}, expected one of {', '.join(DISTANCES)}")
    left_out = {str(d).lower() for d in exclude}
    table = table.loc[[str(d).lower() not in left_out for d in table.index]]
    new = {str(name): metafeature_value(value) for name, value in features.items()}
    new = {name: value for name, value in new.items() if np.isfinite(value)}
    shared = [str(c) for c in table.columns if str(c) in new]
    if not shared:
        raise ValueError(
            "no meta-feature is shared by the task and the meta-data: the task has "
            f"{sorted(new) or '(none finite)'}, the meta-data's table has "
            f"{[str(c) for c in table.columns]}"
        )
    values = table[shared].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float, copy=True)
    values[~np.isfinite(values)] = np.nan
    target = np.array([new[c] for c in shared])
    both = np.vstack([values, target[None, :]])
    with np.errstate(invalid="ignore"):
        low, high = np.nanmin(both, axis=0), np.nanmax(both, axis=0)
    span = high - low
    varying = span > 0  # the target is finite in every shared column: no all-NaN column
    if not varying.any() or len(table) == 0:
        return [], [c for c, keep in zip(shared, varying, strict=True) if keep]
    scaled = (values[:, varying] - low[varying]) / span[varying]
    scaled_target = (target[varying] - low[varying]) / span[varying]
    differences = np.abs(scaled - scaled_target)
    finite = np.isfinite(differences)
    counts = finite.sum(axis=1)
    if distance == "l1":
        distances = np.where(finite, differences, 0.0).sum(axis=1)
    else:
        distances = np.where(finite, differences**2, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        distances = distances / counts
    if distance == "l2":
        distances = np.sqrt(distances)
    comparable = np.flatnonzero(counts > 0)
    order = comparable[np.argsort(distances[comparable], kind="stable")]
    ids = [str(d) for d in table.index]
    columns = [c for c, keep in zip(shared, varying, strict=True) if keep]
    return [(ids[i], float(distances[i])) for i in order], columns


def knd_order(
    performance: np.ndarray, rows: Sequence[int], per_dataset: int = 1
) -> Iterator[tuple[int, int]]:
    """``(row, column)`` cells of ``performance`` (losses, NaN = not run) in the order the
    k-nearest-datasets warm start offers them, for ``rows`` given nearest first.

    The best ``per_dataset`` configurations of each row in turn (auto-sklearn 1.0 takes one),
    then, for meta-data that has more than that per dataset (a full matrix such as Oboe's),
    the next ``per_dataset`` of each, and so on until every finite cell was offered. Ties go
    to the lower column. Repeats are not removed here: the caller de-duplicates (by
    canonical configuration) and stops when it has enough.
    """
    if per_dataset < 1:
        raise ValueError(f"per_dataset: got {per_dataset!r}, expected an integer >= 1")
    # Each row is ranked when it is first reached: a caller that stops after 25 cells of a
    # 38,151-column matrix (PMF) sorts only the rows it got to.
    ranked: dict[int, np.ndarray] = {}

    def ranking(row: int) -> np.ndarray:
        if row not in ranked:
            losses = performance[row]
            finite = np.flatnonzero(np.isfinite(losses))
            ranked[row] = finite[np.argsort(losses[finite], kind="stable")]
        return ranked[row]

    start, left = 0, True
    while left:
        left = False
        for row in rows:
            columns = ranking(row)
            left = left or start + per_dataset < len(columns)
            for column in columns[start : start + per_dataset]:
                yield row, int(column)
        start += per_dataset


def autosklearn_folder(task: TaskDescription) -> str:
    """auto-sklearn's meta-data folder for ``task``: its metric's, binary or multiclass
    (multiclass when the task's ``NumberOfClasses`` meta-feature says more than two; binary
    otherwise), dense. A metric auto-sklearn has no table for falls back, with a warning, to
    balanced accuracy (classification) or R² (regression)."""
    if task.task not in FALLBACK_METRICS:
        raise AutoMLError(
            f"knd: auto-sklearn's meta-data is for classification and regression, not a "
            f"{task.task!r} task; set the warm-starter's `metadata` parameter (e.g. the "
            "benchmark's own source, such as `oboe`)"
        )
    metric = AUTOSKLEARN_METRICS.get(task.metric)
    if metric is None:
        metric = FALLBACK_METRICS[task.task]
        log.warning(
            "knd: auto-sklearn has no meta-data for metric %r; using its %s table instead",
            task.metric,
            metric,
        )
    if task.task == "regression":
        return f"{metric}_regression_dense"
    classes = metafeature_value(task.metafeatures.get(CLASSES_FEATURE, float("nan")))
    label = "multiclass" if np.isfinite(classes) and classes > 2 else "binary"
    return f"{metric}_{label}.classification_dense"


# ---------------------------------------------------------------------------------------------
# The warm-starter
# ---------------------------------------------------------------------------------------------


class KNearestDatasets(WarmStarter):
    """The best configurations of the meta-datasets nearest to the task by meta-features.

    ``metadata``: a meta-data source name, folder or :class:`MetaData` (None: auto-sklearn's
    table for the run's metric and task; in a table-lookup task, the benchmark's own
    meta-data), built with ``metadata_params``; it is loaded at the
    first :meth:`suggest`, never here, so that validating a recipe does not download. ``k``
    nearest datasets are used (None: as many as it takes to fill the request), the best
    ``per_dataset`` of each; ``distance`` is ``l1`` (auto-sklearn's) or ``l2``; ``features``
    restricts the meta-features compared; ``exclude`` and ``exclude_self`` leave datasets
    out (see :func:`left_out_datasets`).
    """

    def __init__(
        self,
        metadata: str | Path | MetaData | None = None,
        metadata_params: Mapping[str, Any] | None = None,
        k: int | None = None,
        per_dataset: int = 1,
        distance: str = "l1",
        features: Sequence[str] | None = None,
        exclude: Sequence[str] = (),
        exclude_self: bool = True,
    ) -> None:
        check_metadata_reference(metadata, metadata_params)
        if k is not None and (not _is_int(k) or k < 1):
            raise ValueError(f"k: got {k!r}, expected an integer >= 1 or null")
        if not _is_int(per_dataset) or per_dataset < 1:
            raise ValueError(f"per_dataset: got {per_dataset!r}, expected an integer >= 1")
        if distance not in DISTANCES:
            raise ValueError(f"distance: got {distance!r}, expected one of {', '.join(DISTANCES)}")
        if features is not None and (
            isinstance(features, str)
            or not isinstance(features, Sequence)
            or not features
            or not all(isinstance(f, str) for f in features)
        ):
            raise ValueError(
                f"features: got {features!r}, expected a non-empty list of meta-feature names"
            )
        self.exclude = check_dataset_ids("exclude", exclude)
        if not isinstance(exclude_self, bool):
            raise ValueError(f"exclude_self: got {exclude_self!r}, expected true or false")
        self.metadata = metadata
        self.metadata_params = dict(metadata_params or {})
        self.k = k
        self.per_dataset = per_dataset
        self.distance = distance
        self.features = list(features) if features is not None else None
        self.exclude_self = exclude_self
        self._loaded: dict[str, MetaData] = {}

    def suggest(self, task: TaskDescription, space: SearchSpace, n: int | None) -> WarmStart:
        """Up to ``n`` (None: 25) configurations valid in ``space``, nearest dataset first;
        ``info`` says where they came from (see the README)."""
        wanted = DEFAULT_CONFIGS if n is None else int(n)
        metadata, label = self._metadata(task)
        if metadata.metafeatures is None or metadata.metafeatures.empty:
            raise AutoMLError(f"knd: meta-data {label} has no meta-features to compare")
        # A relabelled copy: the meta-data may be shared with other components.
        table = metadata.metafeatures.set_axis(metadata.metafeatures.index.astype(str), axis=0)
        if self.features is not None:
            missing = [f for f in self.features if f not in table.columns]
            if missing:
                raise ValueError(
                    f"features: {missing} are not meta-features of {label} "
                    f"(it has {list(table.columns)})"
                )
            table = table[self.features]
        described, source = task_features(task, table)
        left_out = left_out_datasets(metadata.datasets, task, self.exclude, self.exclude_self)
        performed = np.isfinite(metadata.performance).any(axis=1)
        rows, dropped = set(table.index), set(left_out)
        eligible = [
            d
            for i, d in enumerate(metadata.datasets)
            if d in rows and performed[i] and d not in dropped
        ]
        skipped = {
            "no_metafeatures": sum(d not in rows for d in metadata.datasets),
            "no_performance": int((~performed).sum()),
        }
        neighbours, columns = _neighbours(described, table.loc[eligible], self.distance, ())
        if not neighbours:
            log.warning("knd: no dataset of %s can be compared with the task", label)
        if self.k is not None:
            neighbours = neighbours[: self.k]
        chosen, used, invalid, duplicates = self._pick(metadata, neighbours, space, wanted)
        distances = dict(neighbours)
        return WarmStart(
            configs=chosen,
            info={
                "starter": "knd",
                "metadata": label,
                "features_from": source,
                "features": columns,
                "distance": self.distance,
                "datasets": [
                    {"dataset": d, "distance": distances[d], "configs": count}
                    for d, count in used.items()
                ],
                "invalid": invalid,
                "duplicates": duplicates,
                "excluded": left_out,
                "skipped": skipped,
            },
        )

    def _pick(
        self,
        metadata: MetaData,
        neighbours: list[tuple[str, float]],
        space: SearchSpace,
        wanted: int,
    ) -> tuple[list[dict[str, Any]], dict[str, int], int, int]:
        """The configurations (validated, de-duplicated), how many came from each dataset,
        and the counts of invalid and duplicate ones met on the way."""
        chosen: list[dict[str, Any]] = []
        used: dict[str, int] = {}
        seen: set[str] = set()
        invalid = duplicates = 0
        rows = [metadata.row(d) for d, _ in neighbours]
        if wanted <= 0:
            return chosen, used, invalid, duplicates
        for row, column in knd_order(metadata.performance, rows, self.per_dataset):
            try:
                config = space.validate(metadata.configs[column])
            except InvalidConfigurationError as error:
                log.debug("knd: skipping configuration %d: %s", column, error)
                invalid += 1
                continue
            key = space.key(config)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            chosen.append(config)
            dataset = metadata.datasets[row]
            used[dataset] = used.get(dataset, 0) + 1
            if len(chosen) >= wanted:
                break
        return chosen, used, invalid, duplicates

    def _metadata(self, task: TaskDescription) -> tuple[MetaData, str]:
        """The meta-data (loaded once per reference) and a label naming it."""
        if isinstance(self.metadata, MetaData):
            return self.metadata, str(self.metadata.info.get("source") or self.metadata.space)
        if self.metadata is None and task.benchmark is not None:
            # A table-lookup task: the benchmark's own meta-data.
            reference: str | Path = task.benchmark
            params = dict(self.metadata_params)
        elif self.metadata is None:
            reference = AUTOSKLEARN_SOURCE
            params = {"folder": autosklearn_folder(task), **self.metadata_params}
        else:
            reference, params = self.metadata, self.metadata_params
        label = f"{reference}" + (f" {params}" if params else "")
        if label not in self._loaded:
            self._loaded[label] = task.metadata(reference, params or None)
        return self._loaded[label], label


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
