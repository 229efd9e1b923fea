"""CatBoost in the default spaces: registered, fitted in pipelines on real data (binary with
string labels, three classes, regression), seeded, silent on disk, shortened by a
multi-fidelity budget, saved and loaded back without trust, and in a real run."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from threadpoolctl import threadpool_limits

from automl_catboost import plugin as catboost_plugin
from automl_catboost.components import catboost_space
from automl_catboost.estimators import CatBoostClassifier, CatBoostRegressor
from automl_core.plugins import Plugins, load_plugins
from automl_core.space import BuildContext
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import import_skops, load_saved_model
from automl_engine.runner import run
from automl_spaces.pipeline_space import PipelineSpace

sklearn_plugin = pytest.importorskip("automl_sklearn.plugin")  # the spaces: not a dependency
CategoriesAsFrame = pytest.importorskip("automl_sklearn.transformers").CategoriesAsFrame

SPACES = {"classification": "autosklearn-classification", "regression": "autosklearn-regression"}
FINAL = {"classification": "classifier", "regression": "regressor"}


@pytest.fixture(autouse=True)
def _quiet_and_single_threaded() -> Iterator[None]:
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        yield


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return load_plugins(extra=[sklearn_plugin, catboost_plugin], entry_points=False)


def catboost_only(plugins: Plugins, task: str, **params: Any) -> PipelineSpace:
    """The task's default space with CatBoost as its only estimator."""
    include = {FINAL[task]: ["catboost"]}
    return plugins.create("space", SPACES[task], {"include": include, **params})


def build(space: PipelineSpace, seed: int = 0, budget: float | None = None, **values: Any):
    """The space's default pipeline, with CatBoost's hyper-parameters set to ``values``."""
    config = dict(space.default())
    prefix = f"{FINAL[space.task]}:catboost:"
    config.update({prefix + k: v for k, v in values.items()})
    return space.build(space.validate(config), BuildContext(space.task, seed, budget))


def catboost_of(pipeline: Any) -> Any:
    """The CatBoost model inside a fitted pipeline's final step."""
    return pipeline.steps[-1][1].model_


def iris():
    return load_iris(return_X_y=True, as_frame=True)


def cancer(string_labels: bool):
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return X, np.where(y == 1, "benign", "malignant") if string_labels else y.to_numpy()


def diabetes():
    return load_diabetes(return_X_y=True, as_frame=True)


# --- registration --------------------------------------------------------------------------


def test_the_components_join_both_default_spaces_through_the_installed_plugins():
    installed = load_plugins()  # the entry points, as a run loads them
    assert not [b for b in installed.broken if b.name == "catboost"]
    for task, name in SPACES.items():
        component = installed.get("component", f"{FINAL[task]}:catboost").obj
        assert component.tasks == frozenset({task}) and component.iterations is not None
        space = installed.create("space", name)
        names = [c.name for c in space.stage(FINAL[task]).components]
        assert "catboost" in names and {"lightgbm", "xgboost"} <= set(names)
        # its hyper-parameters are in the space, under the stage's prefix
        assert f"{FINAL[task]}:catboost:depth" in space.configspace
    assert "catboost.core.CatBoostClassifier" in catboost_plugin.trusted_model_types()


def test_the_space_has_catboosts_defaults():
    default = dict(catboost_space().get_default_configuration())
    assert default == {
        "iterations": 100,
        "learning_rate": 0.1,
        "depth": 6,
        "l2_leaf_reg": 3.0,
        "random_strength": 1.0,
        "subsample": 0.8,
        "rsm": 1.0,
    }


# --- fitting in pipelines ------------------------------------------------------------------


