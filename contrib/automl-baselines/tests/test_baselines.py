"""The random-forest and hist-gradient-boosting systems: found through their entry point, one
fit of scikit-learn's default model on real data with categorical columns and gaps, a
validation loss that is the run's metric out of bag (forest) or on a holdout (boosting) and
nothing more (the fit ignores the metric), a model that follows scikit-learn's class
convention (a class absent from the training rows included), regression, what new data
brings at prediction time, and an ablation on a KEEL dataset with string labels and
categorical columns. The checks every system passes are in ``contrib/system_checks.py``."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pandas as pd
import pytest
import sklearn
import yaml
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split
from system_checks import (
    SHIFTED_LOSSES,
    check_classes,
    check_curve,
    check_default_search,
    check_missing_class,
    check_regression,
    fit,
    shifted_metric,
)
from threadpoolctl import threadpool_info, threadpool_limits

import automl_baselines.system
from automl_baselines.system import (
    MAX_CATEGORIES,
    HistGradientBoostingSystem,
    RandomForestSystem,
    category_strings,
    holdout_split,
)
from automl_core.errors import PluginError
from automl_engine.cli import main
from automl_engine.metrics import Metric, get_metric


@pytest.fixture(autouse=True)
def one_openmp_thread():
    """The gradient boosting's fits and predictions made by the tests themselves on one
    OpenMP thread, as the system's own fits with ``n_jobs: 1`` (on a busy 2-core machine, two
    threads made a fit on wine ten times slower)."""
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


SYSTEMS = {
    "random-forest": RandomForestSystem,
    "hist-gradient-boosting": HistGradientBoostingSystem,
}
both = pytest.mark.parametrize("name", list(SYSTEMS))

# ---------------------------------------------------------------------------------------------
# Registration and parameters
# ---------------------------------------------------------------------------------------------


@both
def test_registered_through_the_entry_point(system_plugins, name):
    registration = system_plugins.get("system", name)
    assert registration.origin.distribution == "automl-baselines"
    assert isinstance(system_plugins.create("system", name, {}), SYSTEMS[name])


def test_the_holdout_share_is_a_parameter_and_checked(system_plugins):
    system = system_plugins.create("system", "hist-gradient-boosting", {"holdout": 0.3})
    assert system.holdout == 0.3
    for bad in (0, 1, "0.2", True):
        with pytest.raises(
            PluginError,
            match=r"cannot build system 'hist-gradient-boosting'.*: "
            r"hist-gradient-boosting: holdout must be in \(0, 1\)",
        ):
            system_plugins.create("system", "hist-gradient-boosting", {"holdout": bad})


def test_the_forest_has_no_parameters(system_plugins):
    with pytest.raises(PluginError, match=r"Its parameters: \(none\)"):
        system_plugins.create("system", "random-forest", {"n_estimators": 500})


# ---------------------------------------------------------------------------------------------
# Classification on wine with a categorical column, an object column with None and NaNs
# ---------------------------------------------------------------------------------------------


@both
def test_the_default_model_stays_within_its_budget(system_plugins, name, wine, tmp_path):
    result = check_default_search(system_plugins, name, wine, tmp_path, budget=10)

    assert len(result.curve) == 1  # one model, one validation loss
    assert result.info["sklearn_version"] == sklearn.__version__
    assert result.info["categorical_columns"] == ["colour", "origin"]
    assert (result.info["random_state"], result.info["n_jobs"]) == (0, 1)
    _, X_test, _, y_test = wine
    proba = result.model.predict_proba(X_test)
    assert balanced_accuracy_score(y_test, proba.argmax(axis=1)) > 0.9


@both
def test_the_metric_is_reported_not_optimised(name, wine, tmp_path):
    """A metric with its optimum at 11 gives a validation loss in [10, 11], one the metric
    computed; a metric that rewards wrong predictions leaves the model as accurate as ever:
    the fit is the default model's whatever the metric."""
    X_train, X_test, y_train, y_test = wine
    result, elapsed = fit(SYSTEMS[name](), X_train, y_train, tmp_path, metric=shifted_metric())
    computed = [loss for losses in SHIFTED_LOSSES.values() for loss in losses]
    assert computed == [pytest.approx(result.validation_loss)]
    assert 10 <= result.validation_loss <= 11
    check_curve(result, elapsed)
    shifted_proba = result.model.predict_proba(X_test)

    bacc = get_metric("balanced_accuracy")
    inverted = Metric("inverted", "classification", bacc.score, greater_is_better=False)
    result, _ = fit(SYSTEMS[name](), X_train, y_train, tmp_path, metric=inverted)
    assert result.validation_loss > 0.8  # the validation rows are well predicted...
    np.testing.assert_array_equal(result.model.predict_proba(X_test), shifted_proba)
    assert (
        balanced_accuracy_score(y_test, result.model.predict(X_test)) > 0.9
    )  # ...and the test rows


