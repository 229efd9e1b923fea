"""The adapters: fit-time parameters, probabilities, labels, weights, clipping."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import SGDClassifier
from sklearn.naive_bayes import MultinomialNB
from sklearn.svm import LinearSVC

from automl_sklearn.fit_time import (
    depth_from_factor,
    n_features_log,
    n_features_power,
    positive_kernel_components,
)
from automl_sklearn.transformers import MinorityCoalescer, NonEmptyGenericUnivariateSelect
from automl_sklearn.wrappers import (
    BalancedSampleWeights,
    DecisionProba,
    EncodedLabels,
    FitTimeParams,
    NonNegativeInput,
)


@pytest.fixture
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 16))
    y = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 1).astype(int)]
    return X, y


def test_fit_time_params_resolve_against_the_training_data(data):
    X, y = data
    model = FitTimeParams(
        RandomForestClassifier(n_estimators=5, random_state=0),
        partial(n_features_power, "max_features", 0.5),
    )
    model.fit(X, y)
    assert model.estimator_.max_features == 4  # 16 ** 0.5
    assert model.estimator.max_features == "sqrt"  # the unfitted parameter is untouched
    assert is_classifier(model) and list(model.classes_) == ["a", "b", "c"]
    clone(model)
    assert depth_from_factor(0.5, X, y) == {"max_depth": 8}
    assert n_features_log("m", 1.0, X, y) == {"m": 3}


def test_positive_kernel_components_caps_indefinite_kernels(data):
    X, y = data
    kernel = {"metric": "sigmoid", "gamma": 1.0, "coef0": 0.5}
    assert positive_kernel_components(2000, kernel, X, y)["n_components"] < len(X)


def test_decision_proba_gives_probabilities(data):
    X, y = data
    model = DecisionProba(LinearSVC(random_state=0)).fit(X, y)
    probabilities = model.predict_proba(X)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    assert (probabilities.argmax(axis=1) == np.searchsorted(model.classes_, model.predict(X))).all()
    binary = DecisionProba(SGDClassifier(random_state=0)).fit(X, y == "a")
    assert binary.predict_proba(X).shape == (90, 2)


def test_encoded_labels_round_trip(data):
    X, y = data
    model = EncodedLabels(SGDClassifier(loss="log_loss", random_state=0)).fit(X, y)
    assert set(model.predict(X)) <= {"a", "b", "c"}
    assert list(model.classes_) == ["a", "b", "c"]


def test_balanced_sample_weights_and_clipping(data):
    X, y = data
    model = BalancedSampleWeights(NonNegativeInput(MultinomialNB())).fit(X, y)
    unweighted = NonNegativeInput(MultinomialNB()).fit(X, y)
    assert not np.allclose(model.predict_proba(X), unweighted.predict_proba(X))
    assert (model.estimator_.estimator_.feature_count_ >= 0).all()


def test_minority_coalescer_merges_rare_and_unseen_values():
    X = np.array([[0.0] * 95 + [1.0] * 5]).T
    coalescer = MinorityCoalescer(minimum_fraction=0.1).fit(X)
    np.testing.assert_array_equal(coalescer.transform([[0.0], [1.0], [7.0]]).ravel(), [0, -1, -1])


def test_univariate_selection_keeps_at_least_one_feature(data):
    X, y = data
    noise = np.random.default_rng(1).normal(size=X.shape)
    selector = NonEmptyGenericUnivariateSelect(mode="fwe", param=1e-12).fit(noise, y)
    assert selector.transform(noise).shape == (90, 1)