@pytest.mark.parametrize("string_labels", [False, True])
def test_binary_classification_with_any_labels(plugins, string_labels, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X, y = cancer(string_labels)
    pipeline = build(catboost_only(plugins, "classification"), iterations=30).fit(X, y)
    assert pipeline.classes_.tolist() == sorted(set(y.tolist()))
    predictions = pipeline.predict(X)
    assert predictions.shape == (len(y),) and predictions.dtype == np.asarray(y).dtype
    assert np.mean(predictions == y) > 0.95
    proba = pipeline.predict_proba(X)
    assert proba.shape == (len(y), 2) and np.allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(pipeline.classes_[proba.argmax(axis=1)], predictions)
    assert list(tmp_path.iterdir()) == []  # no catboost_info, nothing else


def test_three_classes_at_the_default_configuration(plugins, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X, y = iris()
    pipeline = build(catboost_only(plugins, "classification")).fit(X, y)
    assert catboost_of(pipeline).tree_count_ == 100
    assert pipeline.predict(X).shape == (150,) and np.mean(pipeline.predict(X) == y) > 0.95
    proba = pipeline.predict_proba(X)
    assert proba.shape == (150, 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert list(tmp_path.iterdir()) == []


def test_regression_predicts_floats(plugins, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X, y = diabetes()
    pipeline = build(catboost_only(plugins, "regression"), iterations=50).fit(X, y)
    predictions = pipeline.predict(X)
    assert predictions.shape == (len(y),) and predictions.dtype == np.float64
    assert np.corrcoef(predictions, y)[0, 1] > 0.7
    assert list(tmp_path.iterdir()) == []


def test_seeded_fits_are_identical_and_the_seed_matters(plugins):
    X, y = cancer(string_labels=False)
    space = catboost_only(plugins, "classification")
    probas = [build(space, seed, iterations=20).fit(X, y).predict_proba(X) for seed in (3, 3, 4)]
    np.testing.assert_array_equal(probas[0], probas[1])
    assert not np.allclose(probas[0], probas[2])
    fitted = build(space, 3, iterations=20).fit(X, y)
    assert catboost_of(fitted).get_params()["random_seed"] == 3
    assert catboost_of(fitted).get_params()["thread_count"] == 1


def test_catboost_runs_on_the_trials_threads(plugins):
    """CatBoost's own thread pool (which OpenMP limits do not reach) is sized to the trial's
    threads (the executor's ``threads_per_trial``), not to every core."""
    space = catboost_only(plugins, "classification")
    for threads in (1, 4):
        pipeline = space.build(space.default(), BuildContext(space.task, 0, threads=threads))
        assert pipeline.steps[-1][1].get_params()["thread_count"] == threads


def test_a_multi_fidelity_budget_shortens_the_iterations(plugins):
    X, y = diabetes()
    space = catboost_only(plugins, "regression")
    assert build(space, budget=0.25).steps[-1][1].iterations == 25  # of the default 100
    short = build(space, budget=0.01, iterations=400).fit(X, y)
    assert catboost_of(short).tree_count_ == 16  # never fewer than the minimum
    assert build(space, budget=None, iterations=400).steps[-1][1].iterations == 400


def test_sparse_features_and_class_weighting(plugins):
    """random_trees_embedding's sparse output goes to CatBoost as it is (no densify step);
    class weighting reaches it as balanced sample weights."""
    X, y = cancer(string_labels=True)
    space = catboost_only(plugins, "classification", balancing="weighting")
    config = dict(space.default())
    config = {k: v for k, v in config.items() if not k.startswith("feature_preprocessor:")}
    config["feature_preprocessor:__choice__"] = "random_trees_embedding"
    defaults = space.stage("feature_preprocessor").component("random_trees_embedding")
    for key, value in defaults.hyperparameters().get_default_configuration().items():
        config[f"feature_preprocessor:random_trees_embedding:{key}"] = value
    config["classifier:catboost:iterations"] = 20
    pipeline = space.build(space.validate(config), BuildContext(space.task, 0))
    assert "densify" not in dict(pipeline.steps)
    final = pipeline.steps[-1][1]
    assert type(final).__name__ == "BalancedSampleWeights"
    pipeline.fit(X, y)
    assert np.mean(pipeline.predict(X) == y) > 0.9


# --- saved models --------------------------------------------------------------------------


def test_saved_pipelines_name_exactly_the_declared_types(plugins, tmp_path, monkeypatch):
    """Binary, three-class and regression pipelines, at either end of every range, save
    with skops and load back, trusting what the plugins declare; each name this plugin
    declares is one a model holds (the defaults: ``tests/test_model_trust.py``)."""
    monkeypatch.chdir(tmp_path)
    skops_io = import_skops()
    low = {hp.name: hp.lower for hp in catboost_space().values()}
    high = {hp.name: hp.upper for hp in catboost_space().values()}
    named: set[str] = set()
    for task, (X, y) in [
        ("classification", cancer(string_labels=True)),
        ("classification", iris()),
        ("regression", diabetes()),
    ]:
        space = catboost_only(plugins, task)
        for values in (low, high):
            fitted = build(space, 1, 1e-9, **values).fit(X, y)
            data = skops_io.dumps(fitted)
            untrusted = skops_io.get_untrusted_types(data=data)
            named |= set(untrusted)
            loaded = skops_io.loads(data, trusted=untrusted)
            np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))
    own = named - set(sklearn_plugin.trusted_model_types())
    assert own == set(catboost_plugin.trusted_model_types())
    assert list(tmp_path.iterdir()) == []


def test_a_run_saves_a_catboost_model_that_loads_without_trust(plugins, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    recipe = parse_recipe(
        {
            "name": "catboost",
            "task": {
                "dataset": "sklearn:breast_cancer",
                "metric": "balanced_accuracy",
                "resampling": {"holdout": 0.33},
                "test_size": 0.25,
            },
            "space": {
                "name": "autosklearn-classification",
                "params": {"include": {"classifier": ["catboost"]}},
            },
            "search": {"strategy": "random"},
            "budget": {"trials": 2},
            "seed": 0,
        }
    )
    summary = run(recipe, tmp_path / "run", plugins=plugins)
    assert summary.n_trials == 2 and summary.best_config is not None
    assert summary.best_config["classifier:__choice__"] == "catboost"
    stored = load_saved_model(Path("run"))  # the installed plugins' declarations, no trust
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = stored["model"]
    finals = [e.steps[-1][1] for e in model.estimators]  # class-weighted: wrapped
    assert all(isinstance(getattr(f, "estimator_", f), CatBoostClassifier) for f in finals)
    assert np.mean(model.predict(X) == y) > 0.9
    assert summary.test_scores["balanced_accuracy"] > 0.85
    assert not (tmp_path / "catboost_info").exists()


def test_the_estimators_alone(tmp_path, monkeypatch):
    """Outside a pipeline too: NaN, labels that are not 0..k-1, sample weights."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.array([10, 20, 30])[(np.nan_to_num(X[:, 0]) > 0).astype(int) + (X[:, 1] > 1)]
    model = CatBoostClassifier(iterations=16).fit(X, y, sample_weight=np.ones(120))
    assert model.classes_.tolist() == [10, 20, 30] and set(model.predict(X)) <= {10, 20, 30}
    assert model.score(X, y) > 0.8
    target = np.nan_to_num(X[:, 0])
    regressor = CatBoostRegressor(iterations=16).fit(X, target)
    assert regressor.predict(X).shape == (120,) and regressor.score(X, target) > 0.5
    assert list(tmp_path.iterdir()) == []


# --- categorical columns -------------------------------------------------------------------


def cities(n_rows: int = 600, n_cities: int = 40):
    """A categorical column whose categories, not their order, carry the label (each city
    has its own rate of the positive class), and one numerical column of noise."""
    rng = np.random.default_rng(0)
    rate = rng.random(n_cities)
    city = rng.integers(0, n_cities, n_rows)
    X = pd.DataFrame(
        {"city": pd.Categorical([f"c{i}" for i in city]), "noise": rng.normal(size=n_rows)}
    )
    return X, (rng.random(n_rows) < rate[city]).astype(int)


def with_stages(space: PipelineSpace, encoding: str, preprocessor: str):
    """The default pipeline of ``space`` with the categorical encoding and the feature
    preprocessor replaced (at their own defaults), 30 CatBoost trees."""
    replaced = {"categorical_encoding": encoding, "feature_preprocessor": preprocessor}
    prefixes = {space.stage(stage).prefix: name for stage, name in replaced.items()}
    config = {
        key: value
        for key, value in space.default().items()
        if not key.startswith(tuple(f"{prefix}:" for prefix in prefixes))
    }
    for stage, name in replaced.items():
        prefix = space.stage(stage).prefix
        config[f"{prefix}:__choice__"] = name
        defaults = space.stage(stage).component(name).hyperparameters()
        for key, value in defaults.get_default_configuration().items():
            config[f"{prefix}:{name}:{key}"] = value
    config["classifier:catboost:iterations"] = 30
    return space.build(space.validate(config), BuildContext(space.task, 0))


@pytest.mark.parametrize("encoding", ["encoding", "no_encoding"])
def test_category_codes_reach_catboost_as_its_categorical_features(
    plugins, encoding, tmp_path, monkeypatch
):
    """With one code per categorical column and the columns kept, CatBoost splits the codes
    as categories (its ``cat_features``), also on categories first seen at prediction
    time, and the pipeline saves and loads back trusting what the plugins declare."""
    monkeypatch.chdir(tmp_path)
    X, y = cities()
    pipeline = with_stages(catboost_only(plugins, "classification"), encoding, "no_preprocessing")
    assert isinstance(pipeline.named_steps["data_preprocessor"], CategoriesAsFrame)
    pipeline.fit(X, y)
    assert catboost_of(pipeline).get_cat_feature_indices() == [0]
    unseen = X.head(3).assign(city=pd.Categorical(["never", "seen", "c1"]))
    assert pipeline.predict_proba(unseen).shape == (3, 2)
    skops_io = import_skops()
    data = skops_io.dumps(pipeline)
    trusted = set(sklearn_plugin.trusted_model_types()) | set(catboost_plugin.trusted_model_types())
    assert set(skops_io.get_untrusted_types(data=data)) <= trusted
    loaded = skops_io.loads(data, trusted=skops_io.get_untrusted_types(data=data))
    np.testing.assert_array_equal(loaded.predict_proba(X), pipeline.predict_proba(X))


@pytest.mark.parametrize(
    "encoding, preprocessor",
    [("one_hot_encoding", "no_preprocessing"), ("encoding", "polynomial")],
)
def test_catboost_gets_numbers_when_the_pipeline_does_not_keep_one_code_per_column(
    plugins, encoding, preprocessor
):
    X, y = cities()
    pipeline = with_stages(catboost_only(plugins, "classification"), encoding, preprocessor)
    assert not isinstance(pipeline.named_steps["data_preprocessor"], CategoriesAsFrame)
    assert catboost_of(pipeline.fit(X, y)).get_cat_feature_indices() == []


def test_without_categorical_columns_the_array_passes_as_it_is(plugins):
    X, y = cancer(string_labels=False)
    space = catboost_only(plugins, "classification")
    pipeline = with_stages(space, "encoding", "no_preprocessing").fit(X, y)
    columns = pipeline.named_steps["data_preprocessor"]
    assert isinstance(columns.transform(X), np.ndarray)
    assert catboost_of(pipeline).get_cat_feature_indices() == []
