"""The tpot system: found through its entry point, a real TPOT 1.x search on real data within
its budget, optimising the run's own metric, with ``predict_proba`` in the classes' order
(a rare class and a class absent from the training rows included), regression, and clear
errors for bad parameters."""

from __future__ import annotations

import math
import pickle
import threading
import time
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("automl_tpot", reason="needs automl-tpot: see contrib/automl-tpot/README.md")

from automl_tpot.system import SCORE_COLUMN, TPOTModel, TPOTSystem, import_tpot, read_curve

try:
    tpot = import_tpot()
except ImportError:  # pragma: no cover -- the plugin is installed, TPOT is not
    pytest.skip("needs TPOT: pip install --no-deps tpot==1.1.0", allow_module_level=True)

from sklearn.metrics import balanced_accuracy_score, r2_score

from automl_core.errors import PluginError
from automl_core.metrics import Metric, get_metric
from automl_core.plugins import load_plugins

#: Wall-clock allowance on top of the budget: a loaded 2-core CI machine. TPOT overruns its
#: deadline by up to one evaluation's wait, which the reserve (15 % of the budget) covers for
#: budgets of a minute; these tests use seconds.
SLACK = 5.0
#: Small and fast: TPOT's light space, 3-fold cross-validation, 8 pipelines a generation.
FAST = {"search_space": "linear-light", "cv": 3, "population_size": 8}


@pytest.fixture(scope="module")
def plugins():
    """The core's built-ins and this distribution, through its entry point only."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOML_LOAD_PLUGINS", "automl-tpot")
        loaded = load_plugins()
    assert not loaded.broken, loaded.broken
    return loaded


def fit(system, X, y, tmp_path, *, task="classification", metric="balanced_accuracy", budget):
    """``system.fit`` as the ablation calls it, and its wall time."""
    metric = get_metric(metric) if isinstance(metric, str) else metric
    start = time.monotonic()
    result = system.fit(
        X, y, task=task, metric=metric, time_budget=budget, seed=0, n_jobs=1, workdir=tmp_path
    )
    return result, time.monotonic() - start


def check_curve(result, elapsed: float) -> None:
    """Seconds increase and lie within the fit; at least one finite loss; the returned
    pipeline's loss is the best of the curve."""
    seconds = [s for s, _ in result.curve]
    losses = [loss for _, loss in result.curve]
    assert seconds == sorted(seconds) and seconds[0] >= 0 and seconds[-1] <= elapsed
    assert any(math.isfinite(loss) for loss in losses)
    assert result.validation_loss == pytest.approx(min(losses))
    assert result.info["n_evaluated"] + result.info["n_failed"] == len(result.curve)


def check_class_order(model: TPOTModel, X: pd.DataFrame) -> np.ndarray:
    """Each column of ``predict_proba`` is the class TPOT's pipeline names for it."""
    proba = model.predict_proba(X)
    assert proba.shape == (len(X), model.n_classes)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    labels = model.present[np.asarray(model.pipeline.predict(X)).astype(int)]
    assert np.array_equal(model.predict(X), labels)
    return proba


# ---------------------------------------------------------------------------------------------
# Registration and parameters
# ---------------------------------------------------------------------------------------------


def test_tpot_is_registered_through_its_entry_point(plugins):
    registration = plugins.get("system", "tpot")
    assert registration.origin.distribution == "automl-tpot"
    system = plugins.create("system", "tpot", {"search_space": "graph-light", "cv": 5})
    assert isinstance(system, TPOTSystem) and system.cv == 5
    assert tpot.__version__ == "1.1.0"


def test_without_tpot_the_plugin_is_broken_with_the_install_command(monkeypatch):
    import automl_tpot.plugin

    real = automl_tpot.plugin.importlib.util.find_spec
    monkeypatch.setattr(
        automl_tpot.plugin.importlib.util,
        "find_spec",
        lambda name, *args: None if name == "tpot" else real(name, *args),
    )
    loaded = load_plugins(extra=[automl_tpot.plugin], entry_points=False)
    assert "pip install --no-deps 'tpot==1.1.0'" in str(loaded.broken)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"search_space": "mdr"}, "search_space must be one of"),
        ({"cv": 1}, "cv must be an integer >= 2"),
        ({"population_size": 0}, "population_size must be a positive integer"),
        ({"generations": 2.5}, "generations must be a positive integer"),
        ({"early_stop": 0}, "early_stop must be a positive integer"),
        ({"max_eval_time_mins": -1}, "max_eval_time_mins must be positive minutes"),
        ({"reserve": 1.0}, r"reserve must be in \[0, 1\)"),
        ({"processes": "yes"}, "processes must be true or false"),
    ],
)
def test_a_bad_parameter_is_a_clear_error(plugins, params, message):
    with pytest.raises(ValueError, match=f"^tpot: {message}"):
        plugins.create("system", "tpot", params)


def test_an_unknown_parameter_lists_the_known_ones(plugins):
    with pytest.raises(PluginError, match="Its parameters: search_space, cv, population_size"):
        plugins.create("system", "tpot", {"scorers": ["accuracy"]})


# ---------------------------------------------------------------------------------------------
# Real searches
# ---------------------------------------------------------------------------------------------


