"""AutoMLClassifier and AutoMLRegressor: scikit-learn's estimator checks, the recipe each fit
runs (named, from a file, a mapping; the keyword arguments written over it), the fitted
attributes, and the named recipes they default to."""

from __future__ import annotations

import json
import os
import tempfile
import time
import unittest
from pathlib import Path
from typing import Any, ClassVar

import joblib
import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks
from toy_plugin import DoublesPlugin, ToyPlugin, toy_recipe

import automl_core
from automl_core.contracts import Ensembler
from automl_core.errors import AutoMLError, DatasetError, RecipeError
from automl_core.hookspecs import hookimpl
from automl_core.plugins import load_plugins
from automl_engine.compose import prepare
from automl_engine.dataset import Dataset
from automl_engine.estimator import (
    AutoMLClassifier,
    AutoMLRegressor,
    NoModelError,
    split_time_budget,
)
from automl_engine.history import RunHistory
from automl_engine.model_trust import declared_model_types
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE, RECIPE_FILE, load_saved_model
from automl_engine.runner import run
from automl_engine.tasks import dataset_fingerprint


def fast_recipe(task: str = "classification") -> dict[str, Any]:
    """Two cheap models of auto-sklearn's space, random search, in this process: a fit takes
    a fraction of a second, so scikit-learn's checks (about a hundred fits) stay quick."""
    stage, models = (
        ("classifier", ["lda", "decision_tree"])
        if task == "classification"
        else ("regressor", ["ard_regression", "decision_tree"])
    )
    return {
        "name": "fast",
        "space": {
            "name": f"autosklearn-{task}",
            "params": {"include": {stage: models, "feature_preprocessor": ["no_preprocessing"]}},
        },
        "search": "random",
        "budget": {"trials": 2},
        "executor": "sequential",
    }


def fast_classifier(**params: Any) -> AutoMLClassifier:
    return AutoMLClassifier(
        **{"recipe": fast_recipe(), "max_trials": 2, "ensemble_size": 1, **params}
    )


def fast_regressor(**params: Any) -> AutoMLRegressor:
    return AutoMLRegressor(
        **{"recipe": fast_recipe("regression"), "max_trials": 2, "ensemble_size": 1, **params}
    )


@pytest.fixture(scope="module")
def iris() -> tuple[pd.DataFrame, np.ndarray]:
    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, np.asarray(y)


@pytest.fixture(scope="module")
def fitted(iris) -> AutoMLClassifier:
    """One classifier fitted on iris, shared by the tests that only read it."""
    X, y = iris
    return fast_classifier(max_trials=4).fit(X, y)


# ---------------------------------------------------------------------------------------------
# scikit-learn's estimator checks
# ---------------------------------------------------------------------------------------------

#: Checks scikit-learn skips (or we expect to fail), with the reason; also in docs/estimator.md.
#: None is expected to fail. One is skipped by scikit-learn itself:
SKIPPED_CHECKS = {
    "check_array_api_input": (
        "scikit-learn skips it unless SCIPY_ARRAY_API=1 is set; the estimators do not claim "
        "array API support (their pipelines convert to pandas and NumPy)"
    ),
}
EXPECTED_FAILED_CHECKS: dict[str, str] = {}


@parametrize_with_checks(
    [fast_classifier(), fast_regressor()],
    expected_failed_checks=lambda estimator: EXPECTED_FAILED_CHECKS,
)
def test_scikit_learn_estimator_checks(estimator, check):
    """Every check passes; a check that skips itself must be one listed in SKIPPED_CHECKS."""
    name = getattr(check, "func", check).__name__
    try:
        check(estimator)
    except unittest.SkipTest:
        assert name in SKIPPED_CHECKS, f"{name} skipped without a reason listed here"
        raise


def test_tags_say_nan_text_and_categorical_input_are_accepted():
    tags = AutoMLClassifier().__sklearn_tags__()
    assert tags.input_tags.allow_nan and tags.input_tags.string and tags.input_tags.categorical
    assert tags.non_deterministic  # a time budget decides how many trials run
    assert not fast_classifier().__sklearn_tags__().non_deterministic


# ---------------------------------------------------------------------------------------------
# In scikit-learn's tools
# ---------------------------------------------------------------------------------------------


def test_in_a_pipeline_and_cross_validation(iris):
    X, y = iris
    scores = cross_val_score(make_pipeline(StandardScaler(), fast_classifier()), X, y, cv=2)
    assert scores.shape == (2,) and scores.min() > 0.8


