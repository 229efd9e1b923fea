"""What a meta-feature is here, and the summaries several groups share.

Each feature is a named function of a :class:`~automl_metafeatures.data.DataView` returning
one number. Keeping them as separate entries (rather than one function per group returning a
dict) is what lets the provider isolate failures and check the time limit per feature.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from automl_metafeatures.data import DataView

TASKS = ("classification", "regression")
#: The summaries by name (``std`` is numpy's: ddof 0).
_REDUCERS: dict[str, Callable[[np.ndarray], Any]] = {
    "min": np.min,
    "max": np.max,
    "mean": np.mean,
    "std": np.std,
}


@dataclass(frozen=True)
class Feature:
    """One meta-feature: its name (as auto-sklearn or OpenML spell it), group, function.

    ``tasks`` lists the tasks it is defined for: a feature about classes is absent (not NaN)
    from the result for a regression task, as auto-sklearn's regression table omits them.
    """

    name: str
    group: str
    compute: Callable[[DataView], float]
    tasks: tuple[str, ...] = TASKS


def autosklearn_summary(values: Sequence[float] | np.ndarray, how: str) -> float:
    """auto-sklearn's Min/Max/Mean/STD of a list of per-column values.

    NaN entries are ignored, and an empty list or a non-finite result gives 0 (not NaN): that
    is what auto-sklearn stores, e.g. ``KurtosisMax`` 0 for a dataset without any column to
    take a kurtosis of. STD is the population standard deviation (``numpy.nanstd``).
    """
    array = np.asarray(values, dtype=float)
    array = array[~np.isnan(array)]
    if array.size == 0:
        return 0.0
    value = float(_REDUCERS[how](array))
    return value if math.isfinite(value) else 0.0


def nan_summary(values: Sequence[float] | np.ndarray, how: str) -> float:
    """Min/Max/Mean of the finite values; NaN when there is none (the OpenML convention:
    a quality that does not apply is missing, not zero)."""
    array = np.asarray(values, dtype=float)
    array = array[np.isfinite(array)]
    if array.size == 0:
        return math.nan
    return float(_REDUCERS[how](array))


def entropy_bits(counts: Sequence[float] | np.ndarray) -> float:
    """Shannon entropy, in bits, of a distribution given by its (non-negative) counts; NaN
    for no count (the class entropy of both groups, and the information group's others)."""
    counts = np.asarray(counts, dtype=float)
    counts = counts[counts > 0]
    if counts.size == 0:
        return math.nan
    shares = counts / counts.sum()
    return float(-(shares * np.log2(shares)).sum())


def summaries(
    prefix: str,
    suffix: str,
    group: str,
    values: Callable[[DataView], Sequence[float] | np.ndarray],
    kinds: Sequence[tuple[str, str]],
    summarise: Callable[[Sequence[float] | np.ndarray, str], float],
    tasks: tuple[str, ...] = TASKS,
) -> tuple[Feature, ...]:
    """One feature per ``(label, how)`` in ``kinds``, named ``prefix + label + suffix``."""

    def make(how: str) -> Callable[[DataView], float]:
        return lambda view: summarise(values(view), how)

    return tuple(
        Feature(f"{prefix}{label}{suffix}", group, make(how), tasks) for label, how in kinds
    )
