"""Thin meta-estimators that adapt an estimator to what the pipeline needs.

Each wraps one estimator and follows scikit-learn's conventions: the constructor only stores
its arguments, ``fit`` works on a clone kept in ``estimator_``, so a wrapper is clone-able and
picklable (resolvers are module-level functions or ``functools.partial`` of them). Predictions
and transforms are forwarded to ``estimator_``, and only the methods the wrapped estimator has
are offered, so a wrapped classifier still looks like a classifier (its tags are the wrapped
estimator's).

* :class:`FitTimeParams` sets parameters that depend on the data (auto-sklearn's
  ``max_features`` exponent, ``max_depth_factor``...) just before fitting;
* :class:`DecisionProba` gives classifiers that only have ``decision_function`` a
  ``predict_proba`` (softmax of the scores, as auto-sklearn does), so every classifier in the
  space can be scored on probabilities and ensembled;
* :class:`NonNegativeInput` clips negative features to zero (MultinomialNB needs counts);
* :class:`EncodedLabels` fits on integer labels and answers with the original ones (XGBoost
  accepts only ``0..n_classes-1``);
* :class:`BalancedSampleWeights` fits with balanced per-sample weights (class balancing for
  estimators without ``class_weight``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import sparse
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.metrics import accuracy_score, r2_score
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import get_tags
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

#: ``resolve(X, y)`` returns the parameters to set on the estimator before fitting it.
Resolver = Callable[[Any, Any], dict[str, Any]]


def _wrapped_has(method: str) -> Callable[[Any], bool]:
    def check(self: Wrapper) -> bool:
        return hasattr(self.estimator, method)

    return check


class Wrapper(MetaEstimatorMixin, BaseEstimator):
    """Fits a clone of ``estimator`` and forwards predictions and transforms to it.

    Subclasses change one thing through the hooks :meth:`_prepare` (the clone before fitting)
    and :meth:`_input` (the features the wrapped estimator sees).
    """

    def __init__(self, estimator: Any) -> None:
        self.estimator = estimator

    def fit(self, X: Any, y: Any = None, **fit_params: Any) -> Wrapper:
        estimator = self._prepare(clone(self.estimator), X, y)
        estimator.fit(self._input(X), y, **fit_params)
        self.estimator_ = estimator
        return self

    def _prepare(self, estimator: Any, X: Any, y: Any) -> Any:
        return estimator

    def _input(self, X: Any) -> Any:
        return X

    def _call(self, method: str, X: Any) -> Any:
        check_is_fitted(self, "estimator_")
        return getattr(self.estimator_, method)(self._input(X))

    @available_if(_wrapped_has("predict"))
    def predict(self, X: Any) -> np.ndarray:
        return self._call("predict", X)

    @available_if(_wrapped_has("predict_proba"))
    def predict_proba(self, X: Any) -> np.ndarray:
        return self._call("predict_proba", X)

    @available_if(_wrapped_has("predict_log_proba"))
    def predict_log_proba(self, X: Any) -> np.ndarray:
        return self._call("predict_log_proba", X)

    @available_if(_wrapped_has("decision_function"))
    def decision_function(self, X: Any) -> np.ndarray:
        return self._call("decision_function", X)

    @available_if(_wrapped_has("transform"))
    def transform(self, X: Any) -> Any:
        return self._call("transform", X)

    @available_if(_wrapped_has("score"))
    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy for a classifier, R^2 for a regressor (of this wrapper's predictions)."""
        if get_tags(self).estimator_type == "classifier":
            return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))
        return float(r2_score(y, self.predict(X), sample_weight=sample_weight))

    @property
    def classes_(self) -> np.ndarray:
        return self.estimator_.classes_

    def __sklearn_tags__(self):
        return copy.deepcopy(get_tags(self.estimator))


class FitTimeParams(Wrapper):
    """Sets ``resolve(X, y)`` on the estimator just before fitting it.

    For parameters auto-sklearn expresses relative to the data: an exponent of the number of
    features, a depth per feature, a count that must not exceed the number of samples.
    Nested names (``estimator__max_features``) reach inside meta-estimators.
    """

    def __init__(self, estimator: Any, resolve: Resolver) -> None:
        self.estimator = estimator
        self.resolve = resolve

    def _prepare(self, estimator: Any, X: Any, y: Any) -> Any:
        return estimator.set_params(**self.resolve(X, y))


class DecisionProba(Wrapper):
    """Adds ``predict_proba``: the logistic (binary) or softmax (multi-class) of the decision
    function. These are scores, not calibrated probabilities, exactly as in auto-sklearn."""

    def predict_proba(self, X: Any) -> np.ndarray:
        scores = np.asarray(self._call("decision_function", X), dtype=float)
        if scores.ndim == 1:
            positive = expit(scores)
            return np.column_stack([1.0 - positive, positive])
        return softmax(scores, axis=1)


def clip_negative(X: Any) -> Any:
    """``X`` with its negative entries set to zero (dense or sparse; the input is not changed)."""
    if sparse.issparse(X):
        return X.maximum(0)
    return np.maximum(np.asarray(X, dtype=float), 0.0)


class NonNegativeInput(Wrapper):
    """Clips negative feature values to zero before the estimator sees them, in ``fit`` and at
    prediction time (auto-sklearn does the same for MultinomialNB and the chi2 selectors)."""

    def _input(self, X: Any) -> Any:
        return clip_negative(X)


class EncodedLabels(Wrapper):
    """Fits on labels encoded as ``0..n_classes-1`` and predicts the original labels."""

    def fit(self, X: Any, y: Any, **fit_params: Any) -> EncodedLabels:
        self.encoder_ = LabelEncoder().fit(y)
        return super().fit(X, self.encoder_.transform(y), **fit_params)

    @available_if(_wrapped_has("predict"))
    def predict(self, X: Any) -> np.ndarray:
        return self.encoder_.inverse_transform(self._call("predict", X))

    @property
    def classes_(self) -> np.ndarray:
        return self.encoder_.classes_


class BalancedSampleWeights(Wrapper):
    """Fits with ``sample_weight`` = n_samples / (n_classes * count of the sample's class), so
    every class weighs the same in total (and the weights average to 1)."""

    def fit(self, X: Any, y: Any, **fit_params: Any) -> BalancedSampleWeights:
        weights = compute_sample_weight("balanced", y)
        return super().fit(X, y, sample_weight=weights, **fit_params)