def test_the_forests_loss_is_out_of_bag(wine, diabetes, tmp_path):
    """With accuracy (r2), the loss is 1 - the forest's own out-of-bag score."""
    X_train, _, y_train, _ = wine
    result, _ = fit(RandomForestSystem(), X_train, y_train, tmp_path, metric="accuracy")
    forest = result.model.named_steps["forest"]
    assert result.validation_loss == pytest.approx(1 - forest.oob_score_)
    assert result.info["validation"] == "out-of-bag"
    assert result.info["validation_rows"] == len(y_train)  # every row was out of some bag
    assert len(forest.estimators_) == 100  # scikit-learn's default

    X_train, _, y_train, _ = diabetes
    result, _ = fit(
        RandomForestSystem(), X_train, y_train, tmp_path, task="regression", metric="r2"
    )
    assert result.validation_loss == pytest.approx(1 - result.model[-1].oob_score_)


def test_the_boostings_loss_is_a_holdouts_and_its_model_sees_every_row(wine, tmp_path):
    """The loss is the metric's on a stratified fifth of the rows, scored by the pipeline
    fitted on the rest; the returned model is the same pipeline fitted on all the rows."""
    X_train, X_test, y_train, _ = wine
    system = HistGradientBoostingSystem()
    result, _ = fit(system, X_train, y_train, tmp_path)

    rows = np.arange(len(y_train))
    train, validation = train_test_split(rows, test_size=0.2, random_state=0, stratify=y_train)
    X_fit = X_train.iloc[train]
    checked = system.pipeline(X_fit, "classification", 0).fit(X_fit, y_train[train])
    expected = 1 - balanced_accuracy_score(
        y_train[validation], checked.predict(X_train.iloc[validation])
    )
    assert result.validation_loss == pytest.approx(expected)
    assert result.info["validation_rows"] == len(validation) == 25
    everything = system.pipeline(X_train, "classification", 0).fit(X_train, y_train)
    np.testing.assert_array_equal(
        result.model.predict_proba(X_test), everything.predict_proba(X_test)
    )
    boosting = result.model.named_steps["boosting"]
    assert boosting.categorical_features == [0, 1]  # colour and origin, natively
    assert result.info["n_iter"] == boosting.n_iter_ == 100  # no early stopping on 124 rows


def test_the_boostings_threads_are_the_cells_cores(monkeypatch, wine, tmp_path):
    """The gradient boosting has no n_jobs: its OpenMP threads are capped at the cell's
    cores while it fits (two here, inside the tests' cap of one)."""
    threads = []

    class Recording(HistGradientBoostingClassifier):
        def fit(self, X, y, *args, **kwargs):
            info = threadpool_info()
            threads.extend(pool["num_threads"] for pool in info if pool["user_api"] == "openmp")
            with threadpool_limits(limits=1, user_api="openmp"):  # fast on a busy machine
                return super().fit(X, y, *args, **kwargs)

    monkeypatch.setattr(automl_baselines.system, "HistGradientBoostingClassifier", Recording)
    X_train, _, y_train, _ = wine
    result = HistGradientBoostingSystem().fit(
        X_train, y_train, task="classification", metric=get_metric("accuracy"),
        time_budget=60, seed=0, n_jobs=2, workdir=tmp_path,
    )  # fmt: skip
    assert threads and set(threads) == {2}  # the holdout fit and the final one
    assert result.info["n_jobs"] == 2


def test_the_holdout_is_stratified_where_the_classes_allow():
    y = np.array([0] * 15 + [1] * 5)
    for seed in range(5):
        train, validation = holdout_split(y, "classification", 0.2, seed=seed)
        assert sorted(y[validation]) == [0, 0, 0, 1]
        assert sorted(np.concatenate([train, validation])) == list(range(20))
    single = np.array([0] * 9 + [1])  # class 1 has one row: no stratification
    train, validation = holdout_split(single, "classification", 0.2, seed=0)
    assert len(validation) == 2 and len(train) == 8


