"""A dataset as Dida reads it: numbers only, nothing missing (the thesis's preprocessing).

Categorical columns are one-hot encoded (at most ``MAX_CATEGORIES`` levels each, the rarest
grouped), missing numbers imputed by the column's mean and missing categories by the most
frequent one (the thesis imputes the median of a categorical, the code's one-hot of it); the
network standardises each patch itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from automl_engine.dataset import is_categorical

#: Levels of one categorical column kept as their own one-hot columns; the rest share one.
MAX_CATEGORIES = 20


def numeric_table(X: pd.DataFrame, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(features, labels)``: ``X`` as a finite float matrix, ``y`` as given."""
    if len(X) != len(y):
        raise ValueError(f"Dida: {len(X)} rows of features but {len(y)} labels")
    parts = []
    for name in X.columns:
        column = X[name]
        if is_categorical(column):
            parts.append(_one_hot(column.astype("object")))
        else:
            values = pd.to_numeric(column, errors="coerce").astype(float)
            mean = values.mean()
            parts.append(values.fillna(0.0 if np.isnan(mean) else mean).to_frame())
    if not parts:
        raise ValueError("Dida: the dataset has no feature")
    matrix = pd.concat(parts, axis=1).to_numpy(dtype=float)
    return np.nan_to_num(matrix, nan=0.0, posinf=0.0, neginf=0.0), np.asarray(y)


def _one_hot(column: pd.Series) -> pd.DataFrame:
    filled = column.fillna(column.mode().iloc[0] if column.notna().any() else "missing")
    counts = filled.value_counts()
    kept = set(counts.index[:MAX_CATEGORIES])
    grouped = filled.where(filled.isin(kept), "other")
    return pd.get_dummies(grouped.astype(str), dtype=float)
