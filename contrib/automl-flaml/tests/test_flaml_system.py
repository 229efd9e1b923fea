"""The flaml system: found through its entry point, a real FLAML search on real data within
its budget, optimising the run's own metric, with ``predict_proba`` in the classes' order
(a rare class and a class absent from the training rows included), regression, and clear
errors for bad parameters."""

from __future__ import annotations

import json
import math
import pickle
import time

import numpy as np
import pytest

pytest.importorskip("flaml", reason="needs flaml: pip install -e contrib/automl-flaml")

import flaml
from sklearn.metrics import balanced_accuracy_score, r2_score

from automl_core.contracts import SystemResult
from automl_core.errors import PluginError
from automl_core.metrics import Metric, get_metric
from automl_core.plugins import load_plugins
from automl_flaml.system import TABULAR_LEARNERS, FLAMLModel, FLAMLSystem, read_curve

#: Wall-clock allowance on top of the budget on a loaded 2-core CI machine: the 5 s the
#: estimators promise (docs/estimator.md).
SLACK = 5.0


@pytest.fixture(scope="module")
def plugins():
    """The core's built-ins and this distribution, through its entry point only."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOML_LOAD_PLUGINS", "automl-flaml")
        loaded = load_plugins()
    assert not loaded.broken, loaded.broken
    return loaded


def fit(system, X, y, tmp_path, *, task="classification", metric="balanced_accuracy", budget=4):
    """``system.fit`` as the ablation calls it, and its wall time."""
    metric = get_metric(metric) if isinstance(metric, str) else metric
    start = time.monotonic()
    result = system.fit(
        X, y, task=task, metric=metric, time_budget=budget, seed=0, n_jobs=1, workdir=tmp_path
    )
    return result, time.monotonic() - start


def check_curve(result: SystemResult, elapsed: float) -> None:
    """Seconds increase and lie within the fit; at least one finite loss; the returned
    configuration's loss is the best of the curve."""
    seconds = [s for s, _ in result.curve]
    losses = [loss for _, loss in result.curve]
    assert seconds == sorted(seconds) and seconds[0] >= 0 and seconds[-1] <= elapsed
    assert any(math.isfinite(loss) for loss in losses)
    assert result.validation_loss == pytest.approx(min(losses))
    assert result.info["n_trials"] == len(result.curve)


def recording(metric: Metric) -> tuple[Metric, list[float]]:
    """``metric`` under another name, keeping every loss it computes."""
    losses: list[float] = []

    def score(y, predictions):
        value = metric.score(y, predictions)
        losses.append(metric.optimum - value if metric.greater_is_better else value)
        return value

    wrapped = Metric("recorded", metric.task, score, metric.greater_is_better, metric.optimum)
    return wrapped, losses


# ---------------------------------------------------------------------------------------------
# Registration and parameters
# ---------------------------------------------------------------------------------------------


def test_flaml_is_registered_through_its_entry_point(plugins):
    registration = plugins.get("system", "flaml")
    assert registration.origin.distribution == "automl-flaml"
    system = plugins.create("system", "flaml", {"estimator_list": ["lgbm", "xgboost"]})
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
def test_a_bad_parameter_is_a_clear_error(plugins, params, message):
    with pytest.raises(ValueError, match=f"^flaml: {message}"):
        plugins.create("system", "flaml", params)


def test_an_unknown_parameter_lists_the_known_ones(plugins):
    with pytest.raises(PluginError, match="Its parameters: estimator_list, eval_method"):
        plugins.create("system", "flaml", {"learners": ["lgbm"]})


def test_every_listed_learner_is_one_flaml_knows():
    from flaml.automl.task.factory import task_factory

    known = task_factory("classification").estimators
    assert set(TABULAR_LEARNERS) <= set(known)


# ---------------------------------------------------------------------------------------------
# Real searches
# ---------------------------------------------------------------------------------------------