@both
def test_a_class_missing_from_the_training_rows(name, wine, tmp_path):
    """Labels 0 and 2 under ROC AUC: a finite validation loss, and the core places the
    model's two columns as classes 0 and 2."""
    X_train, _, y_train, _ = wine
    rows = y_train != 1
    result, elapsed = fit(SYSTEMS[name](), X_train[rows], y_train[rows], tmp_path, metric="roc_auc")
    assert math.isfinite(result.validation_loss) and result.validation_loss < 0.1
    check_curve(result, elapsed)
    check_missing_class(result.model, X_train[rows], y_train[rows])


@both
def test_the_seed_is_the_models_random_state(name, wine, tmp_path):
    X_train, X_test, y_train, _ = wine
    system = SYSTEMS[name]()
    runs = [
        system.fit(X_train, y_train, task="classification", metric=get_metric("log_loss"),
                   time_budget=60, seed=seed, n_jobs=1, workdir=tmp_path)
        for seed in (0, 0, 1)
    ]  # fmt: skip
    same = [run.model.predict_proba(X_test) for run in runs[:2]]
    np.testing.assert_array_equal(*same)
    assert runs[2].info["random_state"] == 1
    if name == "random-forest":  # the boosting's randomness is only its holdout split here
        assert not np.array_equal(runs[2].model.predict_proba(X_test), same[0])


@both
def test_new_categories_and_gaps_at_prediction_time(name, wine, tmp_path):
    """Test rows may bring a category never seen in training, a gap in a column that had
    none, and values of other types: they are predicted, not refused."""
    X_train, X_test, y_train, y_test = wine
    result, _ = fit(SYSTEMS[name](), X_train, y_train, tmp_path)
    new = X_test.copy()
    new["colour"] = new["colour"].cat.add_categories(["purple"])
    new.loc[new.index[:5], "colour"] = "purple"
    new.loc[new.index[5:10], "colour"] = np.nan
    new["origin"] = None
    new[X_test.columns[1]] = np.nan
    proba = check_classes(result.model, new, y_train)
    assert balanced_accuracy_score(y_test, proba.argmax(axis=1)) > 0.8


@both
def test_every_dtype_a_dataset_brings(name, wine, tmp_path):
    """Nullable integers with pd.NA, booleans, pandas strings with gaps, a category with more
    codes than the boosting's bins, and a column with nothing but gaps (left out)."""
    X_train, X_test, y_train, y_test = wine
    rng = np.random.default_rng(0)

    def more_columns(X):
        X = X.copy()
        n = len(X)
        X["count"] = pd.array(rng.integers(0, 5, n), dtype="Int64")
        X.loc[X.index[:3], "count"] = pd.NA
        X["flag"] = rng.random(n) < 0.5
        X["label"] = pd.array(rng.choice(["a", "b", None], n), dtype="string")
        X["id"] = pd.Categorical([f"id{i}" for i in rng.integers(0, 1000, n)])
        X["empty"] = np.nan
        return X

    X_wide, X_wide_test = more_columns(X_train), more_columns(X_test)
    X_wide_test["empty"] = 1.0  # left out when fitting, so ignored when predicting
    result, _ = fit(SYSTEMS[name](), X_wide, y_train, tmp_path)
    assert result.info["categorical_columns"] == ["colour", "origin", "flag", "label", "id"]
    assert result.info["empty_columns"] == ["empty"]
    proba = check_classes(result.model, X_wide_test, y_train)
    assert balanced_accuracy_score(y_test, proba.argmax(axis=1)) > 0.8


def test_the_boostings_codes_fit_its_bins():
    """A column of 400 categories gets at most 255 codes (the rarest share one), NaN kept."""
    rng = np.random.default_rng(0)
    column = pd.DataFrame({"id": [f"c{i}" for i in rng.integers(0, 400, 2000)]})
    system = HistGradientBoostingSystem()
    preprocessor = system.pipeline(column, "classification", 0).named_steps["preprocessor"]
    codes = preprocessor.fit_transform(column)
    assert np.nanmax(codes) == MAX_CATEGORIES - 1
    column.loc[:4, "id"] = None
    assert np.isnan(preprocessor.transform(column)[:5]).all()
    strings = category_strings(pd.DataFrame({"x": pd.Categorical([1, None, 3])}))
    assert strings[0, 0] == "1" and strings[1, 0] is np.nan


