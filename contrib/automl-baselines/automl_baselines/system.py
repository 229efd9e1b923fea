"""A practitioner's default models as whole-system peers (``automl ablate --peer
random-forest --peer hist-gradient-boosting``).

Each is one scikit-learn pipeline with the library's default hyper-parameters, fitted once on
the rows it is given: **no search, and no tuning to the run's metric.** They answer "how much
does a search buy over the model a practitioner would fit first?", not "how good is another
AutoML system?".

* ``random-forest``: ``RandomForestClassifier`` / ``RandomForestRegressor`` with scikit-learn's
  defaults (``n_jobs`` from the cell, ``random_state=seed``), after a column transformer that
  imputes numeric columns with their median and categorical columns with their most frequent
  value, then one-hot encodes the categorical ones (``handle_unknown="ignore"``). Its
  validation loss is the run's metric on the forest's **out-of-bag** predictions (each
  training row predicted by the trees whose bootstrap sample left it out), so the one fit
  gives both the model and its validation.
* ``hist-gradient-boosting``: ``HistGradientBoostingClassifier`` / ``Regressor`` with
  scikit-learn's defaults (``random_state=seed``); categorical columns become ordinal codes
  that the model treats as categories (its ``categorical_features``), NaN stays NaN (the
  model's native missing-value handling). Its validation loss is the run's metric on a
  ``holdout`` share of the rows (stratified where the classes allow) scored by the same
  pipeline fitted on the rest; the returned model is then fitted again on all the rows.

The metric is used for nothing but the reported validation loss. The time budget is not
used either: one fit (two for the gradient boosting) cannot stop early, so a dataset too large
for the budget overruns it, with a warning in the log.

Columns are categorical per :func:`automl_engine.dataset.is_categorical` (``category``,
``object``, string and ``bool`` dtypes), as in the core's own pipelines; a column without a
single value in the rows a pipeline is fitted on is left out of it. Classification
labels are the integers the core hands over; the returned pipeline follows scikit-learn:
``classes_`` are the labels of ``y`` (sorted) and ``predict_proba`` has a column per label in
that order (the core places the columns among all the dataset's classes).
"""

from __future__ import annotations

import logging
import math
import numbers
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import sklearn
from automl_bench.contracts import System, SystemResult
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import KFold, cross_val_predict, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    OneHotEncoder,
    OrdinalEncoder,
    StandardScaler,
)
from threadpoolctl import threadpool_limits

from automl_engine.dataset import is_categorical
from automl_engine.evaluator import scores_on_codes
from automl_engine.metrics import Metric

log = logging.getLogger(__name__)

#: The most ordinal codes a categorical column gets for the gradient boosting: its default
#: ``max_bins`` (255), which native categories may not exceed; the rarest categories of a
#: column with more share one code (OrdinalEncoder's ``max_categories``).
MAX_CATEGORIES = 255


# ---------------------------------------------------------------------------------------------
# Columns (module-level functions, so that the fitted pipelines pickle)
# ---------------------------------------------------------------------------------------------


def observed_mask(X: pd.DataFrame) -> np.ndarray:
    """Which columns of ``X`` hold at least one value. The others carry nothing to learn
    from and are left out (the gradient boosting's binning fails on them)."""
    return X.notna().any(axis=0).to_numpy()


def categorical_mask(X: pd.DataFrame) -> np.ndarray:
    """Which columns of ``X`` are categorical (:func:`automl_engine.dataset.is_categorical`)
    and hold a value."""
    typed = [is_categorical(X.iloc[:, i]) for i in range(X.shape[1])]
    return np.array(typed, dtype=bool) & observed_mask(X)


def numeric_mask(X: pd.DataFrame) -> np.ndarray:
    """Which columns of ``X`` are numeric (not categorical) and hold a value."""
    typed = [not is_categorical(X.iloc[:, i]) for i in range(X.shape[1])]
    return np.array(typed, dtype=bool) & observed_mask(X)


def category_strings(X: Any) -> np.ndarray:
    """Categorical columns as an object array of strings, every missing value (None, NaN,
    pd.NA, NaT) as ``np.nan``: one type per column, so that the encoders can sort the
    categories, and one missing marker, the one the imputer and encoders know."""
    frame = pd.DataFrame(X)
    missing = frame.isna().to_numpy()
    values = frame.astype(object).to_numpy().astype(str).astype(object)
    values[missing] = np.nan
    return values


def numeric_values(X: Any) -> np.ndarray:
    """Numeric columns as floats, missing values (pd.NA of nullable dtypes included) as NaN."""
    return pd.DataFrame(X).to_numpy(dtype=float, na_value=np.nan)


def one_hot_preprocessor() -> ColumnTransformer:
    """The forest's columns: numeric ones median-imputed, categorical ones imputed with
    their most frequent value and one-hot encoded (unseen categories: all zeros)."""
    categorical = Pipeline(
        [
            ("strings", FunctionTransformer(category_strings)),
            ("impute", SimpleImputer(strategy="most_frequent")),
            ("one_hot", OneHotEncoder(handle_unknown="ignore")),
        ]
    )
    numeric = Pipeline(
        [
            ("floats", FunctionTransformer(numeric_values)),
            ("impute", SimpleImputer(strategy="median")),
        ]
    )
    return ColumnTransformer(
        [("categorical", categorical, categorical_mask), ("numeric", numeric, numeric_mask)]
    )


