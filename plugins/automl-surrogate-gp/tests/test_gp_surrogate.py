"""The gp surrogate's behaviour: accuracy, uncertainty, determinism and robustness."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from automl_surrogate_gp import GPFallbackWarning, GPSurrogate

WIDTH = 6


def smooth_loss(X: np.ndarray) -> np.ndarray:
    """A smooth 6-d function with an interaction and a nearly irrelevant input."""
    return (
        np.sin(3 * X[:, 0]) * X[:, 1]
        + 4 * (X[:, 2] - 0.5) ** 2
        + np.cos(4 * X[:, 3] * X[:, 4])
        + 0.2 * X[:, 5]
    )


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X, X_test = rng.random((40, WIDTH)), rng.random((500, WIDTH))
    return X, smooth_loss(X), X_test, smooth_loss(X_test)


@pytest.fixture(scope="module")
def fitted(data) -> GPSurrogate:
    X, y, _, _ = data
    return GPSurrogate().fit(X, y)


def test_predicts_a_smooth_function_from_40_points(data, fitted):
    # Measured over 8 seeds: Spearman 0.90-0.98, MSE 3-19% of the constant predictor's.
    _, y, X_test, y_test = data
    mean, std = fitted.predict(X_test)
    assert mean.shape == std.shape == (len(X_test),)
    assert spearmanr(mean, y_test).statistic > 0.85
    constant_mse = np.mean((y_test - y.mean()) ** 2)
    assert np.mean((mean - y_test) ** 2) < 0.5 * constant_mse


def test_std_is_small_at_training_points_and_large_far_away(data, fitted):
    # Measured over 8 seeds: at most 0.12 x std(y) at training points, above 1.0 x far away.
    X, y, X_test, _ = data
    _, at_training = fitted.predict(X)
    _, between = fitted.predict(X_test)
    _, far = fitted.predict(np.full((1, WIDTH), 3.0))
    assert at_training.max() < 0.2 * y.std()
    assert far[0] > 0.5 * y.std()
    assert far[0] > np.median(between) > at_training.mean()


def test_mean_and_std_are_on_the_scale_of_the_losses(data):
    X, y, X_test, _ = data
    shifted = GPSurrogate().fit(X, 1000.0 + 50.0 * y)
    mean, std = shifted.predict(X_test)
    reference_mean, reference_std = GPSurrogate().fit(X, y).predict(X_test)
    np.testing.assert_allclose(mean, 1000.0 + 50.0 * reference_mean, rtol=1e-6)
    np.testing.assert_allclose(std, 50.0 * reference_std, rtol=1e-4, atol=1e-9)


def test_including_the_noise_widens_the_std(data, fitted):
    X, y, X_test, _ = data
    noisy = GPSurrogate(include_noise=True).fit(X, y)
    _, latent = fitted.predict(X_test)
    _, observed = noisy.predict(X_test)
    assert np.all(observed > latent)


def test_same_data_give_identical_predictions(data):
    X, y, X_test, _ = data
    runs = []
    for _ in range(2):
        surrogate = GPSurrogate()
        for n in (10, 20, 30):  # a search's sequence of warm-started refits
            surrogate.fit(X[:n], y[:n])
        runs.append(surrogate.predict(X_test))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


def test_warm_start_reaches_the_cold_fit(data):
    X, y, X_test, _ = data
    warm = GPSurrogate()
    warm.fit(X[:30], y[:30])
    warm.fit(X, y)
    cold = GPSurrogate(warm_start=False)
    cold.fit(X[:30], y[:30])
    cold.fit(X, y)
    warm_mean, _ = warm.predict(X_test)
    cold_mean, _ = cold.predict(X_test)
    assert np.max(np.abs(warm_mean - cold_mean)) < 0.05 * np.ptp(y)


def test_threads_are_restored(data):
    X, y, X_test, _ = data
    before = torch.get_num_threads()
    surrogate = GPSurrogate(threads=1).fit(X, y)
    surrogate.predict(X_test)
    assert torch.get_num_threads() == before


# -- robustness ----------------------------------------------------------------------------------
def _finite_fit(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fits and predicts on a few fresh points; fails the test on any warning."""
    probe = np.random.default_rng(1).random((5, X.shape[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mean, std = GPSurrogate().fit(X, y).predict(probe)
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std)) and np.all(std >= 0)
    return mean, std


def test_a_single_observation():
    mean, std = _finite_fit(np.full((1, 3), 0.5), np.array([0.25]))
    np.testing.assert_allclose(mean, 0.25)
    assert np.all(std > 0)


def test_constant_losses_predict_the_constant():
    X = np.random.default_rng(2).random((10, 3))
    mean, _ = _finite_fit(X, np.full(10, 0.7))
    np.testing.assert_allclose(mean, 0.7)


def test_duplicated_rows():
    X = np.random.default_rng(3).random((15, 3))
    _finite_fit(np.vstack([X, X, X]), np.tile(X.sum(axis=1), 3))
    one_row = np.repeat(X[:1], 30, axis=0)
    mean, _ = _finite_fit(one_row, np.random.default_rng(4).random(30))
    assert np.all((mean > 0) & (mean < 1))  # the average of the duplicated losses


def test_a_failing_cholesky_falls_back_to_the_training_mean(monkeypatch):
    def never_positive_definite(matrix, *args, **kwargs):
        factor, info = real_cholesky(matrix, *args, **kwargs)
        return factor, torch.ones_like(info)

    real_cholesky = torch.linalg.cholesky_ex
    monkeypatch.setattr(torch.linalg, "cholesky_ex", never_positive_definite)
    X = np.random.default_rng(5).random((20, 3))
    y = X.sum(axis=1)
    with pytest.warns(GPFallbackWarning, match="training mean"):
        surrogate = GPSurrogate().fit(X, y)
    mean, std = surrogate.predict(X[:4])
    np.testing.assert_allclose(mean, y.mean())
    np.testing.assert_allclose(std, y.std())
    assert surrogate.hyperparameters() is None


def test_a_cholesky_that_fails_at_first_is_retried(monkeypatch):
    calls = {"n": 0}

    def fails_five_times(matrix, *args, **kwargs):
        calls["n"] += 1
        factor, info = real_cholesky(matrix, *args, **kwargs)
        return (factor, torch.ones_like(info)) if calls["n"] <= 5 else (factor, info)

    real_cholesky = torch.linalg.cholesky_ex
    monkeypatch.setattr(torch.linalg, "cholesky_ex", fails_five_times)
    X = np.random.default_rng(6).random((20, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", GPFallbackWarning)
        surrogate = GPSurrogate().fit(X, X.sum(axis=1))
    mean, _ = surrogate.predict(X)
    np.testing.assert_allclose(mean, X.sum(axis=1), atol=0.05)


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("X", "y", "message"),
    [
        (np.ones((3, 2)), np.ones(2), "one loss per row"),
        (np.ones((3, 2)), np.array([0.0, np.inf, 1.0]), "non-finite loss"),
        (np.array([[0.0, np.nan]]), np.ones(1), "non-finite value"),
        (np.ones(3), np.ones(3), "2-d matrix"),
        (np.empty((0, 2)), np.empty(0), "at least one observation"),
    ],
)
def test_bad_training_data_is_refused(X, y, message):
    with pytest.raises(ValueError, match=message):
        GPSurrogate().fit(X, y)


def test_predict_checks_its_input(fitted):
    with pytest.raises(ValueError, match="kernel inputs"):
        fitted.predict(np.ones((2, WIDTH + 1)))
    with pytest.raises(RuntimeError, match="before fit"):
        GPSurrogate().predict(np.ones((2, WIDTH)))


@pytest.mark.parametrize(
    ("params", "message"),
    [({"iterations": -1}, "iterations"), ({"threads": 0}, "threads"), ({"jitter": 0}, "jitter")],
)
def test_bad_parameters_are_refused(params, message):
    with pytest.raises(ValueError, match=message):
        GPSurrogate(**params)


def test_predicting_no_rows(fitted):
    mean, std = fitted.predict(np.empty((0, WIDTH)))
    assert mean.shape == std.shape == (0,)