def test_clone_get_and_set_params():
    estimator = fast_classifier(seed=4, metric="accuracy")
    params = estimator.get_params()
    assert params["seed"] == 4 and params["metric"] == "accuracy"
    assert params["time_budget"] == 300 and params["ensemble_size"] == 1
    copy = clone(estimator)
    assert copy is not estimator and copy.get_params() == params
    assert copy.set_params(seed=9, time_budget=20) is copy
    assert copy.get_params()["seed"] == 9 and estimator.get_params()["seed"] == 4
    assert AutoMLRegressor().get_params()["metric"] == "r2"
    assert AutoMLClassifier().get_params()["metric"] == "balanced_accuracy"


def test_the_package_exports_the_estimators_lazily():
    assert automl_core.AutoMLClassifier is AutoMLClassifier
    assert automl_core.AutoMLRegressor is AutoMLRegressor
    with pytest.raises(AttributeError, match="no attribute 'AutoMLNothing'"):
        automl_core.AutoMLNothing  # noqa: B018


# ---------------------------------------------------------------------------------------------
# Fitted attributes
# ---------------------------------------------------------------------------------------------


def test_fitted_attributes(fitted, iris):
    X, y = iris
    assert list(fitted.classes_) == [0, 1, 2]
    assert fitted.n_features_in_ == 4
    assert list(fitted.feature_names_in_) == list(X.columns)
    assert fitted.run_dir_ is None  # no output_dir: the temporary run folder is gone
    assert not Path(fitted.run_summary_.run_dir).exists()
    assert fitted.run_summary_.n_trials == 4
    assert fitted.model_.task == "classification"
    proba = fitted.predict_proba(X)
    assert proba.shape == (150, 3) and np.allclose(proba.sum(axis=1), 1)
    assert fitted.score(X, y) > 0.9


def test_leaderboard_columns_and_order(fitted):
    board = fitted.leaderboard()
    assert list(board.columns) == [
        "rank",
        "trial",
        "loss",
        "balanced_accuracy",
        "status",
        "budget",
        "duration",
        "origin",
        "categorical_encoding",
        "category_coalescence",
        "rescaling",
        "feature_preprocessor",
        "classifier",
        "ensemble_weight",
    ]
    assert list(board["rank"]) == [1, 2, 3, 4]
    assert sorted(board["trial"]) == [0, 1, 2, 3]
    ok = board[board.status == "ok"]
    assert list(ok["loss"]) == sorted(ok["loss"])  # best first
    assert np.allclose(ok["loss"], 1 - ok["balanced_accuracy"])
    assert set(board["classifier"]) <= {"lda", "decision_tree"}
    assert board["ensemble_weight"].sum() == pytest.approx(1.0)
    assert board.loc[0, "ensemble_weight"] == 1.0  # no ensemble: the best trial alone
    board.loc[0, "loss"] = -1.0
    assert fitted.leaderboard().loc[0, "loss"] != -1.0  # a copy each time


def test_joblib_round_trip_predicts_the_same(fitted, iris, tmp_path):
    X, _ = iris
    joblib.dump(fitted, tmp_path / "estimator.joblib")
    loaded = joblib.load(tmp_path / "estimator.joblib")
    assert np.array_equal(loaded.predict(X), fitted.predict(X))
    assert np.allclose(loaded.predict_proba(X), fitted.predict_proba(X))
    assert loaded.leaderboard().equals(fitted.leaderboard())


def test_fit_keeps_the_model_the_run_saved_without_reading_it_back(iris, tmp_path, monkeypatch):
    """Reading a bagged ensemble back with skops took 5 s of a 30 s fit: the estimator keeps
    the run's own model, the one it wrote to the folder (the same predictions)."""
    from automl_engine import estimator

    def no_read_back(*args, **kwargs):
        raise AssertionError("fit read the model back from the run folder")

    monkeypatch.setattr(estimator, "load_saved_model", no_read_back)
    X, y = iris
    model = fast_classifier(output_dir=tmp_path).fit(X, y)
    assert model.model_ is model.run_summary_.model
    monkeypatch.undo()
    saved = load_saved_model(model.run_dir_, allowed=declared_model_types(load_plugins()))
    assert np.allclose(saved["model"].predict_proba(X), model.predict_proba(X))
    summary = json.loads((model.run_dir_ / "summary.json").read_text())
    assert "model" not in summary and summary["model_path"]  # the record holds no model