# ---------------------------------------------------------------------------------------------
# Regression on diabetes with categorical columns and NaNs
# ---------------------------------------------------------------------------------------------


@both
def test_regression(system_plugins, name, diabetes, tmp_path):
    X_train, X_test, y_train, y_test = diabetes
    system = system_plugins.create("system", name, {})
    result, elapsed = fit(system, X_train, y_train, tmp_path, task="regression", metric="r2")

    assert not hasattr(result.model, "classes_")
    assert result.info["estimator"].endswith("Regressor")
    check_regression(result, elapsed, X_test, y_test)


def test_ridge_cv_is_a_regression_baseline_validated_out_of_fold(
    system_plugins, diabetes, tmp_path
):
    X_train, X_test, y_train, y_test = diabetes
    system = system_plugins.create("system", "ridge-cv", {})
    result, elapsed = fit(system, X_train, y_train, tmp_path, task="regression", metric="r2")
    assert result.info["estimator"] == "RidgeCV" and result.info["validation"] == "out-of-fold"
    assert result.info["alpha"] in (0.1, 1.0, 10.0)
    check_regression(result, elapsed, X_test, y_test)
    # out of fold, not in sample: worse than the model's fit on its own training rows
    in_sample = get_metric("r2").loss(np.asarray(y_train, float), result.model.predict(X_train))
    assert result.validation_loss > in_sample
    with pytest.raises(ValueError, match="ridge-cv is a regression baseline"):
        fit(system, X_train, np.zeros(len(y_train), int), tmp_path, task="classification")


# ---------------------------------------------------------------------------------------------
# The ablation: string labels and categorical columns of a KEEL dataset
# ---------------------------------------------------------------------------------------------

#: A recipe whose run takes seconds (that of tests/test_ablation.py, fewer trials).
RECIPE = {
    "name": "tiny",
    "task": {"dataset": "keel:crx", "metric": "balanced_accuracy", "resampling": {"holdout": 0.33}},
    "space": {
        "name": "autosklearn-classification",
        "params": {
            "include": {
                "classifier": ["decision_tree", "lda"],
                "feature_preprocessor": ["no_preprocessing"],
            }
        },
    },
    "search": {"strategy": "random"},
    "budget": {"trials": 2, "wall_time": 30},
}


def test_automl_ablate_with_both_peers(tmp_path):
    """``automl ablate recipe --suite ... --peer random-forest --peer hist-gradient-boosting``
    on KEEL's crx (653 rows; 9 categorical columns; labels 'positive' and 'negative'): each
    peer's cell is scored by the core on the test rows, with its one-point curve."""
    pytest.importorskip("automl_sklearn", reason="the recipe's space needs automl-sklearn")
    recipe, suite = tmp_path / "recipe.yaml", tmp_path / "suite.yaml"
    recipe.write_text(yaml.safe_dump(RECIPE))
    suite.write_text(yaml.safe_dump({"defaults": {"test_size": 0.3}, "tasks": ["keel:crx"]}))
    out = tmp_path / "ablation"
    argv = ["ablate", str(recipe), "--suite", str(suite), "--seeds", "1", "--out", str(out)]
    assert main([*argv, "--peer", "random-forest", "--peer", "hist-gradient-boosting"]) == 0

    with (out / "results.csv").open() as handle:
        rows = {row["variant"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"recipe", "random-forest", "hist-gradient-boosting"}
    for name in SYSTEMS:
        row = rows[name]
        assert (row["status"], row["metric"], row["n_trials"]) == ("ok", "balanced_accuracy", "1")
        assert 0 < float(row["test_loss"]) < 0.25  # crx: about 0.13 for both
        assert 0 < float(row["validation_loss"]) < 0.25
        with (out / row["curve"]).open() as handle:
            (point,) = list(csv.DictReader(handle))
        assert float(point["loss"]) == pytest.approx(float(row["validation_loss"]))
        peer = json.loads((out / row["run_dir"] / "peer.json").read_text())
        assert len(peer["info"]["categorical_columns"]) == 9
        assert peer["info"]["n_jobs"] == 1
