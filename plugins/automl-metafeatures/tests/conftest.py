"""Small seeded datasets shared by the meta-feature tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def mixed() -> tuple[pd.DataFrame, np.ndarray]:
    """120 rows: two numeric columns (one with missing values), a categorical column with a
    rare category and missing values, a bool column, and three unbalanced classes."""
    rng = np.random.default_rng(7)
    n = 120
    numeric = rng.normal(size=n)
    skewed = rng.exponential(size=n)
    skewed[rng.choice(n, 10, replace=False)] = np.nan
    colour = rng.choice(["red", "green", "blue"], size=n, p=[0.5, 0.3, 0.2]).astype(object)
    colour[0] = "violet"  # one row in 120: under 1 %, merged by the minority coalescer
    colour[rng.choice(np.arange(1, n), 6, replace=False)] = None
    X = pd.DataFrame(
        {
            "numeric": numeric,
            "skewed": skewed,
            "colour": pd.Categorical(colour),
            "flag": rng.random(n) < 0.3,
        }
    )
    y = rng.choice(np.array(["a", "b", "c"], dtype=object), size=n, p=[0.6, 0.3, 0.1])
    return X, y
