"""The tpot system: found through its entry point, a real TPOT 1.x search on real data within
its budget, optimising the run's own metric on TPOT's label codes, a model that follows
scikit-learn's class convention (a rare class and a class absent from the training rows
included), regression, and clear errors for bad parameters. The checks every system passes
are in ``contrib/system_checks.py``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("automl_tpot", reason="needs automl-tpot: see contrib/automl-tpot/README.md")

from automl_tpot.system import SCORE_COLUMN, TPOTScorer, TPOTSystem, import_tpot, read_curve

try:
    tpot = import_tpot()
except ImportError:  # pragma: no cover -- the plugin is installed, TPOT is not
    pytest.skip("needs TPOT: pip install --no-deps tpot==1.1.0", allow_module_level=True)

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
from automl_core.plugins import load_plugins

#: Bounded work for the searches that check results: TPOT's light space, 3-fold
#: cross-validation, the initial population of 8 pipelines only (TPOT's search is seeded, so
#: these are the same 8 pipelines whatever the machine's load).
ONE_GENERATION = {"search_space": "linear-light", "cv": 3, "population_size": 8, "generations": 1}

# ---------------------------------------------------------------------------------------------
# Registration, parameters and the scorer
# ---------------------------------------------------------------------------------------------


def test_tpot_is_registered_through_its_entry_point(system_plugins):
    registration = system_plugins.get("system", "tpot")
    assert registration.origin.distribution == "automl-tpot"
    system = system_plugins.create("system", "tpot", {"search_space": "graph-light", "cv": 3})
    assert isinstance(system, TPOTSystem) and system.cv == 3
    assert tpot.__version__ == "1.1.0"


def test_without_tpot_the_plugin_is_broken_with_the_install_command(monkeypatch):
    import automl_tpot.plugin

    real = automl_tpot.plugin.importlib.util.find_spec
    monkeypatch.setattr(
        automl_tpot.plugin.importlib.util,
        "find_spec",
        lambda name, *args: None if name == "tpot" else real(name, *args),
    )
    import automl_bench.plugin

    loaded = load_plugins(extra=[automl_bench.plugin, automl_tpot.plugin], entry_points=False)
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
def test_a_bad_parameter_is_a_clear_error(system_plugins, params, message):
    # The system's own message, inside the core's "cannot build system ..." error.
    with pytest.raises(PluginError, match=f"cannot build system 'tpot'.*: tpot: {message}"):
        system_plugins.create("system", "tpot", params)


def test_an_unknown_parameter_lists_the_known_ones(system_plugins):
    with pytest.raises(PluginError, match="Its parameters: search_space, cv, population_size"):
        system_plugins.create("system", "tpot", {"scorers": ["accuracy"]})


def test_the_scorer_scores_on_tpots_codes():
    """TPOT's pipelines and ``y`` hold the codes it was given: a pipeline trained on the
    labels {0, 2} is scored as one of two classes, so ROC AUC is finite (in label space it
    was NaN)."""
    check_metric_on_codes(
        lambda metric, estimator, X, codes: (
            -TPOTScorer(metric, "classification")(estimator, X, codes)
        )
    )


# ---------------------------------------------------------------------------------------------
# Real searches: one against the clock, the others bounded by generations
# ---------------------------------------------------------------------------------------------


def test_a_search_with_the_defaults_stays_within_its_budget(system_plugins, wine, tmp_path):
    """The defaults evaluate pipelines within a budget of seconds (TPOT's own do not)."""
    result = check_default_search(system_plugins, "tpot", wine, tmp_path, budget=15)

    assert result.info["tpot_version"] == "1.1.0"
    assert (result.info["search_space"], result.info["cv"]) == ("linear-light", 5)
    individuals = pd.read_csv(tmp_path / "tpot_individuals.csv")
    assert len(individuals) >= len(result.curve) and (tmp_path / "tpot.out").exists()


def test_tpot_maximises_minus_the_runs_loss(wine, tmp_path):
    """A metric with its optimum at 11: every loss TPOT reports lies in [10, 11], and each
    finite one is the mean of the metric's losses on ``cv`` consecutive folds (TPOT runs each
    evaluation in a thread of its own, so the metric's calls are grouped by thread)."""
    X_train, X_test, y_train, y_test = wine
    system = TPOTSystem(**ONE_GENERATION)
    result, elapsed = fit(system, X_train, y_train, tmp_path, metric=shifted_metric())

    finite = [loss for _, loss in result.curve if math.isfinite(loss)]
    assert finite and all(10 <= loss <= 11 for loss in finite)
    assert 10 <= result.validation_loss <= 11
    folds = ONE_GENERATION["cv"]
    means = [
        np.mean(calls[i : i + folds])
        for calls in list(SHIFTED_LOSSES.values())
        for i in range(len(calls) - folds + 1)
    ]
    assert all(any(loss == pytest.approx(mean) for mean in means) for loss in finite)
    check_curve(result, elapsed)
    proba = check_classes(result.model, X_test, y_train)
    assert balanced_accuracy_score(y_test, proba.argmax(axis=1)) > 0.6  # chance: 0.33


def test_a_rare_class_keeps_its_column(wine, tmp_path):
    X_train, X_test, y_train, _ = wine
    rare = np.flatnonzero(y_train == 1)[3:]  # class 1 keeps three rows: fewer than cv folds,
    keep = np.setdiff1d(np.arange(len(y_train)), rare)  # so TPOT searches without it
    X_rare, y_rare = X_train.iloc[keep], y_train[keep]
    system = TPOTSystem(**{**ONE_GENERATION, "cv": 5})
    result, _ = fit(system, X_rare, y_rare, tmp_path)

    proba = check_classes(result.model, X_rare, y_rare)
    assert proba[:, 1].max() > 0  # the final pipeline was fitted on every row, class 1's too
    check_classes(result.model, X_test, y_rare)


def test_a_class_missing_from_the_training_rows(wine, tmp_path):
    """Labels 0 and 2, which TPOT gets as the codes 0 and 1, optimising ROC AUC: pipelines
    are scored (finite losses), and the core places the model's two columns as classes 0
    and 2."""
    X_train, _, y_train, _ = wine
    rows = y_train != 1
    system = TPOTSystem(**ONE_GENERATION)
    result, _ = fit(system, X_train[rows], y_train[rows], tmp_path, metric="roc_auc")

    assert any(math.isfinite(loss) for _, loss in result.curve)
    assert result.validation_loss < 0.1
    check_missing_class(result.model, X_train[rows], y_train[rows])


def test_regression(diabetes, tmp_path):
    X_train, X_test, y_train, y_test = diabetes
    system = TPOTSystem(**ONE_GENERATION)
    result, elapsed = fit(system, X_train, y_train, tmp_path, task="regression", metric="r2")

    assert not hasattr(result.model, "classes_")
    check_regression(result, elapsed, X_test, y_test)


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
