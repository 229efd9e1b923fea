"""The flaml system: found through its entry point, a real FLAML search on real data within
its budget, optimising the run's own metric on FLAML's label codes, a model that follows
scikit-learn's class convention (a rare class and a class absent from the training rows
included), regression, and clear errors for bad parameters. The checks every system passes
are in ``contrib/system_checks.py``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("flaml", reason="needs flaml: pip install -e contrib/automl-flaml")

import flaml
from sklearn.metrics import balanced_accuracy_score
from system_checks import (
    SHIFTED_LOSSES,
    check_classes,
    check_curve,
    check_default_search,
    check_metric_on_codes,
    check_missing_class,
    check_regression,
    fit,
    shifted_metric,
)

from automl_core.errors import PluginError
from automl_engine.evaluator import predict_scores
from automl_engine.metrics import Metric, get_metric
from automl_flaml.system import TABULAR_LEARNERS, FLAMLMetric, FLAMLModel, FLAMLSystem, read_curve

# ---------------------------------------------------------------------------------------------
# Registration, parameters and the metric function
# ---------------------------------------------------------------------------------------------


def test_flaml_is_registered_through_its_entry_point(system_plugins):
    registration = system_plugins.get("system", "flaml")
    assert registration.origin.distribution == "automl-flaml"
    system = system_plugins.create("system", "flaml", {"estimator_list": ["lgbm", "xgboost"]})
    assert isinstance(system, FLAMLSystem) and system.estimator_list == ["lgbm", "xgboost"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"estimator_list": ["lgbm", "nope"]}, r"unknown learner\(s\) \['nope'\]"),
        ({"estimator_list": []}, "estimator_list must be 'auto' or a non-empty list"),
        ({"eval_method": "bootstrap"}, "eval_method must be one of"),
        ({"hpo_method": "grid"}, "hpo_method must be one of"),
        ({"n_splits": 1}, "n_splits must be an integer >= 2"),
        ({"split_ratio": 1.5}, r"split_ratio must be in \(0, 1\)"),
        ({"max_iter": 0}, "max_iter must be a positive integer"),
        ({"retrain_reserve": 1}, r"retrain_reserve must be in \[0, 1\)"),
        ({"settings": {"metric": "accuracy"}}, r"settings may not set \['metric'\]"),
    ],
)
def test_a_bad_parameter_is_a_clear_error(system_plugins, params, message):
    # The system's own message, inside the core's "cannot build system ..." error.
    with pytest.raises(PluginError, match=f"cannot build system 'flaml'.*: flaml: {message}"):
        system_plugins.create("system", "flaml", params)


def test_an_unknown_parameter_lists_the_known_ones(system_plugins):
    with pytest.raises(PluginError, match="Its parameters: estimator_list, eval_method"):
        system_plugins.create("system", "flaml", {"learners": ["lgbm"]})


def test_every_listed_learner_is_one_flaml_knows():
    from flaml.automl.task.factory import task_factory

    known = task_factory("classification").estimators
    assert set(TABULAR_LEARNERS) <= set(known)


def test_the_metric_function_scores_on_flamls_codes():
    """FLAML's learners and ``y_val`` hold its codes: a learner trained on the labels {0, 2}
    is scored as one of two classes, so ROC AUC is finite (in label space it was inf)."""

    def loss(metric, estimator, X, codes):
        function = FLAMLMetric(metric, "classification")
        value, logged = function(X, codes, estimator, None, None, None, None, None, {})
        assert logged[metric.name] == value
        return value

    check_metric_on_codes(loss)


# ---------------------------------------------------------------------------------------------
# Real searches: one against the clock, the others bounded by max_iter
# ---------------------------------------------------------------------------------------------


def test_a_search_with_the_defaults_stays_within_its_budget(system_plugins, wine, tmp_path):
    result = check_default_search(system_plugins, "flaml", wine, tmp_path, budget=6)

    # FLAML's default learners all ran in this environment (xgboost 3 included).
    assert result.info["estimator_list"] == [
        "lgbm", "rf", "xgboost", "extra_tree", "xgb_limitdepth", "sgd", "lrl1"
    ]  # fmt: skip
    assert result.info["flaml_version"] == flaml.__version__
    assert result.info["best_estimator"] in result.info["estimator_list"]
    assert (tmp_path / "flaml.log").exists()


def test_flaml_minimises_the_runs_metric(wine, tmp_path):
    """A metric with its optimum at 11, under holdout (FLAML calls the metric once per
    trial): every loss in the curve lies in [10, 11] and is one the run's metric computed, and
    the best is FLAML's ``best_loss``."""
    X_train, X_test, y_train, y_test = wine
    system = FLAMLSystem(estimator_list=["lgbm", "extra_tree"], eval_method="holdout", max_iter=8)
    result, elapsed = fit(system, X_train, y_train, tmp_path, metric=shifted_metric())

    computed = [loss for losses in SHIFTED_LOSSES.values() for loss in losses]
    assert result.info["eval_method"] == "holdout"
    assert len(computed) >= len(result.curve) >= 2
    assert all(10 <= loss <= 11 for _, loss in result.curve)
    assert all(any(loss == pytest.approx(seen) for seen in computed) for _, loss in result.curve)
    assert result.validation_loss == pytest.approx(result.model.automl.best_loss)
    check_curve(result, elapsed)
    proba = check_classes(result.model, X_test, y_train)
    assert balanced_accuracy_score(y_test, proba.argmax(axis=1)) > 0.85


