"""The meta-data's configurations as points of R^a, where Metabu's target representation lives.

Metabu compares two datasets by the optimal-transport cost between their top configurations,
so configurations must be numeric vectors in which distances mean something (thesis §6.3:
"Boolean and categorical hyper-parameters one-hot encoded"):

- a pool's configurations (``{"candidate": j}``: PMF, Tensor-OBOE, Oboe) are rows of its
  ``encodings``, each column scaled to [0, 1] over the pool;
- configurations given as hyper-parameter mappings (auto-sklearn's runs, ``automl data
  build``'s meta-data) are tabulated by name: a text or Boolean value one-hot (one column per
  value seen), a number scaled to [0, 1] over the configurations (on a log scale when all its
  values are positive and span more than two decades: learning rates, C, gamma), and a
  hyper-parameter a configuration lacks (inactive in a conditional space) 0 in all its columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from automl_core.contracts import MetaData

#: A positive hyper-parameter whose largest value is this many times its smallest is
#: compared on a log scale.
LOG_SPAN = 100.0


def configuration_matrix(metadata: MetaData) -> np.ndarray:
    """Every configuration of ``metadata`` as a row of numbers in [0, 1] (configs x a)."""
    if metadata.pool is not None:
        return scaled_columns(np.asarray(metadata.pool.encodings, dtype=float))
    return tabulate(metadata.configs)


def tabulate(configs: Sequence[dict[str, Any]]) -> np.ndarray:
    """Hyper-parameter mappings as numeric rows (see the module docstring)."""
    if not configs:
        raise ValueError("metabu: the meta-data has no configurations")
    names = sorted({name for config in configs for name in config})
    blocks = [_column_block([config.get(name) for config in configs]) for name in names]
    return np.hstack(blocks) if blocks else np.zeros((len(configs), 0))


def _column_block(values: list[Any]) -> np.ndarray:
    present = [v for v in values if v is not None]
    if present and all(_is_number(v) for v in present):
        numbers = np.array([np.nan if v is None else float(v) for v in values])
        if np.nanmin(numbers) > 0 and np.nanmax(numbers) > LOG_SPAN * np.nanmin(numbers):
            numbers = np.log(numbers)
        column = scaled_columns(numbers[:, None])
        return np.nan_to_num(column, nan=0.0)
    levels = sorted({str(v) for v in present})
    return np.array(
        [[float(v is not None and str(v) == level) for level in levels] for v in values]
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


def scaled_columns(matrix: np.ndarray) -> np.ndarray:
    """Each column mapped onto [0, 1] by its range (a constant column to 0); NaN stays."""
    low, high = np.nanmin(matrix, axis=0), np.nanmax(matrix, axis=0)
    span = np.where(high > low, high - low, 1.0)
    return (matrix - low) / span