def ordinal_preprocessor() -> ColumnTransformer:
    """The gradient boosting's columns: the categorical ones first, as ordinal codes
    ``0..254`` with NaN for a missing or unseen category, then the numeric ones as floats,
    NaN kept."""
    categorical = Pipeline(
        [
            ("strings", FunctionTransformer(category_strings)),
            (
                "codes",
                OrdinalEncoder(
                    handle_unknown="use_encoded_value",
                    unknown_value=np.nan,
                    encoded_missing_value=np.nan,
                    max_categories=MAX_CATEGORIES,
                ),
            ),
        ]
    )
    return ColumnTransformer(
        [
            ("categorical", categorical, categorical_mask),
            ("numeric", FunctionTransformer(numeric_values), numeric_mask),
        ],
        sparse_threshold=0.0,
    )


# ---------------------------------------------------------------------------------------------
# The systems
# ---------------------------------------------------------------------------------------------


class BaselineSystem(System):
    """What both baselines share: the validation loss and the ``info`` they report."""

    name = "baseline"

    def _info(
        self, X: pd.DataFrame, estimator: Any, seed: int, n_jobs: int, validation: str
    ) -> dict[str, Any]:
        return {
            "sklearn_version": sklearn.__version__,
            "estimator": type(estimator).__name__,
            "random_state": seed,
            "n_jobs": n_jobs,
            "categorical_columns": [str(c) for c in X.columns[categorical_mask(X)]],
            "empty_columns": [str(c) for c in X.columns[~observed_mask(X)]],
            "validation": validation,
        }

    def _check_time(self, seconds: float, time_budget: float) -> None:
        if seconds > time_budget:
            log.warning(
                "%s: its fit took %.1f s, past the budget of %g s (a single fit cannot stop early)",
                self.name,
                seconds,
                time_budget,
            )

    def _loss(self, metric: Metric, y_true: np.ndarray, predictions: np.ndarray) -> float:
        """The metric's loss, ``inf`` where the metric cannot be computed (e.g. ROC AUC on
        validation rows of one class) or is not finite."""
        try:
            loss = float(metric.loss(y_true, predictions))
        except ValueError as error:
            log.warning("%s: %s on its validation rows failed (%s)", self.name, metric.name, error)
            return math.inf
        return loss if math.isfinite(loss) else math.inf


class RandomForestSystem(BaselineSystem):
    """scikit-learn's random forest with its defaults, one fit on all the rows, validated
    out of bag; see the module docstring. No parameters."""

    name = "random-forest"

    def fit(
        self,
        X: pd.DataFrame,
        y: np.ndarray,
        *,
        task: str,
        metric: Metric,
        time_budget: float,
        seed: int,
        n_jobs: int,
        workdir: Path,
    ) -> SystemResult:
        start = time.monotonic()
        forest_class = RandomForestClassifier if task == "classification" else RandomForestRegressor
        # oob_score=True only adds the out-of-bag predictions: the trees are the same.
        forest = forest_class(n_jobs=n_jobs, random_state=seed, oob_score=True)
        model = Pipeline([("preprocessor", one_hot_preprocessor()), ("forest", forest)])
        with warnings.catch_warnings():
            # Rows left in every bootstrap sample are left out below, not scored as zeros.
            warnings.filterwarnings("ignore", "Some inputs do not have OOB scores")
            model.fit(X, y)
        out_of_bag = out_of_bag_rows(forest, len(y))
        if task == "classification":
            y_true = np.searchsorted(forest.classes_, y)  # codes 0..m-1 of the m labels of y
            predictions = forest.oob_decision_function_
        else:
            y_true = np.asarray(y, dtype=float)
            predictions = forest.oob_prediction_
        loss = self._loss(metric, y_true[out_of_bag], predictions[out_of_bag])
        seconds = time.monotonic() - start
        self._check_time(seconds, time_budget)
        info = self._info(X, forest, seed, n_jobs, "out-of-bag")
        info.update(
            validation_rows=int(out_of_bag.sum()),
            n_features=int(forest.n_features_in_),
            fit_seconds=seconds,
        )
        return SystemResult(model=model, validation_loss=loss, curve=[(seconds, loss)], info=info)


def out_of_bag_rows(forest: Any, n_rows: int) -> np.ndarray:
    """Which rows at least one tree left out of its bootstrap sample (with the default 100
    trees, a row is in every sample with probability about 1e-20)."""
    in_bag = np.zeros(n_rows, dtype=int)
    for samples in forest.estimators_samples_:
        in_bag[np.unique(samples)] += 1
    return in_bag < len(forest.estimators_)


