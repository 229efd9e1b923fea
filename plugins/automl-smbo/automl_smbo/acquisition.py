"""Acquisition functions: how promising a candidate is, given the surrogate's prediction.

Every function returns a score to *maximise*, from the predicted mean and standard deviation
of the loss (lower loss is better) and the best loss observed so far. Expected improvement
itself is the core's (:mod:`automl_spaces.acquisition`), shared with other model-based
strategies; here it is bound to its ``xi`` like the others.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.stats import norm

from automl_spaces import acquisition as shared
from automl_spaces.acquisition import MIN_STD

#: ``acquisition(mean, std, best) -> score`` (higher is more promising).
Acquisition = Callable[[np.ndarray, np.ndarray, float], np.ndarray]


def expected_improvement(xi: float = 0.0) -> Acquisition:
    """EI: the expected amount by which a candidate's loss falls below ``best - xi``."""

    def score(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
        return shared.expected_improvement(mean, std, best, xi)

    return score


def probability_of_improvement(xi: float = 0.0) -> Acquisition:
    """PI: the probability that a candidate's loss falls below ``best - xi``."""

    def score(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
        return norm.cdf((best - xi - mean) / np.maximum(std, MIN_STD))

    return score


def lower_confidence_bound(kappa: float = 2.0) -> Acquisition:
    """LCB: an optimistic estimate ``mean - kappa * std``, negated so that higher is better."""

    def score(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
        return -(mean - kappa * std)

    return score


ACQUISITIONS = {"ei": expected_improvement, "pi": probability_of_improvement}
ACQUISITIONS_WITH_KAPPA = {"lcb": lower_confidence_bound}


def make_acquisition(name: str, xi: float = 0.0, kappa: float = 2.0) -> Acquisition:
    """The acquisition function named ``ei``, ``pi`` or ``lcb``."""
    if name in ACQUISITIONS:
        return ACQUISITIONS[name](xi)
    if name in ACQUISITIONS_WITH_KAPPA:
        return ACQUISITIONS_WITH_KAPPA[name](kappa)
    known = ", ".join([*ACQUISITIONS, *ACQUISITIONS_WITH_KAPPA])
    raise ValueError(f"unknown acquisition {name!r}; one of {known}")
