"""Information-theoretic meta-features, with OpenML's names and definitions (Michie et al.,
1994, the StatLog project; OpenML's data qualities).

As in OpenML, they are taken over the *nominal* (categorical) attributes only, in bits, each
attribute on its rows with a value (missing values are not a symbol):

* ``Min``/``Mean``/``MaxAttributeEntropy`` -- entropy of each attribute's values;
* ``Min``/``Mean``/``MaxMutualInformation`` -- mutual information of each attribute with the
  class, ``H(A) + H(C) - H(A, C)`` (classification);
* ``EquivalentNumberOfAtts`` -- ``ClassEntropy / MeanMutualInformation``: how many average
  attributes it would take to carry the class's information (classification);
* ``MeanNoiseToSignalRatio`` -- ``(MeanAttributeEntropy - MeanMutualInformation) /
  MeanMutualInformation``: how much of an attribute's information is irrelevant to the class
  (classification).

They are NaN, without a warning, where they do not apply: a dataset without a categorical
attribute, or (for the last two) a mean mutual information of 0. Full data (counting is
cheap).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from automl_metafeatures.data import DataView, helper
from automl_metafeatures.registry import Feature, entropy_bits, nan_summary, summaries

GROUP = "information"
_CLASSIFICATION = ("classification",)
_SUMMARIES = (("Min", "min"), ("Mean", "mean"), ("Max", "max"))


@helper
def _attribute_entropies(view: DataView) -> np.ndarray:
    return np.array([entropy_bits(c) for c in view.category_counts()], dtype=float)


@helper
def _mutual_informations(view: DataView) -> np.ndarray:
    classes = view.class_codes()
    n_classes = int(classes.max()) + 1 if classes.size else 0
    values = []
    for j in view.categorical_indices():
        codes, _ = pd.factorize(view.X.iloc[:, j], use_na_sentinel=True)
        both = (np.asarray(codes) >= 0) & (classes >= 0)
        a, c = np.asarray(codes)[both], classes[both]
        if a.size == 0:
            values.append(math.nan)
            continue
        joint = np.bincount(a * n_classes + c)
        mi = entropy_bits(np.bincount(a)) + entropy_bits(np.bincount(c)) - entropy_bits(joint)
        values.append(max(mi, 0.0))  # rounding can leave -1e-16
    return np.array(values, dtype=float)


def _class_entropy(view: DataView) -> float:
    return entropy_bits(view.class_counts())


def _mean_mi(view: DataView) -> float:
    return nan_summary(_mutual_informations(view), "mean")


def _equivalent_number_of_atts(view: DataView) -> float:
    mean = _mean_mi(view)
    return _class_entropy(view) / mean if mean > 0 else math.nan


def _noise_to_signal(view: DataView) -> float:
    mean = _mean_mi(view)
    if not mean > 0:
        return math.nan
    return (nan_summary(_attribute_entropies(view), "mean") - mean) / mean


FEATURES: tuple[Feature, ...] = (
    *summaries("", "AttributeEntropy", GROUP, _attribute_entropies, _SUMMARIES, nan_summary),
    *summaries(
        "",
        "MutualInformation",
        GROUP,
        _mutual_informations,
        _SUMMARIES,
        nan_summary,
        _CLASSIFICATION,
    ),
    Feature("EquivalentNumberOfAtts", GROUP, _equivalent_number_of_atts, _CLASSIFICATION),
    Feature("MeanNoiseToSignalRatio", GROUP, _noise_to_signal, _CLASSIFICATION),
)