def test_classification_within_budget_with_probabilities_in_class_order(plugins, wine, tmp_path):
    X_train, X_test, y_train, y_test = wine
    system = plugins.create("system", "tpot", FAST)
    result, elapsed = fit(system, X_train, y_train, tmp_path, budget=12)

    assert elapsed <= 12 + SLACK
    proba = check_class_order(result.model, X_test)
    assert proba.shape == (len(X_test), 3)
    assert balanced_accuracy_score(y_test, proba.argmax(axis=1)) > 0.6  # chance: 0.33
    check_curve(result, elapsed)
    assert result.info["tpot_version"] == "1.1.0" and result.info["metric"] == "balanced_accuracy"
    individuals = pd.read_csv(tmp_path / "tpot_individuals.csv")
    assert len(individuals) >= len(result.curve) and (tmp_path / "tpot.out").exists()
    restored = pickle.loads(pickle.dumps(result.model))
    np.testing.assert_allclose(restored.predict_proba(X_test), proba)


#: The losses ``shifted_score`` computed, by thread. Dask hands its workers a copy of TPOT's
#: objective, metric included; a module-level function and list are shared by reference.
SHIFTED_LOSSES: dict[int, list[float]] = defaultdict(list)


def shifted_score(y: np.ndarray, proba: np.ndarray) -> float:
    """The balanced accuracy, recording the loss of a metric whose optimum is 11."""
    value = get_metric("balanced_accuracy").score(y, proba)
    SHIFTED_LOSSES[threading.get_ident()].append(11.0 - value)
    return value


def test_tpot_maximises_minus_the_runs_loss(wine, tmp_path):
    """A metric with its optimum at 11: every loss TPOT reports lies in [10, 11], and each
    finite one is the mean of the metric's losses on ``cv`` consecutive folds (TPOT runs each
    evaluation in a thread of its own, so the metric's calls are grouped by thread)."""
    X_train, _, y_train, _ = wine
    SHIFTED_LOSSES.clear()
    shifted = Metric("shifted", "classification", shifted_score, optimum=11.0)
    system = TPOTSystem(**{**FAST, "population_size": 6, "generations": 1})
    result, _ = fit(system, X_train, y_train, tmp_path, metric=shifted, budget=15)

    finite = [loss for _, loss in result.curve if math.isfinite(loss)]
    assert finite and all(10 <= loss <= 11 for loss in finite)
    assert 10 <= result.validation_loss <= 11
    folds = FAST["cv"]
    means = [
        np.mean(calls[i : i + folds])
        for calls in list(SHIFTED_LOSSES.values())
        for i in range(len(calls) - folds + 1)
    ]
    assert all(any(loss == pytest.approx(mean) for mean in means) for loss in finite)


def test_a_rare_class_keeps_its_column(wine, tmp_path):
    X_train, X_test, y_train, _ = wine
    rare = np.flatnonzero(y_train == 1)[3:]  # class 1 keeps three rows: fewer than cv folds,
    keep = np.setdiff1d(np.arange(len(y_train)), rare)  # so TPOT searches without it
    X_rare, y_rare = X_train.iloc[keep], y_train[keep]
    system = TPOTSystem(**{**FAST, "cv": 5, "population_size": 6, "generations": 1})
    result, _ = fit(system, X_rare, y_rare, tmp_path, budget=15)

    proba = check_class_order(result.model, X_rare)
    assert proba[:, 1].max() > 0  # the final pipeline was fitted on every row, class 1's too
    assert check_class_order(result.model, X_test).shape == (len(X_test), 3)


def test_a_class_missing_from_the_rows_gets_a_zero_column(wine, tmp_path):
    X_train, _, y_train, _ = wine
    rows = y_train != 1  # labels 0 and 2: TPOT gets the codes 0 and 1
    system = TPOTSystem(**{**FAST, "population_size": 6, "generations": 1})
    result, _ = fit(system, X_train[rows], y_train[rows], tmp_path, budget=15)

    proba = check_class_order(result.model, X_train[rows])
    assert np.all(proba[:, 1] == 0)
    assert balanced_accuracy_score(y_train[rows], proba.argmax(axis=1)) > 0.9


def test_regression(plugins, diabetes, tmp_path):
    X_train, X_test, y_train, y_test = diabetes
    system = plugins.create("system", "tpot", FAST)
    result, elapsed = fit(system, X_train, y_train, tmp_path, task="regression", metric="r2",
                          budget=10)  # fmt: skip

    assert elapsed <= 10 + SLACK
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
        fit(TPOTSystem(**FAST), X_train, y_train + 0.5, tmp_path, budget=5)


def test_the_curve_is_read_from_tpots_individuals():
    individuals = pd.DataFrame(
        {
            SCORE_COLUMN: [-0.25, np.nan, np.nan, np.nan, -0.5],
            "Eval Error": [None, "INVALID", "TIMEOUT", None, None],
            "Completed Timestamp": [102.0, 101.0, 103.0, 104.0, np.nan],
        }
    )
    # Evaluated, failed and timed out are kept (by completion); cancelled and pending are not.
    assert read_curve(individuals, start=100.0) == [(1.0, math.inf), (2.0, 0.25), (3.0, math.inf)]
