"""Landmarking: the cross-validated accuracy of six cheap learners (Pfahringer et al., 2000),
with auto-sklearn's names and models.

Each learner is scored by 5-fold cross-validation on the encoded subsample (one-hot
categoricals, imputed and standardised numeric columns; at most ``max_rows`` rows): the
feature is the mean of the five folds' accuracies. The learners are auto-sklearn's:

* ``LandmarkLDA`` -- linear discriminant analysis;
* ``LandmarkNaiveBayes`` -- Gaussian naive Bayes;
* ``LandmarkDecisionTree`` -- a fully grown CART tree;
* ``LandmarkDecisionNodeLearner`` -- a decision stump (entropy criterion) on the best column;
* ``LandmarkRandomNodeLearner`` -- a stump on one column drawn at random;
* ``Landmark1NN`` -- one nearest neighbour.

One deliberate difference: the folds are stratified and shuffled with ``seed`` (unstratified
folds when a class has fewer than 5 rows). auto-sklearn means to stratify, but its test
(``type(y) in ("binary", "multiclass")``) is never true, so it uses plain ``KFold(5)`` on rows
it shuffled with seed 42. Values therefore differ from auto-sklearn's by fold noise only.
Classification only; a learner that cannot be fitted (one class, a singular matrix) gives NaN
and a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier

from automl_metafeatures.data import DataView, helper
from automl_metafeatures.registry import Feature

GROUP = "landmarking"
FOLDS = 5
_CLASSIFICATION = ("classification",)


@helper
def _cv_folds(view: DataView) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (train, test) positions shared by all six learners, so they see the same folds."""
    X, codes = view.sample_classes()
    n = codes.size
    if np.unique(codes).size < 2:
        raise ValueError("landmarking needs at least two classes")
    k = min(FOLDS, n)
    if np.bincount(codes).min() >= k:
        splitter: KFold | StratifiedKFold = StratifiedKFold(k, shuffle=True, random_state=view.seed)
    else:
        splitter = KFold(k, shuffle=True, random_state=view.seed)
    return list(splitter.split(X, codes))


def _landmark(make: Callable[[int], Any]) -> Callable[[DataView], float]:
    def score(view: DataView) -> float:
        X, codes = view.sample_classes()
        accuracies = []
        for train, test in _cv_folds(view):
            model = make(view.seed)
            model.fit(X[train], codes[train])
            accuracies.append(float(np.mean(model.predict(X[test]) == codes[test])))
        return float(np.mean(accuracies))

    return score


FEATURES: tuple[Feature, ...] = (
    Feature("Landmark1NN", GROUP, _landmark(lambda seed: KNeighborsClassifier(1)), _CLASSIFICATION),
    Feature(
        "LandmarkDecisionNodeLearner",
        GROUP,
        _landmark(
            lambda seed: DecisionTreeClassifier(criterion="entropy", max_depth=1, random_state=seed)
        ),
        _CLASSIFICATION,
    ),
    Feature(
        "LandmarkDecisionTree",
        GROUP,
        _landmark(lambda seed: DecisionTreeClassifier(random_state=seed)),
        _CLASSIFICATION,
    ),
    Feature(
        "LandmarkLDA", GROUP, _landmark(lambda seed: LinearDiscriminantAnalysis()), _CLASSIFICATION
    ),
    Feature("LandmarkNaiveBayes", GROUP, _landmark(lambda seed: GaussianNB()), _CLASSIFICATION),
    Feature(
        "LandmarkRandomNodeLearner",
        GROUP,
        _landmark(
            lambda seed: DecisionTreeClassifier(
                criterion="entropy", max_depth=1, max_features=1, random_state=seed
            )
        ),
        _CLASSIFICATION,
    ),
)
