"""The conformance kit's checks of a whole AutoML system (``System``, this distribution's
kind), found by the kit through the ``automl_core.checks`` entry point."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from automl_bench.contracts import System, SystemResult
from automl_core.metrics import get_metric
from automl_core.testing.components import Component, check
from automl_core.testing.data_checks import small_frame

SYSTEM = "system"
#: A budget short enough for a test, long enough for a system to fit something.
BUDGET_S = 8.0


#: One fit per (system, parameters, task) for all the checks: a fit costs seconds.
_FITS: dict[tuple[str, str, str], tuple[SystemResult, np.ndarray]] = {}
#: The labels a classification fit gets: a subset of 0..k-1 with a gap, as the System
#: contract allows (a class absent from the training rows).
LABELS = np.array([0, 2, 3])


def fitted(component: Component, task: str) -> tuple[SystemResult, np.ndarray]:
    """The system fitted on the kit's small frame for ``task`` (once); its result and the
    target it was given."""
    key = (component.id, repr(sorted(component.params.items())), task)
    if key not in _FITS:
        _FITS[key] = _fit(component, task)
    return _FITS[key]


def _fit(component: Component, task: str) -> tuple[SystemResult, np.ndarray]:
    frame, codes = small_frame(0, rows=120)
    if task == "classification":
        X, y = frame, LABELS[codes]
    else:
        X, y = frame.drop(columns="number"), frame["number"].to_numpy() * 2 + codes
    metric = get_metric("balanced_accuracy" if task == "classification" else "rmse", task)
    system: System = component.build()
    with tempfile.TemporaryDirectory() as workdir:
        result = system.fit(
            X,
            y,
            task=task,
            metric=metric,
            time_budget=BUDGET_S,
            seed=0,
            n_jobs=1,
            workdir=Path(workdir),
        )
    assert isinstance(result, SystemResult), f"fit() returned {type(result).__name__}"
    return result, y


@check(SYSTEM)
def check_system_predicts_probabilities_of_the_training_labels(component: Component) -> None:
    """A classifier trained on labels 0, 2 and 3 (a subset of ``0..k-1``, as the contract
    allows) has ``classes_`` [0, 2, 3], and
    ``predict_proba`` gives one column per label, rows summing to 1 (the ablation places
    them among all the dataset's classes)."""
    result, y = fitted(component, "classification")
    frame, _ = small_frame(1, rows=30)
    classes = np.asarray(result.model.classes_)
    expected = sorted(np.unique(y).tolist())
    assert classes.tolist() == expected, f"classes_ {classes.tolist()}, expected {expected}"
    proba = np.asarray(result.model.predict_proba(frame), dtype=float)
    assert proba.shape == (30, len(classes)), f"predict_proba of 30 rows: shape {proba.shape}"
    assert np.allclose(proba.sum(axis=1), 1.0, atol=1e-6), "probability rows do not sum to 1"


@check(SYSTEM)
def check_system_predicts_a_number_per_row_in_regression(component: Component) -> None:
    """A regressor's model predicts one finite number per row."""
    result, _ = fitted(component, "regression")
    frame, _ = small_frame(1, rows=30)
    predicted = np.asarray(result.model.predict(frame.drop(columns="number")), dtype=float)
    assert predicted.shape == (30,) and np.isfinite(predicted).all(), f"predict: {predicted}"


@check(SYSTEM)
def check_system_reports_its_search_in_the_core_convention(component: Component) -> None:
    """``curve`` is one (seconds since the fit began, validation loss) per configuration
    evaluated (at least one), in order of time; losses are the core's (lower is better, inf for a
    failure), and ``validation_loss`` is finite or None."""
    result, _ = fitted(component, "classification")
    assert result.curve, "the curve is empty: every configuration evaluated belongs in it"
    seconds = [point[0] for point in result.curve]
    assert seconds == sorted(seconds) and all(s >= 0 for s in seconds), f"curve {result.curve}"
    assert all(not np.isnan(point[1]) for point in result.curve), "a NaN loss in the curve"
    loss = result.validation_loss
    assert loss is None or np.isfinite(loss), f"validation_loss {loss}"