def test_errors_before_fit_and_for_the_wrong_columns(fitted, iris):
    X, _ = iris
    with pytest.raises(NotFittedError):
        fast_classifier().predict(X)
    with pytest.raises(NotFittedError):
        fast_classifier().leaderboard()
    with (
        pytest.raises(ValueError, match="X has 3 features, but AutoMLClassifier is expecting 4"),
        pytest.warns(UserWarning, match="X does not have valid feature names"),
    ):
        fitted.predict(X.to_numpy()[:, :3])
    with pytest.raises(ValueError, match="feature names should match"):
        fitted.predict(X[list(reversed(X.columns))])


def test_text_categorical_and_missing_values_in_a_dataframe():
    rng = np.random.default_rng(0)
    n = 200
    colour = rng.choice(["red", "green", "blue"], n)
    size = rng.normal(size=n)
    frame = pd.DataFrame(
        {
            "colour": colour,
            "shape": pd.Categorical(rng.choice(["round", "square"], n)),
            "size": size,
            "mixed": rng.choice([1, "a", None], n).astype(object),
        }
    )
    frame.loc[::10, "size"] = np.nan
    y = np.where((colour == "red") | (size > 1), "yes", "no")
    model = fast_classifier().fit(frame, y)
    assert list(model.classes_) == ["no", "yes"]
    assert list(model.feature_names_in_) == ["colour", "shape", "size", "mixed"]
    assert set(model.predict(frame)) <= {"yes", "no"}
    assert model.score(frame, y) > 0.8


def test_a_numpy_array_and_the_regressor():
    X, y = load_diabetes(return_X_y=True)
    model = fast_regressor().fit(X, y)
    assert model.n_features_in_ == 10 and not hasattr(model, "feature_names_in_")
    assert not hasattr(model, "classes_") and not hasattr(model, "predict_proba")
    assert model.predict(X).shape == (442,)
    assert model.score(X, y) > 0.3
    assert "r2" in model.leaderboard().columns


def test_no_model_when_every_trial_fails_is_a_clear_error(iris, monkeypatch, tmp_path):
    """... and the temporary run folder is removed all the same."""
    monkeypatch.setattr(
        "automl_engine.estimator.load_plugins",
        lambda: load_plugins(extra=[ToyPlugin()], entry_points=False),
    )
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    recipe = {
        "space": {
            "name": "toy-classification",
            "params": {"include": {"classifier": ["crashing"]}},
        },
        "budget": {"trials": 2},
    }
    with pytest.raises(
        NoModelError, match=r"(?s)2 trials \(2 crashed.*this component always fails"
    ):
        AutoMLClassifier(recipe=recipe, max_trials=2).fit(*iris)
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# The recipe a fit runs
# ---------------------------------------------------------------------------------------------


class SizedEnsembler(Ensembler):
    """An ensembler with a ``size``: equal weights on the best ``min(size, 2)`` trials. The
    sizes it was fitted with are recorded (the run keeps its blend only if it beats the best
    trial, so the summary alone does not show it ran)."""

    fitted_sizes: ClassVar[list[int]] = []

    def __init__(self, size: int = 10) -> None:
        self.size = size

    def fit(self, predictions: Any, y: np.ndarray, loss: Any) -> np.ndarray:
        SizedEnsembler.fitted_sizes.append(self.size)
        weights = np.zeros(len(predictions))
        weights[: min(self.size, 2)] = 1.0
        return weights / weights.sum()


class RecipesPlugin:
    """A named recipe that fits quickly, and an ensembler that takes a size."""

    @hookimpl
    def register_recipes(self, register: Any) -> None:
        register("fast-test", fast_recipe(), "two cheap models, random search")

    @hookimpl
    def register_ensemblers(self, register: Any) -> None:
        register("sized", SizedEnsembler)


@pytest.fixture
def with_test_recipes(monkeypatch):
    """The installed plugins plus :class:`RecipesPlugin`, for every fit in the test."""
    from automl_core import plugins as plugin_module

    monkeypatch.setattr(
        "automl_engine.estimator.load_plugins",
        lambda: plugin_module.load_plugins(extra=[RecipesPlugin()]),
    )


