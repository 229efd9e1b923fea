"""Lets the tests run from a checkout without installing the plugin first (the entry-point
test needs it installed), and the small real datasets the tests share."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_wine
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def with_categories_and_gaps(X: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """``X`` with a categorical column, an object column with None, and 10 % NaN in the first
    numeric column: what an ablation's ``fit`` is handed."""
    rng = np.random.default_rng(seed)
    X = X.copy()
    X["colour"] = pd.Categorical(rng.choice(["red", "green", "blue"], len(X)))
    X["origin"] = pd.Series(rng.choice(["north", "south", None], len(X)), dtype=object)
    X.loc[rng.random(len(X)) < 0.1, X.columns[0]] = np.nan
    return X


@pytest.fixture(scope="session")
def wine() -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    """Wine (178 rows, 3 classes) with categorical columns and NaNs: X_train, X_test,
    y_train, y_test, stratified, seeded."""
    X, y = load_wine(return_X_y=True, as_frame=True)
    X = with_categories_and_gaps(X)
    return tuple(train_test_split(X, y.to_numpy(), test_size=0.3, stratify=y, random_state=0))


@pytest.fixture(scope="session")
def diabetes() -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    """Diabetes (442 rows, a float target) with categorical columns and NaNs."""
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X = with_categories_and_gaps(X)
    return tuple(train_test_split(X, y.to_numpy(), test_size=0.3, random_state=0))
