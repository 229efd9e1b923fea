"""auto-sklearn's 37 meta-features (``feature_values.arff`` of auto-sklearn 0.15.0).

Names and definitions follow auto-sklearn's ``metalearning/metafeatures/metafeatures.py``
(Feurer et al., 2015), checked number by number against its stored table (see the README):

* counts are of the data given (auto-sklearn stored them for its *training split*, about 2/3
  of each OpenML dataset's rows); ``Log*`` are natural logarithms;
* class features use the labelled rows: ``ClassEntropy`` in bits, ``ClassProbabilitySTD`` the
  population standard deviation of the class shares;
* ``Symbols*`` summarise the number of distinct non-missing values of each categorical
  column; Min, Mean and STD ignore columns without any value (auto-sklearn's rule), and all
  five are 0 when there is no categorical column;
* ``Skewness*`` and ``Kurtosis*`` summarise the (biased, Fisher) skewness and kurtosis of
  every column of the *encoded* matrix (one-hot categoricals, mean-imputed numeric columns;
  see :mod:`automl_metafeatures.data`), so dummy columns take part: cmc's ``KurtosisMax``
  49.85 is the dummy of a category held by 1.8 % of its rows. STD is a population std, and
  every summary is 0 when there is no column (auto-sklearn's conventions).

All of them use the full data. The six class features exist for classification only: the
regression table of auto-sklearn has the other 31.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from automl_metafeatures.data import DataView
from automl_metafeatures.registry import Feature, autosklearn_summary, entropy_bits, summaries

GROUP = "autosklearn"
_CLASSIFICATION = ("classification",)
_SUMMARIES = (("Max", "max"), ("Mean", "mean"), ("Min", "min"), ("STD", "std"))


def _n_numeric(view: DataView) -> int:
    return int((~view.categorical()).sum())


def _n_categorical(view: DataView) -> int:
    return int(view.categorical().sum())


def _class_shares(view: DataView) -> np.ndarray:
    counts = view.class_counts()
    return counts / counts.sum()


def _class_entropy(view: DataView) -> float:
    return entropy_bits(view.class_counts())


def _ratio_or_zero(numerator: int, denominator: int) -> float:
    """auto-sklearn's nominal/numerical ratios are 0, not infinite, with a zero denominator."""
    return numerator / denominator if denominator else 0.0


def _symbols_min(view: DataView) -> float:
    present = [s for s in view.symbols() if s > 0]
    return float(min(present)) if present else 0.0


def _symbols_max(view: DataView) -> float:
    return float(max(view.symbols(), default=0))


def _symbols_summary(how: str) -> Callable[[DataView], float]:
    """Mean or STD over the categorical columns that have at least one symbol."""
    return lambda view: autosklearn_summary([s for s in view.symbols() if s > 0], how)


def _with_missing_rows(view: DataView) -> float:
    return float((view.missing_per_row() > 0).sum())


def _with_missing_columns(view: DataView) -> float:
    return float((view.missing_per_column() > 0).sum())


def _missing(view: DataView) -> float:
    return float(view.missing_per_column().sum())


def _skews(view: DataView) -> np.ndarray:
    return view.encoded_moments()[0]


def _kurts(view: DataView) -> np.ndarray:
    return view.encoded_moments()[1]


FEATURES: tuple[Feature, ...] = (
    Feature("ClassEntropy", GROUP, _class_entropy, _CLASSIFICATION),
    Feature("ClassProbabilityMax", GROUP, lambda v: float(_class_shares(v).max()), _CLASSIFICATION),
    Feature(
        "ClassProbabilityMean", GROUP, lambda v: float(_class_shares(v).mean()), _CLASSIFICATION
    ),
    Feature("ClassProbabilityMin", GROUP, lambda v: float(_class_shares(v).min()), _CLASSIFICATION),
    Feature("ClassProbabilitySTD", GROUP, lambda v: float(_class_shares(v).std()), _CLASSIFICATION),
    Feature("DatasetRatio", GROUP, lambda v: v.n_columns / v.n_rows),
    Feature("InverseDatasetRatio", GROUP, lambda v: v.n_rows / v.n_columns),
    *summaries("Kurtosis", "", GROUP, _kurts, _SUMMARIES, autosklearn_summary),
    Feature("LogDatasetRatio", GROUP, lambda v: math.log(v.n_columns / v.n_rows)),
    Feature("LogInverseDatasetRatio", GROUP, lambda v: math.log(v.n_rows / v.n_columns)),
    Feature("LogNumberOfFeatures", GROUP, lambda v: math.log(v.n_columns)),
    Feature("LogNumberOfInstances", GROUP, lambda v: math.log(v.n_rows)),
    Feature("NumberOfCategoricalFeatures", GROUP, lambda v: float(_n_categorical(v))),
    Feature("NumberOfClasses", GROUP, lambda v: float(v.class_counts().size), _CLASSIFICATION),
    Feature("NumberOfFeatures", GROUP, lambda v: float(v.n_columns)),
    Feature("NumberOfFeaturesWithMissingValues", GROUP, _with_missing_columns),
    Feature("NumberOfInstances", GROUP, lambda v: float(v.n_rows)),
    Feature("NumberOfInstancesWithMissingValues", GROUP, _with_missing_rows),
    Feature("NumberOfMissingValues", GROUP, _missing),
    Feature("NumberOfNumericFeatures", GROUP, lambda v: float(_n_numeric(v))),
    Feature(
        "PercentageOfFeaturesWithMissingValues",
        GROUP,
        lambda v: _with_missing_columns(v) / v.n_columns,
    ),
    Feature(
        "PercentageOfInstancesWithMissingValues",
        GROUP,
        lambda v: _with_missing_rows(v) / v.n_rows,
    ),
    Feature("PercentageOfMissingValues", GROUP, lambda v: _missing(v) / (v.n_rows * v.n_columns)),
    Feature(
        "RatioNominalToNumerical",
        GROUP,
        lambda v: _ratio_or_zero(_n_categorical(v), _n_numeric(v)),
    ),
    Feature(
        "RatioNumericalToNominal",
        GROUP,
        lambda v: _ratio_or_zero(_n_numeric(v), _n_categorical(v)),
    ),
    *summaries("Skewness", "", GROUP, _skews, _SUMMARIES, autosklearn_summary),
    Feature("SymbolsMax", GROUP, _symbols_max),
    Feature("SymbolsMean", GROUP, _symbols_summary("mean")),
    Feature("SymbolsMin", GROUP, _symbols_min),
    Feature("SymbolsSTD", GROUP, _symbols_summary("std")),
    Feature("SymbolsSum", GROUP, lambda v: float(sum(v.symbols()))),
)