def stored_recipe(run_dir: Path) -> dict[str, Any]:
    with RunHistory(run_dir / HISTORY_FILE) as history:
        stored = history.get_meta("recipe")
    assert stored == yaml.safe_load((run_dir / RECIPE_FILE).read_text())
    return stored


def test_keyword_arguments_reach_the_recipe_that_runs(iris, tmp_path, with_test_recipes):
    """The recipe names a dataset on disk, another metric, seed, budget and one worker: the
    fit's data and arguments replace them."""
    recipe = {
        **fast_recipe(),
        "task": {"dataset": "sklearn:wine", "target": "target", "test_size": 0.2},
        "budget": {"trials": 9, "wall_time": 1000},
        "executor": {"name": "processes", "params": {"workers": 1}},
        "ensemble": {"ensembler": "sized", "params": {"size": 5}},
        "seed": 1,
    }
    model = AutoMLClassifier(
        recipe=recipe,
        time_budget=60,
        metric="accuracy",
        seed=7,
        n_jobs=2,
        max_trials=3,
        ensemble_size=2,
        output_dir=tmp_path,
    ).fit(*iris)
    stored = stored_recipe(model.run_dir_)
    assert model.run_dir_.parent == tmp_path
    assert stored["task"] == {
        "dataset": "memory:AutoMLClassifier",
        "type": "classification",
        "metric": "accuracy",
    }
    assert stored["seed"] == 7
    assert stored["executor"] == {"name": "processes", "params": {"workers": 2}}
    assert stored["ensemble"] == {"ensembler": "sized", "params": {"size": 2}}
    split = split_time_budget(60)
    assert stored["budget"]["trials"] == 3
    assert stored["budget"]["trial_time"] == pytest.approx(split.trial, abs=1e-3)
    assert stored["budget"]["wall_time"] == split.run == 59.5  # the run's, from fit's start
    assert stored == model.recipe_
    assert model.run_summary_.n_trials == 3
    assert SizedEnsembler.fitted_sizes[-1] == 2  # the ensembler was built with size 2
    summary = json.loads((model.run_dir_ / "summary.json").read_text())
    assert summary["n_trials"] == 3 and (model.run_dir_ / "model.skops").is_file()


def test_recipe_by_name_by_path_and_as_a_mapping(iris, tmp_path, with_test_recipes):
    path = tmp_path / "fast.yaml"
    path.write_text(yaml.safe_dump(fast_recipe()))
    fits = {
        "name": fast_classifier(recipe="fast-test", output_dir=tmp_path / "a").fit(*iris),
        "path": fast_classifier(recipe=str(path), output_dir=tmp_path / "b").fit(*iris),
        "Path": fast_classifier(recipe=path, output_dir=tmp_path / "c").fit(*iris),
        "mapping": fast_classifier(output_dir=tmp_path / "d").fit(*iris),
    }
    recipes = {how: stored_recipe(model.run_dir_) for how, model in fits.items()}
    for recipe in recipes.values():
        assert recipe["budget"].pop("wall_time") > 250  # what is left of 270 s after set-up
    assert all(r == recipes["mapping"] for r in recipes.values())
    assert recipes["name"]["space"] == fast_recipe()["space"]


def test_an_unknown_recipe_name_lists_the_registered_ones(iris):
    with pytest.raises(RecipeError, match="no such recipe; registered recipes:") as error:
        AutoMLClassifier(recipe="no-such-recipe").fit(*iris)
    assert "default-classification" in str(error.value)
    assert "default-regression" in str(error.value)
    with pytest.raises(TypeError, match="recipe must be None, a registered recipe name"):
        AutoMLClassifier(recipe=3).fit(*iris)


def test_a_benchmark_recipe_is_refused(iris):
    recipe = {"task": {"benchmark": "pmf", "dataset": "1049"}, "budget": {"trials": 2}}
    with pytest.raises(ValueError, match="table-lookup benchmark task"):
        AutoMLClassifier(recipe=recipe).fit(*iris)


@pytest.mark.parametrize(
    ("budget", "error", "message"),
    [(0, ValueError, "positive number of seconds, got 0"), ("1m", TypeError, "got '1m'")],
)
def test_a_bad_time_budget_is_refused_before_anything_runs(iris, budget, error, message):
    with pytest.raises(error, match=f"time_budget must be .*{message}"):
        fast_classifier(time_budget=budget).fit(*iris)


