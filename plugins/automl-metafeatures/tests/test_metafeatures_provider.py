"""The provider: parameters, groups, robustness on awkward data, isolation of failures, the
subsample, the time limit, determinism and the plugin entry point."""

from __future__ import annotations

import dataclasses
import math
import types
import warnings
from importlib import metadata

import numpy as np
import pandas as pd
import pytest

import automl_metafeatures.provider as provider_module
from automl_core.errors import PluginError
from automl_core.plugins import LOAD_PLUGINS_ENV, load_plugins
from automl_metafeatures import GROUPS, HandcraftedMetaFeatures, MetaFeatureWarning, feature_names
from automl_metafeatures.data import DataView, stratified_rows
from automl_metafeatures.groups import model

ALL = HandcraftedMetaFeatures(groups="all")


def computed(provider, X, y, task="classification"):
    """compute() and the meta-feature warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = provider.compute(X, y, task)
    return values, [w for w in caught if issubclass(w.category, MetaFeatureWarning)]


# -- parameters and groups ------------------------------------------------------------------
def test_groups_select_features_in_a_fixed_order():
    assert HandcraftedMetaFeatures().groups == ("autosklearn",)
    assert HandcraftedMetaFeatures(groups="all").groups == tuple(GROUPS)
    chosen = HandcraftedMetaFeatures(groups=["pca", "information"])
    assert chosen.groups == ("information", "pca")
    names = chosen.feature_names()
    assert names[:3] == ["MinAttributeEntropy", "MeanAttributeEntropy", "MaxAttributeEntropy"]
    assert names[-3:] == [
        "PCAFractionOfComponentsFor95PercentVariance",
        "PCAKurtosisFirstPC",
        "PCASkewnessFirstPC",
    ]
    every = feature_names("classification", "all")
    assert len(every) == len(set(every)) == sum(len(f) for f in GROUPS.values())
    assert set(feature_names("classification", "landmarking")) == {
        "Landmark1NN",
        "LandmarkDecisionNodeLearner",
        "LandmarkDecisionTree",
        "LandmarkLDA",
        "LandmarkNaiveBayes",
        "LandmarkRandomNodeLearner",
    }
    assert feature_names("regression", ["landmarking", "model"]) == []


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"groups": "autosklean"}, "groups"),
        ({"groups": []}, "groups"),
        ({"groups": ["pca", 3]}, "groups"),
        ({"groups": 7}, "groups"),
        ({"max_rows": 5}, "max_rows"),
        ({"max_rows": 100.0}, "max_rows"),
        ({"max_rows": True}, "max_rows"),
        ({"seed": -1}, "seed"),
        ({"seed": "1"}, "seed"),
        ({"time_limit": 0}, "time_limit"),
        ({"time_limit": math.inf}, "time_limit"),
        ({"time_limit": "10"}, "time_limit"),
    ],
)
def test_bad_parameters_are_refused_by_name(params, named):
    with pytest.raises(ValueError, match=rf"^{named}: got .*expected"):
        HandcraftedMetaFeatures(**params)


def test_inputs_that_are_not_a_dataset_raise():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="task"):
        HandcraftedMetaFeatures().compute(X, np.array([0, 1, 0]), "clustering")
    with pytest.raises(ValueError, match="y: got 2 labels for 3 rows"):
        HandcraftedMetaFeatures().compute(X, np.array([0, 1]), "classification")


def test_found_through_the_entry_point(monkeypatch):
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "metafeatures")  # this plugin alone: faster
    assert any(
        ep.name == "metafeatures" and ep.value == "automl_metafeatures.plugin"
        for ep in metadata.entry_points(group="automl_core")
    )
    plugins = load_plugins()
    provider = plugins.create("metafeature_provider", "handcrafted", {})
    assert isinstance(provider, HandcraftedMetaFeatures)
    built = plugins.create(
        "metafeature_provider", "handcrafted", {"groups": ["pca"], "max_rows": 500, "seed": 3}
    )
    assert (built.groups, built.max_rows, built.seed) == (("pca",), 500, 3)
    refused = r"cannot build metafeature_provider 'handcrafted'.*max_rows"
    with pytest.raises(PluginError, match=refused):
        plugins.create("metafeature_provider", "handcrafted", {"max_rows": 1})


# -- awkward data ---------------------------------------------------------------------------
def test_missing_values_categoricals_and_bools(mixed):
    X, y = mixed
    values, warned = computed(ALL, X, y)
    assert not warned
    assert set(values) == set(ALL.feature_names())
    assert all(math.isfinite(v) for v in values.values())


def test_an_all_missing_column_and_a_constant_column():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"x": rng.normal(size=60), "empty": np.full(60, np.nan), "constant": np.full(60, 4.0)}
    )
    values, warned = computed(ALL, X, rng.integers(0, 2, 60))
    assert not warned
    assert values["NumberOfFeaturesWithMissingValues"] == 1
    assert values["NumberOfMissingValues"] == 60
    assert values["PercentageOfInstancesWithMissingValues"] == 1.0
    # only 'x' is left in the encoded matrix: its moments are the summaries'
    assert values["SkewnessMin"] == values["SkewnessMax"] and values["SkewnessSTD"] == 0
    assert values["PCAFractionOfComponentsFor95PercentVariance"] == 1.0
    assert math.isfinite(values["LandmarkLDA"])


def test_a_single_class_gives_nan_landmarks_with_warnings_and_no_exception():
    X = pd.DataFrame({"x": np.arange(30.0), "c": list("ab") * 15})
    values, warned = computed(ALL, X, np.zeros(30, dtype=int))
    assert values["NumberOfClasses"] == 1 and values["ClassEntropy"] == 0
    assert values["ClassProbabilityMax"] == 1 and values["ClassProbabilitySTD"] == 0
    landmarks = feature_names("classification", "landmarking")
    assert all(math.isnan(values[name]) for name in landmarks)
    messages = [str(w.message) for w in warned]
    assert len(messages) == len(landmarks)
    assert all("at least two classes" in m for m in messages)
    assert values["MeanMutualInformation"] == 0 and math.isnan(values["EquivalentNumberOfAtts"])


def test_five_rows_and_one_feature():
    X = pd.DataFrame({"x": [0.5, 1.5, -0.2, 3.0, 2.2]})
    values, _ = computed(ALL, X, np.array([0, 1, 0, 1, 1]))
    assert values["NumberOfInstances"] == 5 and values["NumberOfFeatures"] == 1
    assert values["LogDatasetRatio"] == pytest.approx(math.log(1 / 5))
    assert math.isfinite(values["KurtosisMax"])
    assert math.isfinite(values["Landmark1NN"])  # 5 folds of one row, unstratified
    assert all(isinstance(v, float) for v in values.values())


def test_one_row_two_rows_and_no_rows_never_raise():
    for n in (0, 1, 2):
        X = pd.DataFrame({"x": np.arange(n, dtype=float), "c": pd.Categorical(["a", "b"][:n])})
        values, _ = computed(ALL, X, np.arange(n) % 2)
        assert values["NumberOfInstances"] == n
        assert set(values) == set(ALL.feature_names())
    assert math.isnan(values["PCAKurtosisFirstPC"]) or n == 2


def test_categorical_only_data():
    rng = np.random.default_rng(1)
    X = pd.DataFrame(
        {name: rng.choice(list("xyz"), 80) for name in ("a", "b", "c")}, dtype="category"
    )
    values, warned = computed(ALL, X, rng.integers(0, 3, 80))
    assert not warned
    assert values["NumberOfNumericFeatures"] == 0 and values["RatioNominalToNumerical"] == 0
    assert values["SymbolsSum"] == 9
    assert math.isnan(values["MeanMeansOfNumericAtts"])  # no numeric attribute: not defined
    assert math.isfinite(values["LandmarkNaiveBayes"]) and math.isfinite(
        values["MeanAttributeEntropy"]
    )


def test_regression_target_leaves_the_class_features_out():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=50), "b": rng.choice(["u", "v"], 50)})
    values, warned = computed(ALL, X, rng.normal(size=50), "regression")
    assert not warned
    assert list(values) == ALL.feature_names("regression")
    assert len([n for n in values if n in feature_names("regression")]) == 31
    assert "ClassEntropy" not in values and "Landmark1NN" not in values
    assert "MeanAttributeEntropy" in values and "PCAKurtosisFirstPC" in values


def test_numpy_input_and_labels_of_any_type():
    X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0], [0.0, 1.0]])
    values = HandcraftedMetaFeatures().compute(
        X, np.array(["b", 3, "b", 3], dtype=object), "classification"
    )
    assert values["NumberOfClasses"] == 2 and values["NumberOfFeatures"] == 2


# -- failures, subsample, time limit, determinism ---------------------------------------------
def test_a_failing_feature_is_nan_with_a_warning_and_the_others_are_computed(monkeypatch, mixed):
    X, y = mixed

    def broken(view):
        raise ZeroDivisionError("broken on purpose")

    features = list(GROUPS["autosklearn"])
    position = [f.name for f in features].index("SkewnessMax")
    features[position] = dataclasses.replace(features[position], compute=broken)
    monkeypatch.setitem(provider_module.GROUPS, "autosklearn", tuple(features))
    values, warned = computed(HandcraftedMetaFeatures(), X, y)
    assert math.isnan(values["SkewnessMax"])
    assert all(math.isfinite(v) for name, v in values.items() if name != "SkewnessMax")
    assert len(warned) == 1
    message = str(warned[0].message)
    assert "'SkewnessMax'" in message and "ZeroDivisionError: broken on purpose" in message


def test_the_costly_groups_use_a_stratified_subsample_and_counts_all_rows(monkeypatch):
    rng = np.random.default_rng(4)
    n = 2000
    y = np.where(rng.random(n) < 0.1, "rare", "common")
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.choice(["p", "q"], n)})
    fitted: list[tuple[int, int]] = []

    class Spy(model.DecisionTreeClassifier):
        def fit(self, X, y, *args, **kwargs):
            fitted.append(X.shape)
            return super().fit(X, y, *args, **kwargs)

    monkeypatch.setattr(model, "DecisionTreeClassifier", Spy)
    provider = HandcraftedMetaFeatures(groups=["autosklearn", "model"], max_rows=200, seed=1)
    values = provider.compute(X, y, "classification")
    assert values["NumberOfInstances"] == n
    assert fitted == [(200, 3)]  # the subsample: a, and the dummies of b (p, q)
    view = DataView(X, y, "classification", max_rows=200, seed=1)
    rows = view.sample_rows()
    assert rows.size == 200 and np.unique(rows).size == 200
    assert np.mean(y[rows] == "rare") == pytest.approx(np.mean(y == "rare"), abs=0.005)


def test_stratified_rows_keep_every_share_and_the_size():
    codes = np.repeat([0, 1, 2, -1], [500, 300, 190, 10])
    rows = stratified_rows(codes, 100, np.random.default_rng(0))
    assert rows.size == 100
    assert np.bincount(codes[rows] + 1).tolist() == [1, 50, 30, 19]


def test_a_tiny_time_limit_gives_nans_and_one_warning(mixed):
    X, y = mixed
    values, warned = computed(HandcraftedMetaFeatures(groups="all", time_limit=1e-9), X, y)
    assert set(values) == set(ALL.feature_names())
    assert all(math.isnan(v) for v in values.values())
    assert len(warned) == 1 and "time_limit of 1e-09 s reached" in str(warned[0].message)


def test_the_time_limit_is_checked_between_features(monkeypatch, mixed):
    """On a clock of the test's: the first feature takes 0.3 s of it against a 0.1 s limit,
    so it finishes (it started in time) and no other starts, however loaded the machine."""
    X, y = mixed
    now = [0.0]
    monkeypatch.setattr(provider_module, "time", types.SimpleNamespace(monotonic=lambda: now[0]))

    def slow(view):
        now[0] += 0.3
        return 1.0

    features = list(GROUPS["autosklearn"])
    features[0] = dataclasses.replace(features[0], compute=slow)  # ClassEntropy
    monkeypatch.setitem(provider_module.GROUPS, "autosklearn", tuple(features))
    values, warned = computed(HandcraftedMetaFeatures(time_limit=0.1), X, y)
    assert values["ClassEntropy"] == 1.0  # started in time, so finished
    assert all(math.isnan(v) for name, v in values.items() if name != "ClassEntropy")
    assert len(warned) == 1 and "36 meta-feature(s) not computed" in str(warned[0].message)


def test_same_seed_same_values_and_the_seed_matters_for_the_subsample():
    rng = np.random.default_rng(9)
    n = 600
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.exponential(size=n)})
    y = (X["a"] + rng.normal(0, 1, n) > 0).astype(int).to_numpy()
    first = HandcraftedMetaFeatures(groups="all", max_rows=100, seed=5).compute(
        X, y, "classification"
    )
    again = HandcraftedMetaFeatures(groups="all", max_rows=100, seed=5).compute(
        X, y, "classification"
    )
    other = HandcraftedMetaFeatures(groups="all", max_rows=100, seed=6).compute(
        X, y, "classification"
    )
    assert first == again
    assert first["PCAKurtosisFirstPC"] != other["PCAKurtosisFirstPC"]
    assert first["NumberOfInstances"] == other["NumberOfInstances"] == n
    assert first["KurtosisMax"] == other["KurtosisMax"]  # the full data, whatever the seed
