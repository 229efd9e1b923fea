"""Shared data and spaces for the automl-sklearn tests (small, seeded, real data)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from automl_core.space import BuildContext
from automl_sklearn.plugin import COMPONENTS
from automl_sklearn.spaces import classification_space, regression_space
from automl_spaces.pipeline_space import PipelineSpace


@pytest.fixture(scope="session", autouse=True)
def _single_threaded() -> Iterator[None]:
    # One thread per fit, as in a search that runs trials in parallel: OpenMP (histogram
    # gradient boosting) and BLAS threads otherwise oversubscribe small machines badly.
    with threadpool_limits(1):
        yield


@pytest.fixture(autouse=True)
def _quiet() -> None:
    # Convergence and numerical warnings of sampled configurations are expected noise here;
    # scikit-learn's deprecations are not (a translation to today's scikit-learn is missing).
    for category in (ConvergenceWarning, RuntimeWarning, UserWarning):
        warnings.simplefilter("ignore", category)
    for category in (FutureWarning, DeprecationWarning):
        warnings.filterwarnings("error", category=category, module="sklearn")


@pytest.fixture(scope="session")
def classification() -> PipelineSpace:
    return classification_space(list(COMPONENTS))


@pytest.fixture(scope="session")
def regression() -> PipelineSpace:
    return regression_space(list(COMPONENTS))


@pytest.fixture(scope="session")
def cancer() -> tuple[pd.DataFrame, pd.DataFrame, pd.Series, pd.Series]:
    """Breast cancer: 200 training and 150 test rows."""
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return tuple(train_test_split(X, y, train_size=200, test_size=150, random_state=0))


@pytest.fixture(scope="session")
def diabetes() -> tuple[pd.DataFrame, pd.DataFrame, pd.Series, pd.Series]:
    """Diabetes: 250 training and 150 test rows."""
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return tuple(train_test_split(X, y, train_size=250, test_size=150, random_state=0))


def _build_default(space: PipelineSpace, stage: str, name: str, seed: int = 0) -> Any:
    only = space.restrict(include={stage: [name]})
    return only.build(only.default(), BuildContext(space.task, seed))


@pytest.fixture(scope="session")
def build_default() -> Callable[..., Any]:
    """``build_default(space, stage, name)``: the space's default pipeline with ``name`` (at
    its default hyper-parameters) in ``stage``."""
    return _build_default


def _mixed_frame(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Numeric, object, category and bool columns with missing values, and string labels
    that depend on both numeric and categorical columns."""
    rng = np.random.default_rng(seed)
    number = rng.normal(size=n)
    colour = rng.choice(["red", "green", "blue"], size=n)
    X = pd.DataFrame(
        {
            "number": number,
            "count": rng.integers(0, 10, size=n).astype(float),
            "colour": pd.Series(colour, dtype=object),
            "size": pd.Categorical(rng.choice(["S", "M", "L"], size=n)),
            "flag": rng.random(n) < 0.5,
        }
    )
    for column in ["number", "count", "colour", "size"]:
        X.loc[rng.random(n) < 0.1, column] = np.nan
    score = np.nan_to_num(X["number"].to_numpy()) + np.where(colour == "red", 1.5, 0.0)
    y = np.where(score > 0.5, "yes", "no")
    return X, y


@pytest.fixture(scope="session")
def mixed_frame() -> Callable[[int, int], tuple[pd.DataFrame, np.ndarray]]:
    """``mixed_frame(n, seed)``: a DataFrame of mixed dtypes with missing values, and string
    labels."""
    return _mixed_frame
