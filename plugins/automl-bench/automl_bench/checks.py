"""The conformance kit's checks of a whole AutoML system (``System``, this distribution's
kind), found by the kit through the ``automl_core.checks`` entry point."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from automl_bench.contracts import System, SystemResult
from automl_engine.metrics import get_metric
from automl_engine.testing.components import Component, check, describe_kind
from automl_engine.testing.data_checks import small_frame

SYSTEM = "system"
describe_kind(
    SYSTEM, "Whole AutoML systems (automl-bench's kind, its checks in `automl_bench.checks`)"
)
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


def check_classes(model: Any, X: pd.DataFrame, labels: Any) -> np.ndarray:
    """The model follows scikit-learn: ``classes_`` are ``labels`` (those it was trained on,
    sorted), ``predict_proba`` has a column per class in that order, each row a distribution,
    and ``predict`` gives the class of the largest column. The probabilities."""
    np.testing.assert_array_equal(model.classes_, np.unique(labels))
    proba = np.asarray(model.predict_proba(X), dtype=float)
    assert proba.shape == (len(X), len(model.classes_)), (
        f"predict_proba of {len(X)} rows: shape {proba.shape}, expected one column per class"
    )
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])
    return proba


def check_curve(result: SystemResult, elapsed: float | None = None) -> None:
    """Seconds increase from 0 (and lie within the fit's ``elapsed`` seconds when given); at
    least one finite loss; the returned configuration's loss is the best of the curve (the
    core's convention: lower is better)."""
    assert result.curve, "the curve is empty: every configuration evaluated belongs in it"
    seconds = [s for s, _ in result.curve]
    losses = [loss for _, loss in result.curve]
    assert seconds == sorted(seconds) and seconds[0] >= 0, f"curve seconds {seconds}"
    assert elapsed is None or seconds[-1] <= elapsed, f"curve ends at {seconds[-1]} > {elapsed}"
    assert any(math.isfinite(loss) for loss in losses), f"no finite loss in the curve {losses}"
    assert result.validation_loss is not None and math.isclose(
        result.validation_loss, min(losses), rel_tol=1e-9, abs_tol=1e-12
    ), f"validation_loss {result.validation_loss} is not the best of the curve, {min(losses)}"


@check(SYSTEM)
def check_system_predicts_probabilities_of_the_training_labels(component: Component) -> None:
    """A classifier trained on labels 0, 2 and 3 (a subset of ``0..k-1``, as the contract
    allows) follows scikit-learn's convention (:func:`check_classes`): ``classes_`` [0, 2, 3],
    one ``predict_proba`` column per class, rows summing to 1, ``predict`` the largest (the
    ablation places the columns among all the dataset's classes)."""
    result, y = fitted(component, "classification")
    frame, _ = small_frame(1, rows=30)
    check_classes(result.model, frame, y)


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
    evaluated, in order of time, and ``validation_loss`` is the best of it: losses in the
    core's convention (lower is better, inf for a failure; :func:`check_curve`); ``info``
    can be written as JSON (the ablation stores it)."""
    result, _ = fitted(component, "classification")
    check_curve(result)
    json.dumps(result.info)