def test_a_metric_of_the_other_task_is_a_recipe_error(iris):
    with pytest.raises(RecipeError, match=r"task\.metric: got 'r2'"):
        fast_classifier(metric="r2").fit(*iris)


def test_the_defaults_use_the_named_default_recipes(iris):
    """recipe=None runs default-classification / default-regression with the arguments over
    them (checked on the recipe built, not run: the defaults search for minutes)."""
    plugins = load_plugins()
    for estimator, name in (
        (AutoMLClassifier(n_jobs=3, time_budget=120), "default-classification"),
        (AutoMLRegressor(n_jobs=3, time_budget=120, ensemble_size=0), "default-regression"),
    ):
        raw = estimator._recipe_to_run(plugins, started=time.monotonic())
        default = plugins.get("recipe", name).obj
        assert raw["space"] == default["space"] and raw["search"] == default["search"]
        assert raw["executor"] == {"name": "processes", "params": {"workers": 3}}
        assert raw["budget"]["wall_time"] == split_time_budget(120).run == 119.5
        assert raw["budget"]["trial_time"] == 8.0  # (12 s reserve + 12 s tolerance) / 3
        assert raw["task"]["type"] == default["task"]["type"]
    assert "ensemble" not in raw  # ensemble_size=0: the single best pipeline


def test_ensemble_size_sets_or_removes_the_recipes_ensemble():
    pytest.importorskip("automl_ensemble")  # the caruana ensembler, another distribution
    plugins = load_plugins()
    recipe = dict(plugins.get("recipe", "default-classification").obj)
    recipe["ensemble"] = {"ensembler": "caruana", "params": {"size": 50}}
    for size, expected in (
        (0, None),
        (1, None),
        (7, {"ensembler": "caruana", "params": {"size": 7}}),
    ):
        estimator = AutoMLClassifier(recipe=recipe, ensemble_size=size, time_budget=60)
        raw = estimator._recipe_to_run(plugins, started=time.monotonic())
        assert raw.get("ensemble") == expected


# ---------------------------------------------------------------------------------------------
# The named recipes
# ---------------------------------------------------------------------------------------------


def test_without_the_automl_distribution_the_default_recipe_says_what_to_install():
    """The engine names no plugin, so it ships no default recipe (they name mcts, rf...):
    the estimator's default then fails saying where the defaults come from."""
    with pytest.raises(RecipeError, match="come with the `automl` distribution"):
        AutoMLClassifier()._base_recipe(load_plugins(entry_points=False, defaults=False))


def test_the_default_recipes_name_installed_components():
    """Every component the defaults name is registered, once the plugins they need are
    installed (the mcts strategy comes with automl-mcts)."""
    from automl_engine.recipe import check_names

    plugins = load_plugins()
    if "mcts" not in plugins.registry.names("search_strategy"):
        pytest.skip("the mcts strategy (plugins/automl-mcts) is not installed")
    for name in ("default-classification", "default-regression"):
        check_names(parse_recipe(plugins.get("recipe", name).obj), plugins)


def test_registered_recipes_are_copies_and_bad_ones_break_their_plugin(tmp_path):
    broken_file = tmp_path / "broken.yaml"
    broken_file.write_text("name: [unclosed\n")

    class Recipes:
        @hookimpl
        def register_recipes(self, register: Any) -> None:
            register("ok", {"name": "ok"})

    class BadRecipes:
        @hookimpl
        def register_recipes(self, register: Any) -> None:
            register("bad", broken_file)

    plugins = load_plugins(extra=[Recipes(), BadRecipes()], entry_points=False)
    plugins.get("recipe", "ok").obj["name"] = "changed"  # a user of one copy...
    from automl_engine.recipe import named_recipe

    assert named_recipe("ok", plugins) == {"name": "changed"}
    assert named_recipe("ok", plugins) is not named_recipe("ok", plugins)
    (broken,) = plugins.broken
    assert "register_recipes" in broken.error and "YAML error" in broken.error
    assert "bad" not in plugins.registry.names("recipe")


# ---------------------------------------------------------------------------------------------
# run() on data held in memory (what fit uses)
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cancer() -> Dataset:
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return Dataset("anything", X, y.to_numpy(), "classification")


def memory_recipe(**changes: Any) -> Any:
    task = {"dataset": "memory:cancer", "resampling": {"holdout": 0.3}}
    trees = {"name": "toy-classification", "params": {"include": {"classifier": ["decision_tree"]}}}
    changes = {"space": trees, **changes, "task": {**task, **changes.get("task", {})}}
    return parse_recipe(toy_recipe(**changes))