def test_classification_within_budget_with_probabilities_in_class_order(plugins, wine, tmp_path):
    X_train, X_test, y_train, y_test = wine
    system = plugins.create("system", "flaml", {})
    result, elapsed = fit(system, X_train, y_train, tmp_path, budget=6)

    assert elapsed <= 6 + SLACK
    proba = result.model.predict_proba(X_test)
    assert proba.shape == (len(X_test), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert balanced_accuracy_score(y_test, proba.argmax(axis=1)) > 0.85
    assert np.array_equal(result.model.predict(X_test), proba.argmax(axis=1))
    check_curve(result, elapsed)
    # FLAML's default learners all ran in this environment (xgboost 3 included).
    assert result.info["estimator_list"] == [
        "lgbm", "rf", "xgboost", "extra_tree", "xgb_limitdepth", "sgd", "lrl1"
    ]  # fmt: skip
    assert result.info["flaml_version"] == flaml.__version__
    assert result.info["best_estimator"] in result.info["estimator_list"]
    assert (tmp_path / "flaml.log").exists()
    # The model survives pickling (the core's metrics hold lambdas; the metric goes by name).
    restored = pickle.loads(pickle.dumps(result.model))
    np.testing.assert_allclose(restored.predict_proba(X_test), proba)


def test_a_rare_class_keeps_its_column(wine, tmp_path):
    X_train, X_test, y_train, _ = wine
    rare = np.flatnonzero(y_train == 1)[3:]  # class 1 keeps three training rows
    keep = np.setdiff1d(np.arange(len(y_train)), rare)
    X_rare, y_rare = X_train.iloc[keep], y_train[keep]
    system = FLAMLSystem(estimator_list=["lgbm", "rf"])
    result, elapsed = fit(system, X_rare, y_rare, tmp_path, budget=4)

    assert elapsed <= 4 + SLACK
    proba = result.model.predict_proba(X_rare)
    assert proba.shape == (len(X_rare), 3)
    # Column 1 is class 1: highest for the rare class's own (training) rows on average.
    assert proba[y_rare == 1].mean(axis=0).argmax() == 1
    assert result.model.predict_proba(X_test).shape == (len(X_test), 3)


def test_a_class_missing_from_the_rows_gets_a_zero_column(wine, tmp_path):
    X_train, _, y_train, _ = wine
    rows = y_train != 1  # labels 0 and 2: FLAML's label encoder makes them 0 and 1
    system = FLAMLSystem(estimator_list=["lgbm"], max_iter=3)
    result, _ = fit(system, X_train[rows], y_train[rows], tmp_path, budget=10)

    proba = result.model.predict_proba(X_train[rows])
    assert proba.shape == (rows.sum(), 3)
    assert np.all(proba[:, 1] == 0)
    assert set(result.model.predict(X_train[rows])) <= {0, 2}
    assert balanced_accuracy_score(y_train[rows], proba.argmax(axis=1)) > 0.9


def test_flaml_minimises_the_runs_metric(wine, tmp_path):
    """Holdout: FLAML calls the metric once per trial, so every loss in the curve is one the
    run's metric computed, and the best is FLAML's ``best_loss``."""
    X_train, _, y_train, _ = wine
    metric, losses = recording(get_metric("balanced_accuracy"))
    system = FLAMLSystem(estimator_list=["lgbm", "extra_tree"], eval_method="holdout")
    result, elapsed = fit(system, X_train, y_train, tmp_path, metric=metric, budget=3)

    assert result.info["metric"] == "recorded" and result.info["eval_method"] == "holdout"
    assert len(losses) >= len(result.curve) >= 2
    assert all(any(loss == pytest.approx(seen) for seen in losses) for _, loss in result.curve)
    assert result.validation_loss == pytest.approx(result.model.automl.best_loss)
    check_curve(result, elapsed)


def test_flaml_follows_the_metric_where_it_differs_from_its_own(wine, tmp_path):
    """A metric that rewards wrong predictions (the balanced accuracy as a loss): a system
    optimising FLAML's default metric would still return an accurate model."""
    X_train, X_test, y_train, y_test = wine
    bacc = get_metric("balanced_accuracy")
    inverted = Metric("inverted", "classification", bacc.score, greater_is_better=False)
    system = FLAMLSystem(estimator_list=["lgbm", "sgd"], eval_method="holdout")
    result, _ = fit(system, X_train, y_train, tmp_path, metric=inverted, budget=3)

    assert result.validation_loss < 0.6  # low balanced accuracy on FLAML's holdout...
    test_bacc = balanced_accuracy_score(y_test, result.model.predict(X_test))
    assert test_bacc < 0.7  # ... and on the test rows (a real search reaches > 0.9)


def test_regression(plugins, diabetes, tmp_path):
    X_train, X_test, y_train, y_test = diabetes
    system = plugins.create("system", "flaml", {"estimator_list": ["lgbm", "rf", "sgd"]})
    result, elapsed = fit(system, X_train, y_train, tmp_path, task="regression", metric="r2")

    assert elapsed <= 4 + SLACK
    assert isinstance(result.model, FLAMLModel)
    predictions = result.model.predict(X_test)
    assert predictions.shape == (len(X_test),)
    assert r2_score(y_test, predictions) > 0.25
    assert 0 < result.validation_loss < 0.8  # 1 - r2, the core's convention
    with pytest.raises(AttributeError):
        result.model.predict_proba(X_test)
    check_curve(result, elapsed)


def test_classification_labels_must_be_integers(wine, tmp_path):
    X_train, _, y_train, _ = wine
    with pytest.raises(ValueError, match=r"labels must be the integers 0\.\.k-1"):
        fit(FLAMLSystem(), X_train, y_train + 0.5, tmp_path)


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
