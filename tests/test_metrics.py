"""The metrics' loss convention, their pickling and their values."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

from automl_engine.evaluator import scores_on_codes
from automl_engine.metrics import METRICS, get_metric


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_metric_pickles_and_scores_the_same_after(name: str) -> None:
    """Worker processes and a peer's saved model carry metrics: they must pickle."""
    metric = get_metric(name)
    restored = pickle.loads(pickle.dumps(metric))
    rng = np.random.default_rng(0)
    if metric.task == "classification":
        y = np.array([0, 1, 2, 0, 1, 2])
        predictions = rng.dirichlet(np.ones(3), size=6)
    else:
        y, predictions = rng.normal(size=6), rng.normal(size=6)
    assert restored.loss(y, predictions) == metric.loss(y, predictions)


@pytest.mark.parametrize(
    ("name", "score", "loss"), [("balanced_accuracy", 0.8, 0.2), ("rmse", 3.0, 3.0)]
)
def test_a_score_and_its_loss_convert_both_ways(name: str, score: float, loss: float) -> None:
    metric = get_metric(name)
    assert metric.loss_of_score(score) == pytest.approx(loss)
    assert metric.score_of_loss(loss) == pytest.approx(score)


def test_scores_on_codes_keep_a_column_per_code_present() -> None:
    """A classifier trained on the codes {0, 2} scored on rows of the codes {0, 2}: two
    columns, the targets re-coded 0 and 1, so ROC AUC is defined (with a column for the
    absent code 1 it is not)."""

    class Fixed:
        classes_ = np.array([0, 2])

        def predict_proba(self, X: object) -> np.ndarray:
            return np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])

    y, proba = scores_on_codes(Fixed(), np.zeros((3, 1)), np.array([0, 2, 2]))
    np.testing.assert_array_equal(y, [0, 1, 1])
    np.testing.assert_allclose(proba, [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    assert get_metric("roc_auc").loss(y, proba) == pytest.approx(0.0)  # 0.8, 0.4 > 0.1


@pytest.mark.parametrize(
    ("name", "reference"),
    [
        ("accuracy", lambda y, labels: skm.accuracy_score(y, labels)),
        ("balanced_accuracy", lambda y, labels: skm.balanced_accuracy_score(y, labels)),
        ("f1_macro", lambda y, labels: skm.f1_score(y, labels, average="macro", zero_division=0)),
    ],
)
def test_the_label_metrics_equal_scikit_learns(name: str, reference) -> None:
    """Computed from a confusion matrix for speed; the same values as scikit-learn's, with
    classes the predictions never name and classes only the predictions name."""
    rng = np.random.default_rng(0)
    metric = get_metric(name)
    for n, k in [(50, 2), (200, 3), (31, 5), (7, 4)]:
        y = rng.integers(0, k, n)
        proba = rng.random((n, k))
        proba[:, 0] *= 0.1  # class 0 rarely predicted
        if k > 3:
            y[y == k - 1] = 0  # the last class predicted but never true
        labels = proba.argmax(axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = reference(y, labels)
        assert metric.score(y, proba) == pytest.approx(expected, abs=1e-12)