class HistGradientBoostingSystem(BaselineSystem):
    """scikit-learn's histogram gradient boosting with its defaults, validated on a
    ``holdout`` share of the rows, then fitted again on all of them; see the module
    docstring. Its OpenMP threads are capped at ``n_jobs`` while it fits."""

    name = "hist-gradient-boosting"

    def __init__(self, holdout: float = 0.2) -> None:
        if not _is_number(holdout) or not 0 < holdout < 1:
            raise ValueError(f"{self.name}: holdout must be in (0, 1), got {holdout!r}")
        self.holdout = float(holdout)

    def pipeline(self, X: pd.DataFrame, task: str, seed: int) -> Pipeline:
        """The default model after :func:`ordinal_preprocessor`, which puts the categorical
        columns first: those are the model's ``categorical_features``."""
        boosting_class = (
            HistGradientBoostingClassifier
            if task == "classification"
            else HistGradientBoostingRegressor
        )
        n_categorical = int(categorical_mask(X).sum())
        boosting = boosting_class(
            categorical_features=list(range(n_categorical)) or None, random_state=seed
        )
        return Pipeline([("preprocessor", ordinal_preprocessor()), ("boosting", boosting)])

    def fit(
        self,
        X: pd.DataFrame,
        y: np.ndarray,
        *,
        task: str,
        metric: Metric,
        time_budget: float,
        seed: int,
        n_jobs: int,
        workdir: Path,
    ) -> SystemResult:
        start = time.monotonic()
        train, validation = holdout_split(y, task, self.holdout, seed)
        with threadpool_limits(limits=n_jobs, user_api="openmp"):
            X_train = X.iloc[train]
            checked = self.pipeline(X_train, task, seed).fit(X_train, y[train])
            X_validation, y_validation = X.iloc[validation], y[validation]
            if task == "classification":
                y_true, predictions = scores_on_codes(checked, X_validation, y_validation)
            else:
                y_true = np.asarray(y_validation, dtype=float)
                predictions = np.asarray(checked.predict(X_validation), dtype=float)
            loss = self._loss(metric, y_true, predictions)
            model = self.pipeline(X, task, seed).fit(X, y)
        seconds = time.monotonic() - start
        self._check_time(seconds, time_budget)
        boosting = model.named_steps["boosting"]
        info = self._info(X, boosting, seed, n_jobs, "holdout")
        info.update(
            holdout=self.holdout,
            validation_rows=len(validation),
            n_iter=int(boosting.n_iter_),
            validation_n_iter=int(checked.named_steps["boosting"].n_iter_),
            fit_seconds=seconds,
        )
        # the curve's one point is when the model returned exists: after the refit on all rows
        return SystemResult(model=model, validation_loss=loss, curve=[(seconds, loss)], info=info)


class RidgeCVSystem(BaselineSystem):
    """scikit-learn's ``RidgeCV`` with its defaults (alphas 0.1, 1, 10, chosen by efficient
    leave-one-out), after median imputation, standardisation of the numeric columns and
    one-hot categories: the linear model a practitioner tries first on regression data.
    Validated on 5-fold out-of-fold predictions of the same pipeline (linear fits are
    cheap), then fitted on all the rows. Regression only."""

    name = "ridge-cv"

    def fit(
        self,
        X: pd.DataFrame,
        y: np.ndarray,
        *,
        task: str,
        metric: Metric,
        time_budget: float,
        seed: int,
        n_jobs: int,
        workdir: Path,
    ) -> SystemResult:
        if task != "regression":
            raise ValueError(f"{self.name} is a regression baseline; the task is {task}")
        start = time.monotonic()
        y_true = np.asarray(y, dtype=float)
        model = Pipeline(
            [
                ("preprocessor", one_hot_preprocessor()),
                ("scale", StandardScaler(with_mean=False)),  # sparse one-hot columns stay sparse
                ("ridge", RidgeCV()),
            ]
        )
        folds = KFold(min(5, len(y_true)), shuffle=True, random_state=seed)
        with threadpool_limits(limits=n_jobs):
            predictions = cross_val_predict(model, X, y_true, cv=folds)
            model.fit(X, y_true)
        ridge = model.named_steps["ridge"]
        loss = self._loss(metric, y_true, predictions)
        seconds = time.monotonic() - start
        self._check_time(seconds, time_budget)
        info = self._info(X, ridge, seed, n_jobs, "out-of-fold")
        info.update(alpha=float(ridge.alpha_), fit_seconds=seconds)
        return SystemResult(model=model, validation_loss=loss, curve=[(seconds, loss)], info=info)


def holdout_split(
    y: np.ndarray, task: str, holdout: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Training and validation row indices: ``holdout`` of the rows for validation, stratified
    by class where every class has two rows and the validation rows can hold every class."""
    rows = np.arange(len(y))
    if task == "classification" and np.unique(y, return_counts=True)[1].min() >= 2:
        try:
            return tuple(train_test_split(rows, test_size=holdout, random_state=seed, stratify=y))
        except ValueError:  # fewer validation rows than classes
            pass
    return tuple(train_test_split(rows, test_size=holdout, random_state=seed))


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
