"""The definitions, checked against independent computations (pandas, SciPy) on small data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from automl_metafeatures import HandcraftedMetaFeatures, feature_names
from automl_metafeatures.data import bernoulli_moments

ALL = HandcraftedMetaFeatures(groups="all")


def autosklearn(X: pd.DataFrame, y: np.ndarray, task: str = "classification") -> dict:
    return HandcraftedMetaFeatures().compute(X, y, task)


def test_the_37_names_of_auto_sklearn_and_31_for_regression():
    names = feature_names("classification")
    assert len(names) == len(set(names)) == 37
    regression = feature_names("regression")
    assert len(regression) == 31
    assert set(names) - set(regression) == {
        "ClassEntropy",
        "ClassProbabilityMax",
        "ClassProbabilityMean",
        "ClassProbabilityMin",
        "ClassProbabilitySTD",
        "NumberOfClasses",
    }


def test_counts_classes_and_symbols(mixed):
    X, y = mixed
    values = autosklearn(X, y)
    assert values["NumberOfInstances"] == 120 and values["NumberOfFeatures"] == 4
    assert values["NumberOfNumericFeatures"] == 2 and values["NumberOfCategoricalFeatures"] == 2
    assert values["RatioNominalToNumerical"] == values["RatioNumericalToNominal"] == 1.0
    assert values["LogNumberOfInstances"] == pytest.approx(math.log(120))
    assert values["DatasetRatio"] == pytest.approx(4 / 120)
    assert values["LogInverseDatasetRatio"] == pytest.approx(math.log(30))
    missing = X.isna()
    assert values["NumberOfMissingValues"] == missing.to_numpy().sum() == 16
    assert values["NumberOfFeaturesWithMissingValues"] == 2
    assert values["NumberOfInstancesWithMissingValues"] == missing.any(axis=1).sum()
    assert values["PercentageOfMissingValues"] == pytest.approx(16 / 480)
    # classes: entropy in bits, shares' std over classes with ddof 0
    counts = pd.Series(y).value_counts().to_numpy()
    shares = counts / counts.sum()
    assert values["NumberOfClasses"] == 3
    assert values["ClassEntropy"] == pytest.approx(scipy.stats.entropy(counts, base=2))
    assert values["ClassProbabilitySTD"] == pytest.approx(np.std(shares))
    assert values["ClassProbabilityMax"] == pytest.approx(shares.max())
    assert values["ClassProbabilityMean"] == pytest.approx(1 / 3)
    # symbols: distinct non-missing values of the categorical columns (colour 4, flag 2)
    assert values["SymbolsSum"] == 6 and values["SymbolsMax"] == 4 and values["SymbolsMin"] == 2
    assert values["SymbolsMean"] == 3 and values["SymbolsSTD"] == 1


def _encoded_like_autosklearn(X: pd.DataFrame) -> np.ndarray:
    """An independent encoding: mean-imputed numeric columns (constant ones dropped), and
    pandas dummies (missing as a category) after merging categories under 1 % of the rows."""
    blocks = []
    for name in X.columns:
        column = X[name]
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            if column.nunique() > 1:
                blocks.append(column.fillna(column.mean()).to_numpy(float)[:, None])
            continue
        as_text = column.astype(object).where(column.notna(), "<missing>")
        shares = as_text.value_counts(normalize=True)
        rare = shares.index[shares < 0.01]
        as_text = as_text.where(~as_text.isin(rare), "<rare>")
        blocks.append(pd.get_dummies(as_text).to_numpy(float))
    return np.hstack(blocks)


def test_skewness_and_kurtosis_are_those_of_the_encoded_matrix(mixed):
    X, y = mixed
    values = autosklearn(X, y)
    encoded = _encoded_like_autosklearn(X)
    # colour: red, green, blue, missing and "rare" (violet, 1 row in 120); flag: 2
    assert encoded.shape[1] == 2 + 5 + 2
    skews = scipy.stats.skew(encoded, axis=0)
    kurts = scipy.stats.kurtosis(encoded, axis=0)
    for prefix, stats in (("Skewness", skews), ("Kurtosis", kurts)):
        assert values[f"{prefix}Min"] == pytest.approx(stats.min())
        assert values[f"{prefix}Max"] == pytest.approx(stats.max())
        assert values[f"{prefix}Mean"] == pytest.approx(stats.mean())
        assert values[f"{prefix}STD"] == pytest.approx(stats.std())


def test_constant_dummy_counts_as_kurtosis_minus_3_and_constant_numeric_is_dropped():
    # mushroom's veil-type has a single value: auto-sklearn stored KurtosisMin -3.0 for it
    X = pd.DataFrame({"veil": ["p"] * 50, "x": np.arange(50.0), "const": np.ones(50)})
    values = autosklearn(X, np.arange(50) % 2)
    assert bernoulli_moments(1.0) == (0.0, -3.0)
    assert values["KurtosisMin"] == -3.0
    assert values["SymbolsMin"] == 1
    uniform = scipy.stats.kurtosis(np.arange(50.0))
    assert values["KurtosisMax"] == pytest.approx(uniform)  # 'const' is not a column here
    assert values["KurtosisMean"] == pytest.approx((uniform - 3.0) / 2)


def test_no_categorical_column_gives_zero_symbols_and_no_column_zero_moments():
    X = pd.DataFrame({"a": np.ones(10), "b": np.full(10, 2.0)})  # both constant: dropped
    values = autosklearn(X, np.arange(10) % 2)
    for stat in ("Min", "Max", "Mean", "STD", "Sum"):
        assert values[f"Symbols{stat}"] == 0
    for stat in ("Min", "Max", "Mean", "STD"):
        assert values[f"Skewness{stat}"] == 0 and values[f"Kurtosis{stat}"] == 0


def test_nominal_to_numerical_ratios_are_zero_without_a_denominator():
    X = pd.DataFrame({"c": pd.Categorical(list("abcab") * 4)})
    values = autosklearn(X, np.arange(20) % 2)
    assert values["RatioNominalToNumerical"] == 0 and values["RatioNumericalToNominal"] == 0


def test_information_features_follow_their_definitions():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    copy = np.where(y == 1, "yes", "no")  # carries the whole class
    noise = rng.choice(["u", "v", "w", "z"], 400)  # carries (almost) nothing
    X = pd.DataFrame({"copy": copy, "noise": noise, "num": rng.normal(size=400)})
    values = ALL.compute(X, y, "classification")
    h_class = scipy.stats.entropy(np.bincount(y), base=2)
    h_noise = scipy.stats.entropy(pd.Series(noise).value_counts(), base=2)
    joint = pd.crosstab(noise, y).to_numpy().ravel()
    mi_noise = h_noise + h_class - scipy.stats.entropy(joint[joint > 0], base=2)
    assert values["MaxAttributeEntropy"] == pytest.approx(h_noise)
    assert values["MinAttributeEntropy"] == pytest.approx(h_class)
    assert values["MaxMutualInformation"] == pytest.approx(h_class)
    assert values["MinMutualInformation"] == pytest.approx(mi_noise)
    mean_mi = (h_class + mi_noise) / 2
    assert values["MeanMutualInformation"] == pytest.approx(mean_mi)
    assert values["EquivalentNumberOfAtts"] == pytest.approx(h_class / mean_mi)
    mean_h = (h_class + h_noise) / 2
    assert values["MeanNoiseToSignalRatio"] == pytest.approx((mean_h - mean_mi) / mean_mi)


def test_statistical_features_use_the_raw_numeric_attributes():
    rng = np.random.default_rng(5)
    a = rng.normal(10, 2, 300)
    b = a * 3 + rng.normal(0, 0.1, 300)  # almost perfectly correlated with a
    a_missing = a.copy()
    a_missing[:30] = np.nan
    X = pd.DataFrame({"a": a_missing, "b": b, "bin": rng.integers(0, 2, 300).astype(float)})
    values = ALL.compute(X, rng.integers(0, 2, 300), "classification")
    means = [np.nanmean(a_missing), b.mean(), X["bin"].mean()]
    assert values["MaxMeansOfNumericAtts"] == pytest.approx(max(means))
    assert values["MinStdDevOfNumericAtts"] == pytest.approx(X["bin"].std(ddof=1))
    assert values["MaxSkewnessOfNumericAtts"] == pytest.approx(
        max(scipy.stats.skew(a[30:]), scipy.stats.skew(b), scipy.stats.skew(X["bin"]))
    )
    assert values["NumberOfBinaryFeatures"] == 1
    assert (
        values["PercentageOfNumericFeatures"] == 1 and values["PercentageOfSymbolicFeatures"] == 0
    )
    # correlations are taken after mean imputation (which weakens this one)
    imputed = np.where(np.isnan(a_missing), np.nanmean(a_missing), a_missing)
    assert values["MaxAbsoluteCorrelationOfNumericAtts"] == pytest.approx(
        np.corrcoef(imputed, b)[0, 1]
    )


def test_pca_and_landmarks_on_an_easy_problem():
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, 300)
    X = pd.DataFrame({"signal": y + rng.normal(0, 0.1, 300), "noise": rng.normal(size=300)})
    values = ALL.compute(X, y, "classification")
    for name in ("Landmark1NN", "LandmarkDecisionTree", "LandmarkLDA", "LandmarkNaiveBayes"):
        assert values[name] > 0.95, name
    assert values["LandmarkDecisionNodeLearner"] > 0.95  # one split on 'signal' suffices
    assert 0.4 < values["LandmarkRandomNodeLearner"] <= 1.0
    # two standardised, uncorrelated columns: both components are needed for 95 %
    assert values["PCAFractionOfComponentsFor95PercentVariance"] == 1.0
    assert math.isfinite(values["PCAKurtosisFirstPC"])
    assert math.isfinite(values["PCASkewnessFirstPC"])
    assert values["DecisionTreeNumberOfLeaves"] >= 2
    assert values["DecisionTreeNumberOfNodes"] == 2 * values["DecisionTreeNumberOfLeaves"] - 1
