"""Shared test functions for the random-forest surrogate's tests (seeded, small)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

# Hartmann-6 (Dixon & Szegő, 1978): a standard 6-d test function on [0, 1]^6 with four local
# minima, the global one about -3.32; its values are the "losses" of these tests.
_HARTMANN_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_HARTMANN_A = np.array(
    [
        [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
        [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
        [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
        [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
    ]
)
_HARTMANN_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def _hartmann6(X: np.ndarray) -> np.ndarray:
    distances = np.sum(_HARTMANN_A * (X[:, None, :] - _HARTMANN_P) ** 2, axis=2)
    return -np.sum(_HARTMANN_ALPHA * np.exp(-distances), axis=1)


@pytest.fixture(scope="session")
def hartmann6() -> Callable[[np.ndarray], np.ndarray]:
    """``hartmann6(X)``: the Hartmann-6 value of each row of X (n x 6, in [0, 1])."""
    return _hartmann6


@pytest.fixture(scope="session")
def hartmann_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """200 training and 500 held-out uniform points of Hartmann-6: X, y, X_test, y_test."""
    rng = np.random.default_rng(0)
    X, X_test = rng.random((200, 6)), rng.random((500, 6))
    return X, _hartmann6(X), X_test, _hartmann6(X_test)
