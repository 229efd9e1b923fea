"""Turning encoded configurations into the inputs of a stationary kernel.

A search space encodes a configuration as one number per hyper-parameter
(:meth:`automl_core.space.SearchSpace.encode`): a categorical as its index ``0..k-1``, a number
scaled to [0, 1], and ``INACTIVE`` (-1) where a conditional hyper-parameter does not apply. A
stationary kernel compares inputs by distance, so the indices of a categorical must not be
read as positions on a line (``rbf`` is not "between" ``linear`` and ``poly``):
:class:`InputEncoder` one-hot encodes them, so that any two different categories are equally
far apart (distance sqrt(2)).

Inactive values
---------------
* A categorical that is inactive becomes all zeros: at distance 1 from every active category,
  and at distance 0 from another configuration where it is inactive too.
* A conditional number keeps ``INACTIVE`` = -1. A stationary kernel only sees differences, and
  two configurations in which the parameter is inactive agree on it exactly (difference 0), so
  the column adds no spurious dissimilarity between them -- which is right: the parameter has
  no effect on either. Against a configuration in which it is active, the difference is
  between 1 and 2 (active values lie in [0, 1]): the two are always told apart, by about one
  unit whatever the value, and the one-hot column of the parent choice separates them
  further. Any constant outside [0, 1] would do; -1 is the value the spaces already use, so
  rows need no rewriting. (The "arc kernel" of Swersky et al. makes the inactive distance
  exactly constant at the price of a second column per conditional number; with ARD
  lengthscales the gain over a constant is small, so we keep the width down.)

Without column information (no :meth:`automl_surrogate_gp.GPSurrogate.prepare`), every column
is treated as a number, which is right for the pool spaces of table benchmarks, whose
encodings are already numeric vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from automl_core.space import EncodingColumn, check_columns, check_encoded


@dataclass(frozen=True)
class InputEncoder:
    """Maps encoded configurations (one column per hyper-parameter) to kernel inputs.

    ``columns`` is None when the columns were not described: then every column is a number
    and the width is whatever the first matrix has.
    """

    columns: tuple[EncodingColumn, ...] | None = None

    @classmethod
    def from_columns(cls, columns: Sequence[EncodingColumn]) -> InputEncoder:
        """The encoder for a space's ``columns()``; checks that they make sense."""
        return cls(check_columns(columns, "prepare"))

    @property
    def input_width(self) -> int | None:
        """The number of columns expected in ``X`` (None: any)."""
        return None if self.columns is None else len(self.columns)

    @property
    def output_width(self) -> int | None:
        """The number of kernel inputs (None: as many as ``X`` has columns)."""
        if self.columns is None:
            return None
        return sum(max(column.categories, 1) for column in self.columns)

    def transform(self, X: np.ndarray, where: str = "") -> np.ndarray:
        """Kernel inputs for the rows of ``X``: categoricals one-hot, numbers unchanged.

        ``X`` is checked first (:func:`automl_core.space.check_encoded`, against the columns
        when they were described); ``where`` starts its error messages."""
        matrix = check_encoded(X, self.columns, where)
        if self.columns is None:
            return matrix
        blocks = [
            _one_hot(matrix[:, index], column.categories)
            if column.categories > 0
            else matrix[:, index : index + 1]
            for index, column in enumerate(self.columns)
        ]
        return np.concatenate(blocks, axis=1)


def _one_hot(values: np.ndarray, categories: int) -> np.ndarray:
    """Columns of 0/1, one per category; all zeros where the parameter is inactive (checked
    values: indices ``0..categories-1`` or ``INACTIVE``)."""
    return (values[:, None] == np.arange(categories)[None, :]).astype(np.float64)
