"""The few transformers and functions scikit-learn does not have in the form the space needs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.feature_selection import GenericUnivariateSelect, SelectPercentile, chi2
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OrdinalEncoder
from sklearn.utils.validation import check_is_fitted

from automl_sklearn.wrappers import clip_negative

#: The category that stands for a missing value (constant imputation of categorical columns).
MISSING = "__missing__"
#: The code of categories that are unseen at fit time or coalesced as too rare.
OTHER = -1


def as_category_strings(X: Any) -> np.ndarray:
    """Categorical columns (object, category, bool, string dtypes...) as an object array of
    strings, with missing values replaced by the :data:`MISSING` category."""
    frame = pd.DataFrame(X).astype(object)
    return frame.where(frame.notna(), MISSING).map(str).to_numpy(dtype=object)


def categorical_codes() -> Pipeline:
    """Missing values become a category of their own, then every category an integer code
    (:data:`OTHER` for categories first seen at prediction time).

    What auto-sklearn's input validator and categorical imputation do before its categorical
    stages, so that coalescence and encoding work on numbers, and ``no_encoding`` leaves
    ordinal codes a model can use.
    """
    return Pipeline(
        [
            ("impute", FunctionTransformer(as_category_strings)),
            (
                "codes",
                OrdinalEncoder(
                    handle_unknown="use_encoded_value", unknown_value=OTHER, dtype=np.float64
                ),
            ),
        ]
    )


class MinorityCoalescer(TransformerMixin, BaseEstimator):
    """Replaces, per column, the values rarer than ``minimum_fraction`` of the training rows
    (and values never seen in training) by :data:`OTHER`."""

    def __init__(self, minimum_fraction: float = 0.01) -> None:
        self.minimum_fraction = minimum_fraction

    def fit(self, X: Any, y: Any = None) -> MinorityCoalescer:
        X = np.asarray(X)
        self.kept_ = []
        for column in X.T:
            values, counts = np.unique(column, return_counts=True)
            self.kept_.append(values[counts / len(column) >= self.minimum_fraction])
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "kept_")
        X = np.array(X, dtype=np.float64)
        for j, kept in enumerate(self.kept_):
            X[~np.isin(X[:, j], kept), j] = OTHER
        return X


class CategoriesAsFrame(TransformerMixin, BaseEstimator):
    """The data preprocessor's array, with its categorical columns marked as categories.

    For an estimator that splits on categories itself (CatBoost's ordered target statistics)
    rather than on one-hot indicators or on codes read as numbers. ``columns`` is the
    assembler's column transformer, whose branch named ``categorical`` yields one integer
    code per categorical column. This fits a clone of it and answers with a DataFrame whose
    code columns have the pandas ``category`` dtype (integer categories) and whose other
    columns are floats: the dtype is how the estimator learns which columns are categories,
    since its ``build`` never sees the data. With no categorical column the array is returned
    as it is.
    """

    def __init__(self, columns: Any) -> None:
        self.columns = columns

    def fit(self, X: Any, y: Any = None) -> CategoriesAsFrame:
        self.fit_transform(X, y)
        return self

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        self.columns_ = clone(self.columns)
        encoded = self.columns_.fit_transform(X, y)
        codes = self.columns_.output_indices_.get("categorical", slice(0, 0))
        self.categorical_ = np.arange(encoded.shape[1])[codes]
        return self._frame(encoded)

    def transform(self, X: Any) -> Any:
        check_is_fitted(self, "columns_")
        return self._frame(self.columns_.transform(X))

    def _frame(self, encoded: np.ndarray) -> Any:
        if not len(self.categorical_):
            return encoded
        frame = pd.DataFrame(encoded, columns=[str(i) for i in range(encoded.shape[1])])
        for i in self.categorical_:
            frame[str(i)] = frame[str(i)].astype(np.int64).astype("category")
        return frame


def chi2_nonnegative(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """chi2 scores of ``X`` with negative values clipped to zero (chi2 needs counts; this is
    what auto-sklearn's chi2 selectors do). Only the scores see the clipped values: the
    selected columns pass through unchanged."""
    return chi2(clip_negative(X), y)


class _KeepBestIfEmpty:
    """Keeps the best-scoring feature when a univariate filter would select none, so the next
    step always gets at least one column (auto-sklearn fails the pipeline instead)."""

    def _get_support_mask(self) -> np.ndarray:
        mask = super()._get_support_mask()  # type: ignore[misc]
        if not mask.any():
            scores = np.nan_to_num(np.asarray(self.scores_, dtype=float), nan=-np.inf)  # type: ignore[attr-defined]
            mask = mask.copy()
            mask[int(np.argmax(scores))] = True
        return mask


class NonEmptySelectPercentile(_KeepBestIfEmpty, SelectPercentile):
    """SelectPercentile that never selects zero features."""


class NonEmptyGenericUnivariateSelect(_KeepBestIfEmpty, GenericUnivariateSelect):
    """GenericUnivariateSelect that never selects zero features."""


def to_dense(X: Any) -> Any:
    """``X`` as a dense array if it is sparse, else unchanged."""
    return X.toarray() if sparse.issparse(X) else X


def densifier() -> FunctionTransformer:
    """A step that densifies sparse data for estimators that accept only dense input."""
    return FunctionTransformer(to_dense, accept_sparse=True)
