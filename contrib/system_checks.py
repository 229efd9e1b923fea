"""Checks every whole-system peer (``flaml``, ``tpot``) must pass, as the ablation calls and
scores it, and the metrics their tests share. Imported by the systems' tests
(``contrib/conftest.py`` puts this folder on the path)."""

from __future__ import annotations

import json
import pickle
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from automl_bench.checks import check_classes, check_curve
from automl_bench.contracts import System, SystemResult
from sklearn.metrics import balanced_accuracy_score, r2_score, roc_auc_score

from automl_core.plugins import Plugins
from automl_engine.evaluator import predict_scores
from automl_engine.metrics import Metric, get_metric

#: Wall-clock allowance on top of the budget on a loaded 2-core CI machine: the 5 s the
#: estimators promise (docs/estimator.md).
SLACK = 5.0
#: A budget that work-bounded fits (``max_iter``, ``generations``) never reach: their results
#: do not depend on how many trials a loaded machine fits in a few seconds.
GENEROUS = 120.0


def fit(
    system: System,
    X: pd.DataFrame,
    y: np.ndarray,
    workdir: Path,
    *,
    task: str = "classification",
    metric: str | Metric = "balanced_accuracy",
    budget: float = GENEROUS,
) -> tuple[SystemResult, float]:
    """``system.fit`` as the ablation calls it, and its wall time."""
    metric = get_metric(metric) if isinstance(metric, str) else metric
    start = time.monotonic()
    result = system.fit(
        X, y, task=task, metric=metric, time_budget=budget, seed=0, n_jobs=1, workdir=workdir
    )
    return result, time.monotonic() - start


def check_default_search(
    plugins: Plugins,
    name: str,
    wine: tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray],
    workdir: Path,
    budget: float,
) -> SystemResult:
    """The system ``name`` built with its defaults, as ``--peer NAME`` builds it, searches
    wine for ``budget`` seconds: it stops within the budget (plus :data:`SLACK`), its model
    follows scikit-learn's class convention and predicts the same after pickling (the run's
    metric inside it), its curve is sound and its info JSON-safe (the ablation writes it to
    peer.json). The result, for the system's own checks."""
    X_train, X_test, y_train, _ = wine
    system = plugins.create("system", name, {})
    result, elapsed = fit(system, X_train, y_train, workdir, budget=budget)

    assert elapsed <= budget + SLACK
    proba = check_classes(result.model, X_test, y_train)
    check_curve(result, elapsed)
    json.dumps(result.info)
    restored = pickle.loads(pickle.dumps(result.model))
    np.testing.assert_allclose(restored.predict_proba(X_test), proba)
    return result


def check_missing_class(model: Any, X: pd.DataFrame, y: np.ndarray) -> None:
    """A model trained on the labels 0 and 2 of three classes: two columns, which the core's
    ``predict_scores`` places as classes 0 and 2 among three, class 1's column zero; and the
    model separates the two."""
    check_classes(model, X, [0, 2])
    scores = predict_scores(model, X, 3)
    assert scores.shape == (len(X), 3) and np.all(scores[:, 1] == 0)
    assert balanced_accuracy_score(y, scores.argmax(axis=1)) > 0.9


def check_regression(
    result: SystemResult, elapsed: float, X_test: pd.DataFrame, y_test: np.ndarray
) -> None:
    """Values of the right shape, better than the mean on the test rows, a validation loss
    ``1 - r2`` in the core's convention, and no ``predict_proba``."""
    predictions = result.model.predict(X_test)
    assert predictions.shape == (len(X_test),)
    assert r2_score(y_test, predictions) > 0.25
    assert result.validation_loss is not None and 0 < result.validation_loss < 0.8
    with pytest.raises(AttributeError):
        result.model.predict_proba(X_test)
    check_curve(result, elapsed)


class FixedClassifier:
    """A fitted classifier's stand-in: ``classes_`` and the ``predict_proba`` it returns."""

    def __init__(self, classes: list[int], proba: np.ndarray) -> None:
        self.classes_ = np.asarray(classes)
        self.proba = np.asarray(proba, dtype=float)

    def predict_proba(self, X: Any) -> np.ndarray:
        return self.proba


def check_metric_on_codes(loss: Callable[[Metric, Any, pd.DataFrame, np.ndarray], float]) -> None:
    """``loss(metric, estimator, X, codes)``: a system's in-search loss of a learner that its
    library trained on the training labels {0, 2} of three classes, as the codes 0 and 1. It
    is the metric's on the codes: finite, and the value scikit-learn gives (in label space,
    with a column per class 0..2, ROC AUC is undefined: class 1 has no rows)."""
    codes = np.array([0, 0, 1, 1, 0, 1])
    X = pd.DataFrame({"x": np.arange(len(codes))})
    perfect = FixedClassifier([0, 1], np.eye(2)[codes])
    proba = np.array([[0.8, 0.2], [0.4, 0.6], [0.3, 0.7], [0.6, 0.4], [0.9, 0.1], [0.2, 0.8]])
    imperfect = FixedClassifier([0, 1], proba)
    for name, expected in (
        ("roc_auc", 1 - roc_auc_score(codes, proba[:, 1])),  # 1/9
        ("balanced_accuracy", 1 - balanced_accuracy_score(codes, proba.argmax(axis=1))),
    ):
        metric = get_metric(name)
        assert loss(metric, perfect, X, codes) == pytest.approx(0.0)
        assert loss(metric, imperfect, X, codes) == pytest.approx(expected)
        assert 0 < expected < 1


#: The losses ``shifted_score`` computed, by thread. TPOT's Dask workers get a copy of TPOT's
#: objective, metric included; a module-level function and dict are shared by reference.
SHIFTED_LOSSES: dict[int, list[float]] = defaultdict(list)


def shifted_score(y: np.ndarray, proba: np.ndarray) -> float:
    """The balanced accuracy, recording the loss of a metric whose optimum is 11."""
    value = get_metric("balanced_accuracy").score(y, proba)
    SHIFTED_LOSSES[threading.get_ident()].append(11.0 - value)
    return value


def shifted_metric() -> Metric:
    """The balanced accuracy with its optimum at 11, so its losses lie in [10, 11]: a system
    that reports them optimises the run's metric, not one of its own. ``SHIFTED_LOSSES`` is
    cleared, to record the losses of the next fit."""
    SHIFTED_LOSSES.clear()
    return Metric("shifted", "classification", shifted_score, optimum=11.0)
