"""The ``handcrafted`` meta-feature provider: groups of hand-designed meta-features.

Meta-features feed the warm starters (k nearest datasets) and meta-learned surrogates, which
compare a new dataset with the ones in a meta-data table. Two things follow:

* names and definitions must be those of the table's source (auto-sklearn, OpenML), or the
  comparison is meaningless -- hence the ``autosklearn`` group by default;
* a meta-feature that cannot be computed must not stop the run: it becomes NaN (a warm
  starter compares the features that are finite), with a warning saying which and why.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData, MetaFeatureProvider
from automl_metafeatures.data import DataView
from automl_metafeatures.groups import (
    autosklearn,
    information,
    landmarking,
    model,
    pca,
    statistical,
)
from automl_metafeatures.registry import TASKS, Feature

#: Every group, in the order its features appear in a result.
GROUPS: dict[str, tuple[Feature, ...]] = {
    "autosklearn": autosklearn.FEATURES,
    "information": information.FEATURES,
    "statistical": statistical.FEATURES,
    "pca": pca.FEATURES,
    "landmarking": landmarking.FEATURES,
    "model": model.FEATURES,
}
ALL = "all"
DEFAULT_GROUPS = ("autosklearn",)
DEFAULT_MAX_ROWS = 10_000
#: Fewer rows than this would make 5-fold landmarks and a PCA meaningless.
MIN_MAX_ROWS = 10


class MetaFeatureWarning(UserWarning):
    """A meta-feature could not be computed (it is NaN), or the time limit cut the rest."""


def feature_names(
    task: str = "classification", groups: str | Sequence[str] = DEFAULT_GROUPS
) -> list[str]:
    """The names :meth:`HandcraftedMetaFeatures.compute` returns for ``task`` and ``groups``,
    in order (e.g. to build a table's columns before computing anything)."""
    if task not in TASKS:
        raise ValueError(f"task: got {task!r}, expected one of {', '.join(TASKS)}")
    return [f.name for f in _features(_check_groups(groups)) if task in f.tasks]


class HandcraftedMetaFeatures(MetaFeatureProvider):
    """Hand-designed meta-features, in groups (see the README for each feature).

    Parameters (the recipe's ``metafeatures.params``):

    * ``groups`` -- a group name or a list of them, from ``autosklearn`` (default: auto-sklearn
      0.15.0's 37 meta-features), ``information``, ``statistical``, ``pca``, ``landmarking``,
      ``model``, or ``all``;
    * ``max_rows`` -- the costly features (PCA, landmarks, the decision tree, correlations)
      use a subsample of at most this many rows, stratified by class; ``None`` for all rows.
      Counts and the column statistics always use every row;
    * ``seed`` -- seeds the subsample, the cross-validation folds and the trees: the result
      is a function of (data, parameters);
    * ``time_limit`` -- seconds for the whole computation, checked before each feature: the
      features not started in time are NaN (one warning names them). ``None``: no limit.
    """

    def __init__(
        self,
        groups: str | Sequence[str] = DEFAULT_GROUPS,
        max_rows: int | None = DEFAULT_MAX_ROWS,
        seed: int = 0,
        time_limit: float | None = None,
    ) -> None:
        self.groups = _check_groups(groups)
        self.max_rows = _check_max_rows(max_rows)
        self.seed = _check_seed(seed)
        self.time_limit = _check_time_limit(time_limit)

    def __repr__(self) -> str:
        return (
            f"HandcraftedMetaFeatures(groups={list(self.groups)!r}, max_rows={self.max_rows!r}, "
            f"seed={self.seed!r}, time_limit={self.time_limit!r})"
        )

    def feature_names(self, task: str = "classification") -> list[str]:
        """The names :meth:`compute` returns for ``task``, in order."""
        return feature_names(task, self.groups)

    def fit(self, metadata: MetaData) -> None:
        """Nothing to learn: hand-designed features are fixed functions of the data."""

    def compute(self, X: pd.DataFrame, y: np.ndarray, task: str) -> dict[str, float]:
        """The selected meta-features of (``X``, ``y``); NaN where one could not be computed.

        Problems of the data never raise: each feature is computed on its own, and one that
        fails is NaN with a :class:`MetaFeatureWarning` naming it and the error. Inputs that
        are not a dataset at all (a task name we do not know, ``y`` of another length) raise
        ``ValueError``.
        """
        X, y = _check_inputs(X, y, task)
        started = time.monotonic()
        view = DataView(X, y, task, max_rows=self.max_rows, seed=self.seed)
        values: dict[str, float] = {}
        late: list[str] = []
        for feature in _features(self.groups):
            if task not in feature.tasks:
                continue
            if self.time_limit is not None and time.monotonic() - started >= self.time_limit:
                values[feature.name] = math.nan
                late.append(feature.name)
                continue
            values[feature.name] = _compute_one(feature, view)
        if late:
            warnings.warn(
                MetaFeatureWarning(
                    f"time_limit of {self.time_limit} s reached: {len(late)} meta-feature(s) "
                    f"not computed and set to NaN ({', '.join(late)})"
                ),
                stacklevel=2,
            )
        return values


def _compute_one(feature: Feature, view: DataView) -> float:
    """One feature's value, or NaN and a warning if computing it raised."""
    error: Exception | None = None
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # Numerical libraries warn about what a meta-feature is made to survive (a constant
        # column, collinear dummies in LDA, a class too small for a fold): not the caller's
        # business, and the value says it (NaN, or the convention the feature documents).
        warnings.simplefilter("ignore")
        try:
            value = float(feature.compute(view))
        except Exception as caught:
            error = caught
    if error is None:
        return value
    warnings.warn(
        MetaFeatureWarning(
            f"meta-feature {feature.name!r} ({feature.group}) could not be computed and is "
            f"NaN: {type(error).__name__}: {error}"
        ),
        stacklevel=3,
    )
    return math.nan


def _features(groups: tuple[str, ...]) -> list[Feature]:
    return [f for name, features in GROUPS.items() if name in groups for f in features]


# -- validation ------------------------------------------------------------------------------
def _expected_groups() -> str:
    return f"a group name or a list of them, from {', '.join(GROUPS)} or {ALL!r}"


def _check_groups(groups: Any) -> tuple[str, ...]:
    names = [groups] if isinstance(groups, str) else groups
    if not isinstance(names, Sequence) or isinstance(names, bytes) or not names:
        raise ValueError(f"groups: got {groups!r}, expected {_expected_groups()}")
    chosen: set[str] = set()
    for name in names:
        if name == ALL:
            chosen.update(GROUPS)
        elif isinstance(name, str) and name in GROUPS:
            chosen.add(name)
        else:
            raise ValueError(
                f"groups: got {groups!r}, whose {name!r} is unknown; expected {_expected_groups()}"
            )
    return tuple(name for name in GROUPS if name in chosen)


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _check_max_rows(max_rows: Any) -> int | None:
    if max_rows is None:
        return None
    if not _is_int(max_rows) or max_rows < MIN_MAX_ROWS:
        raise ValueError(
            f"max_rows: got {max_rows!r}, expected an integer >= {MIN_MAX_ROWS} or None "
            "(no subsampling)"
        )
    return int(max_rows)


def _check_seed(seed: Any) -> int:
    if not _is_int(seed) or not 0 <= seed < 2**32:
        raise ValueError(f"seed: got {seed!r}, expected an integer in [0, 2**32)")
    return int(seed)


def _check_time_limit(time_limit: Any) -> float | None:
    if time_limit is None:
        return None
    number = isinstance(time_limit, int | float | np.integer | np.floating)
    if not number or isinstance(time_limit, bool) or not (0 < time_limit < math.inf):
        raise ValueError(
            f"time_limit: got {time_limit!r}, expected a positive number of seconds or None "
            "(no limit)"
        )
    return float(time_limit)


def _check_inputs(X: Any, y: Any, task: str) -> tuple[pd.DataFrame, np.ndarray]:
    if task not in TASKS:
        raise ValueError(f"task: got {task!r}, expected one of {', '.join(TASKS)}")
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X)
    target = np.asarray(y)
    if target.ndim == 2 and target.shape[1] == 1:
        target = target[:, 0]
    if target.ndim != 1:
        raise ValueError(f"y: got an array of shape {target.shape}, expected one dimension")
    if target.shape[0] != frame.shape[0]:
        raise ValueError(
            f"y: got {target.shape[0]} labels for {frame.shape[0]} rows of X, expected one per row"
        )
    return frame, target
