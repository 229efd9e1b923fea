"""scikit-learn estimators around CatBoost's, as the pipelines of the spaces need them.

:class:`CatBoostClassifier` and :class:`CatBoostRegressor` hold the hyper-parameters of the
space and fit a ``catboost`` model (kept in ``model_``) that is:

* silent (``logging_level="Silent"``) and writes no file (``allow_writing_files=False``: no
  ``catboost_info`` folder in the working directory);
* seeded (``random_seed``) and sized to ``thread_count`` threads (CatBoost's own thread pool,
  which neither ``OMP_NUM_THREADS`` nor threadpoolctl reaches; CatBoost's default is every
  core);
* sampled with CatBoost's MVS bootstrap at the rate ``subsample`` for every task (CatBoost's
  own default for binary classification and regression; it would use a Bayesian bootstrap
  for more than two classes, whose parameter is not ``subsample``).

Columns of the pandas ``category`` dtype in a DataFrame given to ``fit`` are CatBoost's
``cat_features`` (split with its ordered target statistics; the values must be integers or
strings): automl-sklearn's assembler marks the category codes so when the pipeline keeps
them (``automl_sklearn.transformers.CategoriesAsFrame``); the scikit-learn tag
``input_tags.categorical`` says this estimator takes them. Any other input is all numbers.

The classifier fits on the class indices ``0..n_classes-1`` and answers with the labels it
was given (``classes_`` sorted, as scikit-learn's; ``predict`` a 1-d array, where CatBoost's
own returns a column for string labels), so any labels work. Both take dense or sparse
features with missing values (CatBoost treats NaN as below every value), and
``sample_weight`` in ``fit``, which the space's class balancing uses.

A fitted estimator saves with skops as it is: CatBoost's models pickle (and skops saves them)
as their parameters and the model in CatBoost's own binary format, bytes, never a pickle.
``catboost`` is imported when a model is fitted, not with this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted


class _CatBoost(BaseEstimator):
    """What both estimators share: the parameters and the fit."""

    def __init__(
        self,
        iterations: int = 100,
        learning_rate: float = 0.1,
        depth: int = 6,
        l2_leaf_reg: float = 3.0,
        random_strength: float = 1.0,
        subsample: float = 0.8,
        rsm: float = 1.0,
        thread_count: int = 1,
        random_seed: int = 0,
    ) -> None:
        self.iterations = iterations
        self.learning_rate = learning_rate
        self.depth = depth
        self.l2_leaf_reg = l2_leaf_reg
        self.random_strength = random_strength
        self.subsample = subsample
        self.rsm = rsm
        self.thread_count = thread_count
        self.random_seed = random_seed

    def catboost_params(self) -> dict[str, Any]:
        """The parameters given to CatBoost's estimator, as plain Python numbers."""
        return {
            "iterations": int(self.iterations),
            "learning_rate": float(self.learning_rate),
            "depth": int(self.depth),
            "l2_leaf_reg": float(self.l2_leaf_reg),
            "random_strength": float(self.random_strength),
            "bootstrap_type": "MVS",
            "subsample": float(self.subsample),
            "rsm": float(self.rsm),
            "thread_count": int(self.thread_count),
            "random_seed": int(self.random_seed),
            "logging_level": "Silent",
            "allow_writing_files": False,
        }

    def _fit(self, model: Any, X: Any, y: Any, sample_weight: Any) -> None:
        self.cat_features_ = category_columns(X)
        model.fit(X, y, sample_weight=sample_weight, cat_features=self.cat_features_ or None)
        self.model_ = model
        self.n_features_in_ = int(np.shape(X)[1])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        return tags


def category_columns(X: Any) -> list[int]:
    """Positions of the pandas ``category`` columns of ``X`` (none unless a DataFrame)."""
    if not isinstance(X, pd.DataFrame):
        return []
    return [i for i, dtype in enumerate(X.dtypes) if isinstance(dtype, pd.CategoricalDtype)]


class CatBoostClassifier(ClassifierMixin, _CatBoost):
    """CatBoost's classifier (``Logloss`` for two classes, ``MultiClass`` for more) for any
    labels; see the module docstring."""

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> CatBoostClassifier:
        from catboost import CatBoostClassifier as Library

        self.classes_, codes = np.unique(np.asarray(y), return_inverse=True)
        self._fit(Library(**self.catboost_params()), X, codes, sample_weight)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """One column per class of ``classes_``."""
        check_is_fitted(self, "model_")
        return np.asarray(self.model_.predict_proba(X), dtype=float)

    def predict(self, X: Any) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class CatBoostRegressor(RegressorMixin, _CatBoost):
    """CatBoost's regressor (``RMSE``); see the module docstring."""

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> CatBoostRegressor:
        from catboost import CatBoostRegressor as Library

        target = np.asarray(y, dtype=float)
        self._fit(Library(**self.catboost_params()), X, target, sample_weight)
        return self

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "model_")
        return np.asarray(self.model_.predict(X), dtype=float)