def test_run_searches_the_data_given(plugins, cancer, tmp_path):
    summary = run(memory_recipe(), tmp_path / "run", plugins=plugins, dataset=cancer)
    assert summary.n_trials == 6 and summary.model_path is not None
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        described = history.get_meta("dataset")
    assert described["name"] == "memory:cancer" and described["rows"] == 569
    assert described["fingerprint"] == dataset_fingerprint(cancer)


def test_resuming_needs_the_same_data(plugins, cancer, tmp_path):
    run_dir = tmp_path / "run"
    run(memory_recipe(budget={"trials": 2}), run_dir, plugins=plugins, dataset=cancer)
    more = memory_recipe(budget={"trials": 4})
    other = Dataset("other", cancer.X.iloc[:300], cancer.y[:300], "classification")
    with pytest.raises(AutoMLError, match=r"cannot resume .* other data held in memory"):
        run(more, run_dir, plugins=plugins, dataset=other, resume=True)
    # checked before anything is built on the data: not a complaint about the space
    regression = Dataset("other", cancer.X, cancer.y.astype(float), "regression")
    with pytest.raises(AutoMLError, match=r"cannot resume .* other data held in memory"):
        run(more, run_dir, plugins=plugins, dataset=regression, resume=True)
    with pytest.raises(DatasetError, match="'memory:cancer' is data held in memory"):
        run(more, run_dir, plugins=plugins, resume=True)  # `automl resume` on such a folder
    assert run(more, run_dir, plugins=plugins, dataset=cancer, resume=True).n_trials == 4


def test_run_rejects_data_that_does_not_fit_the_recipe(plugins, cancer, tmp_path):
    cases = [
        (parse_recipe(toy_recipe()), r"task\.dataset: got 'sklearn:breast_cancer'"),
        (memory_recipe(task={"target": "label"}), r"task\.target: got 'label'"),
        (memory_recipe(task={"type": "regression"}), r"task\.type: got 'regression'"),
        (
            parse_recipe(
                {
                    "task": {
                        "benchmark": {"name": "table", "params": {"path": "x"}},
                        "dataset": "1",
                    },
                    "budget": {"trials": 1},
                }
            ),
            r"task\.benchmark: got 'table', expected a dataset task when data is given",
        ),
    ]

    class TablePlugin:  # a benchmark named "table" (automl-metadata's, in a real install)
        @hookimpl
        def register_benchmarks(self, register):
            register("table", lambda path: None)

    plugins = load_plugins(extra=[ToyPlugin(), DoublesPlugin(), TablePlugin()], entry_points=False)
    for recipe, message in cases:
        with pytest.raises(RecipeError, match=message):
            prepare(recipe, plugins, dataset=cancer)
    with pytest.raises(DatasetError, match=r"run\(dataset=\.\.\.\).*--set task\.dataset=csv"):
        run(memory_recipe(), tmp_path / "run", plugins=plugins)


def test_object_columns_become_numbers_or_text_that_compare():
    """What fit and predict hand the space, whatever the space does with it: an object
    column of numbers is numeric, one mixing types holds text (missing stays missing)."""
    from automl_engine.estimator import _text_categories

    frame = pd.DataFrame({"n": [1, 2, 3], "m": [1, "a", None]}, dtype=object)
    converted = _text_categories(frame)
    assert pd.api.types.is_integer_dtype(converted["n"])
    assert converted["m"].tolist()[:2] == ["1", "a"] and pd.isna(converted["m"][2])


def test_the_default_regression_recipe_runs_on_a_real_regression_set():
    """``AutoMLRegressor()`` with no recipe runs ``default-regression`` itself (its space,
    search and ensemble, a few trials) on scikit-learn's diabetes and predicts held-out rows
    better than their mean does."""
    from sklearn.datasets import load_diabetes
    from sklearn.metrics import r2_score
    from sklearn.model_selection import train_test_split

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    model = AutoMLRegressor(max_trials=6, time_budget=600).fit(X_train, y_train)
    default = load_plugins().get("recipe", "default-regression").obj
    for key in ("space", "search", "ensemble"):
        assert model.recipe_.get(key) == default.get(key), key
    assert model.run_summary_.n_trials == 6
    assert r2_score(y_test, model.predict(X_test)) > 0.2
