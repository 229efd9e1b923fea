"""Assembled pipelines: mixed data, sampled configurations, balancing, sparse data."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.naive_bayes import GaussianNB

from automl_core.space import BuildContext
from automl_sklearn.plugin import COMPONENTS
from automl_sklearn.spaces import classification_space
from automl_sklearn.wrappers import BalancedSampleWeights

N_SAMPLED = 25


def test_default_pipeline_handles_mixed_dtypes_missing_values_and_unseen_categories(
    classification, mixed_frame
):
    X, y = mixed_frame(300, 0)
    X_new, _ = mixed_frame(40, 1)
    X_new.loc[:4, "colour"] = "purple"  # unseen object category
    X_new["size"] = X_new["size"].cat.add_categories(["XL"])
    X_new.loc[5:9, "size"] = "XL"  # unseen category of a category column
    model = classification.build(classification.default(), BuildContext("classification", 0))
    model.fit(X.iloc[:200], y[:200])
    assert model.score(X.iloc[200:], y[200:]) > 0.75
    assert set(model.predict(X_new)) <= {"yes", "no"}
    assert list(model.classes_) == ["no", "yes"]


@pytest.mark.parametrize("columns", [["number", "count"], ["colour", "size", "flag"]])
def test_pipeline_works_without_categorical_or_numerical_columns(
    columns, classification, regression, mixed_frame, build_default
):
    X, y = mixed_frame(120, 2)
    model = build_default(classification, "classifier", "lda")
    assert len(model.fit(X[columns], y).predict(X[columns])) == 120
    model = build_default(regression, "regressor", "ard_regression")
    assert len(model.fit(X[columns], np.arange(120.0)).predict(X[columns])) == 120


def test_pipeline_accepts_a_numpy_array(regression, diabetes, build_default):
    X_train, X_test, y_train, _ = diabetes
    model = build_default(regression, "regressor", "ard_regression")
    assert model.fit(X_train.to_numpy(), y_train).predict(X_test.to_numpy()).shape == (150,)


def _sampled(space, seed: int) -> list[dict]:
    return space.sample(np.random.default_rng(seed), N_SAMPLED)


@pytest.fixture(scope="module")
def sampled_classification(classification) -> list[dict]:
    return _sampled(classification, 2024)


@pytest.fixture(scope="module")
def sampled_regression(regression) -> list[dict]:
    return _sampled(regression, 2024)


def _small_mixed(cancer_or_diabetes) -> tuple[pd.DataFrame, pd.DataFrame, object, object]:
    """120 training rows with a categorical column added (exercises the categorical stages)."""
    X_train, X_test, y_train, y_test = cancer_or_diabetes
    X_train, X_test = X_train.iloc[:120, :12].copy(), X_test.iloc[:60, :12].copy()
    for frame in (X_train, X_test):
        frame["group"] = np.where(frame.iloc[:, 0] > frame.iloc[:, 0].median(), "high", "low")
    return X_train, X_test, y_train[:120], y_test[:60]


@pytest.mark.parametrize("index", range(N_SAMPLED))
def test_sampled_classification_pipeline_fits(
    index, classification, sampled_classification, cancer
):
    config = classification.validate(sampled_classification[index])
    X_train, X_test, y_train, _ = _small_mixed(cancer)
    model = classification.build(config, BuildContext("classification", index))
    predictions = model.fit(X_train, y_train).predict(X_test)
    assert predictions.shape == (60,), config
    assert np.isfinite(model.predict_proba(X_test)).all(), config


@pytest.mark.parametrize("index", range(N_SAMPLED))
def test_sampled_regression_pipeline_fits(index, regression, sampled_regression, diabetes):
    config = regression.validate(sampled_regression[index])
    X_train, X_test, y_train, _ = _small_mixed(diabetes)
    model = regression.build(config, BuildContext("regression", index))
    assert model.fit(X_train, y_train).predict(X_test).shape == (60,), config


@pytest.mark.parametrize(
    "classifier, mechanism",
    [
        ("random_forest", "class_weight"),
        ("liblinear_svc", "class_weight"),
        ("gaussian_nb", "sample_weight"),
        ("xgboost", "sample_weight"),
        ("lda", None),  # takes no weights: unchanged, as in auto-sklearn
    ],
)
def test_weighting_balances_classes(classifier, mechanism, classification, cancer):
    X, X_test, y, _ = cancer
    keep = (y == 1).to_numpy() | (np.arange(len(y)) % 6 == 0)  # 15 malignant, 129 benign
    X, y = X[keep], y[keep]
    space = classification.restrict(include={"classifier": [classifier]})
    fitted = {}
    for strategy in ("none", "weighting"):
        config = {**space.default(), "balancing:strategy": strategy}
        fitted[strategy] = space.build(config, BuildContext("classification", 0)).fit(X, y)
    weighted = fitted["weighting"].named_steps["classifier"]
    assert ("balanced" in weighted.get_params().values()) == (mechanism == "class_weight")
    assert isinstance(weighted, BalancedSampleWeights) == (mechanism == "sample_weight")
    none, weighting = (fitted[s].predict_proba(X_test)[:, 0] for s in ("none", "weighting"))
    if mechanism is None:
        np.testing.assert_allclose(weighting, none)
    else:  # the minority class (0) gains probability
        assert weighting.mean() > none.mean()


def test_sparse_features_are_densified_for_dense_only_estimators(classification, cancer):
    # random_trees_embedding + gaussian_nb is forbidden in the space; assembled anyway it works.
    space = classification.restrict(include={"classifier": ["gaussian_nb"]})
    choices = space.choices(space.default())
    embedding = classification.stage("feature_preprocessor").component("random_trees_embedding")
    defaults = dict(embedding.hyperparameters().get_default_configuration())
    choices["feature_preprocessor"] = (embedding, defaults)
    model = space.assemble(choices, BuildContext("classification", 0))
    assert "densify" in model.named_steps
    X_train, X_test, y_train, y_test = cancer
    assert model.fit(X_train, y_train).score(X_test, y_test) > 0.8
    assert isinstance(model.named_steps["classifier"], GaussianNB)


def test_fitted_pipelines_clone_and_pickle(classification, mixed_frame):
    X, y = mixed_frame(150, 3)
    config = {**classification.default(), "classifier:__choice__": "xgboost"}
    config = {k: v for k, v in config.items() if not k.startswith("classifier:random_forest")}
    config = classification.validate(
        {**config, **{f"classifier:xgboost:{k}": v for k, v in _xgboost_defaults().items()}}
    )
    model = classification.build(config, BuildContext("classification", 0)).fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    again = clone(model).fit(X, y)
    np.testing.assert_allclose(again.predict_proba(X), model.predict_proba(X))


def _xgboost_defaults() -> dict:
    space = classification_space(list(COMPONENTS), include={"classifier": ["xgboost"]})
    prefix = "classifier:xgboost:"
    return {k[len(prefix) :]: v for k, v in space.default().items() if k.startswith(prefix)}


@pytest.mark.parametrize(
    ("stage", "name"),
    [
        ("classifier", "random_forest"),
        ("classifier", "extra_trees"),
        ("classifier", "lightgbm"),
        ("classifier", "xgboost"),
        ("feature_preprocessor", "extra_trees_preproc_for_classification"),
        ("feature_preprocessor", "random_trees_embedding"),
    ],
)
def test_components_with_a_thread_pool_use_the_trials_threads(classification, stage, name):
    """A trial given three threads (the executor's ``threads_per_trial``) builds its forests
    and boosters with three, not one and not every core."""
    only = classification.restrict(include={stage: [name]})
    for threads in (1, 3):
        pipeline = only.build(only.default(), BuildContext("classification", 0, threads=threads))
        pools = {
            key: value
            for key, value in pipeline.get_params(deep=True).items()
            if key.endswith("n_jobs") and value is not None
        }
        assert pools and set(pools.values()) == {threads}, pools