def test_flaml_follows_the_metric_where_it_differs_from_its_own(wine, tmp_path):
    """A metric that rewards wrong predictions (the balanced accuracy as a loss): a system
    optimising FLAML's default metric would still return an accurate model."""
    X_train, X_test, y_train, y_test = wine
    bacc = get_metric("balanced_accuracy")
    inverted = Metric("inverted", "classification", bacc.score, greater_is_better=False)
    system = FLAMLSystem(estimator_list=["lgbm", "sgd"], eval_method="holdout", max_iter=8)
    result, _ = fit(system, X_train, y_train, tmp_path, metric=inverted)

    assert result.validation_loss < 0.6  # low balanced accuracy on FLAML's holdout...
    test_bacc = balanced_accuracy_score(y_test, result.model.predict(X_test))
    assert test_bacc < 0.7  # ... and on the test rows (a real search reaches > 0.9)


def test_a_rare_class_keeps_its_column(wine, tmp_path):
    X_train, X_test, y_train, _ = wine
    rare = np.flatnonzero(y_train == 1)[3:]  # class 1 keeps three training rows
    keep = np.setdiff1d(np.arange(len(y_train)), rare)
    X_rare, y_rare = X_train.iloc[keep], y_train[keep]
    system = FLAMLSystem(estimator_list=["lgbm", "rf"], max_iter=6)
    result, _ = fit(system, X_rare, y_rare, tmp_path)

    proba = check_classes(result.model, X_rare, y_rare)
    # Column 1 is class 1: highest for the rare class's own (training) rows on average.
    assert proba[y_rare == 1].mean(axis=0).argmax() == 1
    check_classes(result.model, X_test, y_rare)


def test_a_class_missing_from_the_training_rows(wine, tmp_path):
    """Labels 0 and 2, which FLAML encodes as 0 and 1, optimising ROC AUC: every trial's loss
    is finite, and the core places the model's two columns as classes 0 and 2."""
    X_train, _, y_train, _ = wine
    rows = y_train != 1
    system = FLAMLSystem(estimator_list=["lgbm"], max_iter=3)
    result, _ = fit(system, X_train[rows], y_train[rows], tmp_path, metric="roc_auc")

    assert result.curve and all(math.isfinite(loss) for _, loss in result.curve)
    assert result.validation_loss < 0.1
    check_missing_class(result.model, X_train[rows], y_train[rows])
    assert predict_scores(result.model, X_train[rows], 3)[:, 2].max() > 0.5


def test_regression(system_plugins, diabetes, tmp_path):
    X_train, X_test, y_train, y_test = diabetes
    params = {"estimator_list": ["lgbm", "rf", "sgd"], "max_iter": 8}
    system = system_plugins.create("system", "flaml", params)
    result, elapsed = fit(system, X_train, y_train, tmp_path, task="regression", metric="r2")

    assert isinstance(result.model, FLAMLModel) and not hasattr(result.model, "classes_")
    check_regression(result, elapsed, X_test, y_test)


def test_the_curve_is_read_from_flamls_log(tmp_path):
    log_file = tmp_path / "flaml.log"
    records = [
        {"record_id": 0, "wall_clock_time": 0.5, "validation_loss": 0.3},
        {"record_id": 1, "wall_clock_time": 0.9, "validation_loss": float("inf")},
        {"record_id": 2, "wall_clock_time": 1.4, "validation_loss": None},
        {"curr_best_record_id": 0},
    ]
    log_file.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert read_curve(log_file, offset=0.25) == [(0.75, 0.3), (1.15, math.inf), (1.65, math.inf)]
    assert read_curve(tmp_path / "missing.log") == []
