"""Parameters auto-sklearn derives from the training data, resolved when fitting.

Each resolver takes its settings first and ``(X, y)`` last, and returns the parameters to set;
components bind the settings with ``functools.partial`` and hand the result to
:class:`~automl_sklearn.wrappers.FitTimeParams` (module-level functions keep pipelines
picklable).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from sklearn.gaussian_process.kernels import RBF
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.preprocessing import KernelCenterer

from automl_sklearn.wrappers import FitTimeParams


def n_features_power(name: str, exponent: float, X: Any, y: Any) -> dict[str, Any]:
    """``name = int(n_features ** exponent)`` (at least 1): auto-sklearn's ``max_features`` for
    classification forests, where the default 0.5 gives sqrt(n_features)."""
    return {name: max(1, int(X.shape[1] ** float(exponent)))}


def n_features_log(name: str, factor: float, X: Any, y: Any) -> dict[str, Any]:
    """``name = int(factor * (ln(n_features) + 1))`` kept within [1, n_features / 2]:
    auto-sklearn's ``max_features`` for the regression extra-trees feature selector."""
    n_features = X.shape[1]
    value = int(float(factor) * (np.log(n_features) + 1))
    return {name: max(1, min(int(n_features / 2), value))}


def depth_from_factor(factor: float, X: Any, y: Any) -> dict[str, Any]:
    """``max_depth = round(factor * n_features)`` (at least 1): auto-sklearn's
    ``max_depth_factor`` for decision trees."""
    return {"max_depth": max(1, int(np.round(float(factor) * X.shape[1])))}


def at_most_n_features(name: str, value: int, X: Any, y: Any) -> dict[str, Any]:
    """``name = min(value, n_features)``: a number of clusters or components that cannot
    exceed the number of features."""
    return {name: max(1, min(int(value), X.shape[1]))}


def at_most_n_samples(name: str, value: int, X: Any, y: Any) -> dict[str, Any]:
    """``name = min(value, n_samples)``: e.g. a number of neighbours on a small data set."""
    return {name: max(1, min(int(value), X.shape[0]))}


def rbf_kernel(length_scale_bounds: tuple[float, float], X: Any, y: Any) -> dict[str, Any]:
    """An anisotropic RBF kernel (one length scale per feature, within the bounds): the
    Gaussian process kernel auto-sklearn tunes through ``thetaL``/``thetaU``."""
    n_features = X.shape[1]
    kernel = RBF(length_scale=[1.0] * n_features, length_scale_bounds=length_scale_bounds)
    return {"kernel": kernel}


def validation_size(fraction: float, X: Any, y: Any) -> dict[str, Any]:
    """``validation_fraction``, raised to one sample per class when the fraction would leave
    fewer (auto-sklearn's rule for early stopping of gradient boosting classifiers)."""
    n_classes = len(np.unique(y))
    if float(fraction) * X.shape[0] < n_classes:
        return {"validation_fraction": n_classes}
    return {"validation_fraction": float(fraction)}


def positive_kernel_components(
    n_components: int, kernel: dict[str, Any], X: Any, y: Any
) -> dict[str, Any]:
    """``n_components`` capped at the number of positive eigenvalues of the centred kernel
    matrix. Sigmoid and polynomial kernels need not be positive semi-definite, and
    scikit-learn's KernelPCA refuses to keep components with clearly negative eigenvalues
    (auto-sklearn's pipeline fails there); the positive part of the spectrum is kept."""
    gram = KernelCenterer().fit_transform(pairwise_kernels(X, filter_params=True, **kernel))
    positive = int(np.sum(np.linalg.eigvalsh(gram) > 0))
    return {"n_components": max(1, min(int(n_components), positive))}


def resolved(estimator: Any, resolver: Any, *settings: Any) -> FitTimeParams:
    """``estimator`` with ``resolver(*settings, X, y)`` applied when it is fitted."""
    return FitTimeParams(estimator, partial(resolver, *settings))
