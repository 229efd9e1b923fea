"""Every component at its default hyper-parameters builds and does its job on real data."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.dummy import DummyClassifier
from sklearn.preprocessing import StandardScaler

from automl_core.space import BuildContext
from automl_sklearn.classifiers import CLASSIFIERS
from automl_sklearn.data_preprocessing import (
    CATEGORICAL_ENCODINGS,
    CATEGORY_COALESCENCES,
    IMPUTATIONS,
    RESCALINGS,
)
from automl_sklearn.feature_preprocessors import FEATURE_PREPROCESSORS
from automl_sklearn.regressors import REGRESSORS
from automl_sklearn.transformers import categorical_codes


def _default_params(component) -> dict:
    return dict(component.hyperparameters().get_default_configuration())


@pytest.mark.parametrize("name", CLASSIFIERS.names())
def test_classifier_default_beats_the_majority_class(name, classification, cancer, build_default):
    X_train, X_test, y_train, y_test = cancer
    baseline = DummyClassifier().fit(X_train, y_train).score(X_test, y_test)
    model = build_default(classification, "classifier", name).fit(X_train, y_train)
    assert model.score(X_test, y_test) > baseline + 0.1
    probabilities = model.predict_proba(X_test)
    assert probabilities.shape == (len(X_test), 2)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", REGRESSORS.names())
def test_regressor_default_beats_a_constant(name, regression, diabetes, build_default):
    X_train, X_test, y_train, y_test = diabetes
    model = build_default(regression, "regressor", name).fit(X_train, y_train)
    predictions = model.predict(X_test)
    assert predictions.shape == (len(X_test),) and np.isfinite(predictions).all()
    # A constant prediction has no correlation with the target.
    assert np.corrcoef(predictions, y_test)[0, 1] > 0.3


#: Feature preprocessors whose default may rightly keep every feature as it is: none, and the
#: selectors by a test or a linear model's weights, when every feature passes.
MAY_KEEP_EVERY_FEATURE = {
    "no_preprocessing",
    "select_rates_classification",
    "select_rates_regression",
    "liblinear_svc_preprocessor",
}


def _unchanged(X: np.ndarray, Xt: np.ndarray) -> bool:
    X = np.asarray(X, dtype=float)
    return Xt.shape == X.shape and bool(np.allclose(Xt, X, equal_nan=True))


@pytest.mark.parametrize("component", FEATURE_PREPROCESSORS, ids=FEATURE_PREPROCESSORS.names())
def test_feature_preprocessor_default_transforms(component, cancer, diabetes):
    task = "classification" if "classification" in component.tasks else "regression"
    X, _, y, _ = cancer if task == "classification" else diabetes
    X = StandardScaler().fit_transform(X)
    transformer = component.build(_default_params(component), BuildContext(task, 0))
    clone(transformer)
    Xt = transformer.fit(X, y).transform(X)
    Xt = Xt.toarray() if hasattr(Xt, "toarray") else np.asarray(Xt)
    assert Xt.shape[0] == X.shape[0] and Xt.shape[1] >= 1
    assert np.isfinite(Xt).all()
    if component.name not in MAY_KEEP_EVERY_FEATURE:  # an identity would pass the above
        assert not _unchanged(X, Xt), f"{component.name} returned its input"


@pytest.mark.parametrize("component", [*IMPUTATIONS, *RESCALINGS], ids=lambda c: c.name)
def test_numerical_stage_default_transforms(component, diabetes):
    X = diabetes[0].to_numpy().copy()
    X[::7, 2] = np.nan
    if component.stage == "rescaling":
        X = np.nan_to_num(X)
    transformer = component.build(_default_params(component), BuildContext("regression", 0))
    Xt = transformer.fit_transform(X)
    assert Xt.shape == X.shape and np.isfinite(Xt).all()
    if component.name != "none":  # imputation fills the holes; a rescaling rescales
        assert not _unchanged(X, Xt), f"{component.name} returned its input"


@pytest.mark.parametrize(
    "component", [*CATEGORY_COALESCENCES, *CATEGORICAL_ENCODINGS], ids=lambda c: c.name
)
def test_categorical_stage_default_transforms_codes(component, mixed_frame):
    X, _ = mixed_frame(200, 0)
    codes = categorical_codes().fit_transform(X[["colour", "size", "flag"]])
    transformer = component.build(_default_params(component), BuildContext("classification", 0))
    Xt = np.asarray(transformer.fit_transform(codes), dtype=float)
    assert Xt.shape[0] == 200 and np.isfinite(Xt).all()


def test_the_coalescer_merges_a_rare_category_and_one_hot_gives_a_column_each():
    """What the categorical stages do, beyond keeping the rows finite: a category of 0.5 % of
    the rows (below the coalescer's default 1 %) becomes the shared "rare" code; one-hot
    gives a 0/1 column per category; the no-op stages return their input."""
    codes = np.array([[0.0] * 99 + [1.0] * 100 + [2.0]]).T
    built = {
        c.name: c.build(_default_params(c), BuildContext("classification", 0))
        for c in [*CATEGORY_COALESCENCES, *CATEGORICAL_ENCODINGS]
    }
    coalesced = np.asarray(built["minority_coalescer"].fit_transform(codes), dtype=float)
    assert coalesced[-1, 0] not in (0.0, 1.0, 2.0) and (coalesced[:-1] == codes[:-1]).all()
    one_hot = np.asarray(built["one_hot_encoding"].fit_transform(codes), dtype=float)
    assert one_hot.shape == (200, 3) and (one_hot.sum(axis=1) == 1).all()
    for identity in ("no_coalescense", "no_encoding"):
        assert (np.asarray(built[identity].fit_transform(codes), dtype=float) == codes).all()
