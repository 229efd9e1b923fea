"""Statistics of the raw attributes, with OpenML's names where OpenML defines them.

Unlike the auto-sklearn group, these look at the attributes as they are (no encoding, no
imputation: each numeric attribute on its observed values), which is what OpenML's data
qualities describe:

* ``Min``/``Mean``/``MaxMeansOfNumericAtts`` and ``...StdDevOfNumericAtts`` -- the mean and
  the sample standard deviation (ddof 1) of each numeric attribute, in its own units;
* ``Min``/``Mean``/``MaxSkewnessOfNumericAtts`` and ``...KurtosisOfNumericAtts`` -- biased
  skewness and excess kurtosis of each non-constant numeric attribute;
* ``NumberOfBinaryFeatures`` (attributes with exactly two distinct values, of either type)
  and ``PercentageOfBinaryFeatures``, ``PercentageOfNumericFeatures``,
  ``PercentageOfSymbolicFeatures`` (shares of the attributes; OpenML's own percentage of
  symbolic features also counts a nominal target, these do not);
* ``Mean``/``MaxAbsoluteCorrelationOfNumericAtts`` -- mean and largest absolute Pearson
  correlation between two numeric attributes (not an OpenML quality; named in its style),
  on the subsample with mean-imputed values, constant attributes left out.

A summary over no attribute is NaN (OpenML's convention), without a warning.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from automl_metafeatures.data import DataView, helper, moments_of
from automl_metafeatures.registry import Feature, nan_summary, summaries

GROUP = "statistical"
_SUMMARIES = (("Min", "min"), ("Mean", "mean"), ("Max", "max"))


@helper
def _numeric_stats(view: DataView) -> dict[str, np.ndarray]:
    """Per numeric attribute: mean, std (ddof 1), skewness, kurtosis over observed values."""
    stats: dict[str, list[float]] = {"mean": [], "std": [], "skew": [], "kurt": []}
    for j in view.numeric_indices():
        values = view.column_values(j)
        values = values[~np.isnan(values)]
        if values.size == 0:
            continue
        stats["mean"].append(float(values.mean()))
        stats["std"].append(float(values.std(ddof=1)) if values.size > 1 else math.nan)
        skew, kurt = moments_of(values)
        stats["skew"].append(skew)
        stats["kurt"].append(kurt)
    return {key: np.asarray(value, dtype=float) for key, value in stats.items()}


def _stat(key: str) -> Callable[[DataView], np.ndarray]:
    return lambda view: _numeric_stats(view)[key]


@helper
def _binary_count(view: DataView) -> int:
    return int(sum(view.X.iloc[:, j].nunique(dropna=True) == 2 for j in range(view.n_columns)))


@helper
def _absolute_correlations(view: DataView) -> np.ndarray:
    rows = view.sample_rows()
    columns = []
    for j in view.numeric_indices():
        values = view.column_values(j)[rows]
        observed = values[~np.isnan(values)]
        if observed.size == 0 or observed.min() == observed.max():
            continue
        columns.append(np.where(np.isnan(values), observed.mean(), values))
    if len(columns) < 2:
        return np.empty(0)
    matrix = np.corrcoef(np.column_stack(columns), rowvar=False)
    upper = matrix[np.triu_indices_from(matrix, k=1)]
    return np.abs(upper)


def _share(count: float, view: DataView) -> float:
    return count / view.n_columns


FEATURES: tuple[Feature, ...] = (
    *summaries("", "MeansOfNumericAtts", GROUP, _stat("mean"), _SUMMARIES, nan_summary),
    *summaries("", "StdDevOfNumericAtts", GROUP, _stat("std"), _SUMMARIES, nan_summary),
    *summaries("", "SkewnessOfNumericAtts", GROUP, _stat("skew"), _SUMMARIES, nan_summary),
    *summaries("", "KurtosisOfNumericAtts", GROUP, _stat("kurt"), _SUMMARIES, nan_summary),
    Feature("NumberOfBinaryFeatures", GROUP, lambda v: float(_binary_count(v))),
    Feature("PercentageOfBinaryFeatures", GROUP, lambda v: _share(_binary_count(v), v)),
    Feature(
        "PercentageOfNumericFeatures",
        GROUP,
        lambda v: _share(float((~v.categorical()).sum()), v),
    ),
    Feature(
        "PercentageOfSymbolicFeatures", GROUP, lambda v: _share(float(v.categorical().sum()), v)
    ),
    *summaries(
        "",
        "AbsoluteCorrelationOfNumericAtts",
        GROUP,
        _absolute_correlations,
        (("Mean", "mean"), ("Max", "max")),
        nan_summary,
    ),
)
