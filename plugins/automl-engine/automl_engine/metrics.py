"""Metrics, and the losses the search minimises.

Every metric becomes a loss where lower is better: ``loss = optimum - score`` for metrics
where greater is better (so a perfect model has loss 0, as in auto-sklearn), and the metric
itself for error metrics (log loss, RMSE...). Classification metrics receive class
probabilities (n x k), so that one stored prediction serves every metric and ensembling.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from sklearn import metrics as skm

from automl_core.errors import AutoMLError


@dataclass(frozen=True)
class Metric:
    """A named score with its direction and what it needs as input."""

    name: str
    task: str
    score: Callable[[np.ndarray, np.ndarray], float]
    greater_is_better: bool = True
    optimum: float = 1.0

    def loss(self, y_true: np.ndarray, y_pred: np.ndarray) -> float:
        """The loss (lower is better) of predictions: probabilities or values."""
        return self.loss_of_score(float(self.score(y_true, y_pred)))

    def loss_of_score(self, score: float) -> float:
        """The loss a value of the metric stands for (``optimum - score`` when greater is
        better, the score itself for error metrics)."""
        return self.optimum - score if self.greater_is_better else score

    def score_of_loss(self, loss: float) -> float:
        """The value of the metric a loss stands for: the inverse of :meth:`loss_of_score`."""
        return self.optimum - loss if self.greater_is_better else loss


def _labels(proba: np.ndarray) -> np.ndarray:
    return np.argmax(proba, axis=1)


def _confusion(y: np.ndarray, proba: np.ndarray) -> np.ndarray:
    """The confusion matrix (true label x predicted label) of the most probable labels.

    Computed with one ``bincount`` rather than scikit-learn's metrics, which validate their
    input on every call: an ensemble selection scores thousands of blends of the same
    validation rows, and there the validation cost 40 times the arithmetic (3.3 ms against
    0.08 ms on 6,600 rows). The label metrics below equal scikit-learn's (tested).
    """
    labels = np.asarray(y, dtype=np.int64)
    predicted = _labels(proba)
    k = max(proba.shape[1], int(labels.max(initial=-1)) + 1)
    return np.bincount(labels * k + predicted, minlength=k * k).reshape(k, k)


def _accuracy(y: np.ndarray, proba: np.ndarray) -> float:
    return float(np.mean(np.asarray(y) == _labels(proba))) if len(y) else 0.0


def _balanced_accuracy(y: np.ndarray, proba: np.ndarray) -> float:
    """The mean recall over the classes present in ``y`` (scikit-learn's definition)."""
    confusion = _confusion(y, proba)
    support = confusion.sum(axis=1)
    present = support > 0
    return float(np.mean(np.diag(confusion)[present] / support[present]))


def _roc_auc(y: np.ndarray, proba: np.ndarray) -> float:
    if proba.shape[1] == 2:
        return float(skm.roc_auc_score(y, proba[:, 1]))
    return float(skm.roc_auc_score(y, proba, multi_class="ovr", labels=np.arange(proba.shape[1])))


def _log_loss(y: np.ndarray, proba: np.ndarray) -> float:
    return float(skm.log_loss(y, proba, labels=np.arange(proba.shape[1])))


def _f1_macro(y: np.ndarray, proba: np.ndarray) -> float:
    """The mean F1 over the labels that are true or predicted somewhere (a label with no
    true positive scores 0), as scikit-learn's ``f1_score(average="macro")``."""
    confusion = _confusion(y, proba)
    hits = np.diag(confusion).astype(float)
    seen = confusion.sum(axis=0) + confusion.sum(axis=1)
    present = seen > 0
    return float(np.mean(2 * hits[present] / seen[present]))


def _rmse(y: np.ndarray, pred: np.ndarray) -> float:
    return float(np.sqrt(skm.mean_squared_error(y, pred)))


#: Classification metrics take integer labels 0..k-1 and an (n, k) probability matrix. Every
#: score is a module-level function, so that a metric pickles (a worker process, a peer
#: system's saved model).
CLASSIFICATION = {
    "accuracy": Metric("accuracy", "classification", _accuracy),
    "balanced_accuracy": Metric("balanced_accuracy", "classification", _balanced_accuracy),
    "roc_auc": Metric("roc_auc", "classification", _roc_auc),
    "log_loss": Metric("log_loss", "classification", _log_loss, False, 0.0),
    "f1_macro": Metric("f1_macro", "classification", _f1_macro),
}

REGRESSION = {
    "r2": Metric("r2", "regression", skm.r2_score),
    "rmse": Metric("rmse", "regression", _rmse, False, 0.0),
    "mse": Metric("mse", "regression", skm.mean_squared_error, False, 0.0),
    "mae": Metric("mae", "regression", skm.mean_absolute_error, False, 0.0),
}

METRICS = {**CLASSIFICATION, **REGRESSION}
DEFAULT_METRIC = {"classification": "balanced_accuracy", "regression": "r2"}


def get_metric(name: str, task: str | None = None) -> Metric:
    """The metric called ``name``; an error lists the ones that fit the task."""
    metric = METRICS.get(name)
    if metric is None or (task is not None and metric.task != task):
        fitting = sorted(n for n, m in METRICS.items() if task is None or m.task == task)
        raise AutoMLError(f"unknown {task or ''} metric {name!r}; choose one of {fitting}")
    return metric


def metric_names(task: str | None = None) -> list[str]:
    return sorted(n for n, m in METRICS.items() if task is None or m.task == task)


def normalised_regret(loss: ArrayLike, best: float, worst: float) -> np.ndarray:
    """``(loss - best) / (worst - best)``, elementwise: 0 for the best candidate, 1 for the
    worst (0 when all are equally good). A single loss gives a 0-d array (``float()`` it)."""
    loss = np.asarray(loss, dtype=float)
    span = worst - best
    return np.zeros_like(loss) if span <= 0 else (loss - best) / span
