"""Oboe's models translated into the autosklearn-classification space, checked against Oboe.

The expected values are written out by hand from Oboe's column headers (which the first
tests re-read from the ``oboe`` source) and from the ranges of automl-sklearn's space, not
computed by the translation's own code. The source is converted afresh (conftest.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from automl_core.contracts import MetaData
from automl_core.errors import DatasetError
from automl_core.space import BuildContext, config_key
from automl_metadata.oboe import Oboe
from automl_metadata.oboe_autosklearn import SPACE, OboeAutoSklearn, translate
from automl_metadata.plugin import BENCHMARKS, SOURCES
from automl_spaces.pipeline_space import PipelineSpace

pytest.importorskip("automl_sklearn")


@pytest.fixture(scope="module")
def oboe() -> MetaData:
    return Oboe().load()


@pytest.fixture(scope="module")
def translated(oboe: MetaData) -> MetaData:
    return OboeAutoSklearn().load()


@pytest.fixture(scope="module")
def space() -> PipelineSpace:
    from automl_sklearn.plugin import COMPONENTS
    from automl_sklearn.spaces import classification_space

    return classification_space(list(COMPONENTS))


def config_of(translated: MetaData, oboe_column: int) -> dict[str, Any]:
    return translated.configs[translated.info["source_configs"].index(oboe_column)]


def classifier_part(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k.startswith("classifier:")}


# ---------------------------------------------------------------------------------------------
# What is kept of Oboe
# ---------------------------------------------------------------------------------------------


def test_is_registered_as_a_source_only() -> None:
    assert SOURCES["oboe-autosklearn"][0] is OboeAutoSklearn
    assert "oboe-autosklearn" not in BENCHMARKS


def test_rows_are_oboes_and_columns_its_kept_models(translated, oboe) -> None:
    kept = translated.info["source_configs"]
    assert translated.shape == (418, 103) and len(kept) == 103
    assert kept == sorted(set(kept)) and kept[0] >= 0 and kept[-1] < 219
    assert translated.datasets == oboe.datasets
    assert translated.splits == oboe.splits
    assert translated.metafeatures.equals(oboe.metafeatures)
    assert np.array_equal(translated.performance, oboe.performance[:, kept])
    assert np.array_equal(translated.runtimes, oboe.runtimes[:, kept])
    assert translated.space == SPACE == "autosklearn-classification"
    assert translated.pool is None
    assert translated.info["metric"] == oboe.info["metric"]
    assert translated.info["licence"] == "BSD-3-Clause"


def test_every_configuration_is_a_distinct_member_of_the_space(translated, space) -> None:
    for config in translated.configs:
        assert space.validate(config) == config  # already canonical
    assert len({config_key(c) for c in translated.configs}) == len(translated.configs)


def test_preprocessing_is_the_spaces_default(translated, space) -> None:
    default = {k: v for k, v in space.default().items() if not k.startswith("classifier:")}
    for config in translated.configs:
        assert {k: v for k, v in config.items() if not k.startswith("classifier:")} == default
    assert default["data_preprocessor:feature_type:numerical_transformer:imputation:strategy"] == (
        "mean"
    )
    assert (
        default["data_preprocessor:feature_type:numerical_transformer:rescaling:__choice__"]
        == "standardize"
    )


# ---------------------------------------------------------------------------------------------
# Hand-picked models: Oboe's header -> our configuration
# ---------------------------------------------------------------------------------------------

#: Oboe column -> (its header, the classifier part of the expected configuration).
HAND_PICKED: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {
    0: (
        {"algorithm": "AB", "hyperparameters": {"n_estimators": 50, "learning_rate": 1}},
        {
            "classifier:__choice__": "adaboost",
            "classifier:adaboost:algorithm": "SAMME.R",
            "classifier:adaboost:learning_rate": 1.0,
            "classifier:adaboost:max_depth": 1,
            "classifier:adaboost:n_estimators": 50,
        },
    ),
    12: (
        {"algorithm": "DT", "hyperparameters": {"min_samples_split": 8}},
        {
            "classifier:__choice__": "decision_tree",
            "classifier:decision_tree:criterion": "gini",
            "classifier:decision_tree:max_depth_factor": 2.0,  # Oboe's tree: no depth limit
            "classifier:decision_tree:max_features": 1.0,
            "classifier:decision_tree:max_leaf_nodes": "None",
            "classifier:decision_tree:min_impurity_decrease": 0.0,
            "classifier:decision_tree:min_samples_leaf": 1,
            "classifier:decision_tree:min_samples_split": 8,
            "classifier:decision_tree:min_weight_fraction_leaf": 0.0,
        },
    ),
    76: (
        {
            "algorithm": "GBT",
            "hyperparameters": {"learning_rate": 0.25, "max_depth": 6, "max_features": None},
        },
        {
            "classifier:__choice__": "gradient_boosting",
            "classifier:gradient_boosting:early_stop": "off",
            "classifier:gradient_boosting:l2_regularization": 1e-10,
            "classifier:gradient_boosting:learning_rate": 0.25,
            "classifier:gradient_boosting:loss": "auto",
            "classifier:gradient_boosting:max_bins": 255,
            "classifier:gradient_boosting:max_depth": "None",
            "classifier:gradient_boosting:max_leaf_nodes": 64,  # 2 ** 6
            "classifier:gradient_boosting:min_samples_leaf": 1,
            "classifier:gradient_boosting:scoring": "loss",
            "classifier:gradient_boosting:tol": 1e-07,
        },
    ),
    82: ({"algorithm": "GNB", "hyperparameters": {}}, {"classifier:__choice__": "gaussian_nb"}),
    89: (
        {"algorithm": "KNN", "hyperparameters": {"n_neighbors": 7, "p": 1}},
        {
            "classifier:__choice__": "k_nearest_neighbors",
            "classifier:k_nearest_neighbors:n_neighbors": 7,
            "classifier:k_nearest_neighbors:p": 1,
            "classifier:k_nearest_neighbors:weights": "uniform",
        },
    ),
    137: (
        {
            "algorithm": "MLP",
            "hyperparameters": {
                "learning_rate_init": 0.001,
                "learning_rate": "adaptive",
                "solver": "adam",
                "alpha": 0.0001,
            },
        },
        {
            "classifier:__choice__": "mlp",
            "classifier:mlp:activation": "relu",
            "classifier:mlp:alpha": 0.0001,
            "classifier:mlp:batch_size": "auto",
            "classifier:mlp:beta_1": 0.9,
            "classifier:mlp:beta_2": 0.999,
            "classifier:mlp:early_stopping": "train",  # no validation_fraction then
            "classifier:mlp:epsilon": 1e-08,
            "classifier:mlp:hidden_layer_depth": 1,
            "classifier:mlp:learning_rate_init": 0.001,
            "classifier:mlp:n_iter_no_change": 32,
            "classifier:mlp:num_nodes_per_layer": 100,
            "classifier:mlp:shuffle": "True",
            "classifier:mlp:solver": "adam",
            "classifier:mlp:tol": 0.0001,
        },
    ),
    143: (
        {"algorithm": "Perceptron", "hyperparameters": {}},
        {
            "classifier:__choice__": "sgd",
            "classifier:sgd:alpha": 1e-07,
            "classifier:sgd:average": "False",
            "classifier:sgd:eta0": 0.1,
            "classifier:sgd:fit_intercept": "True",
            "classifier:sgd:learning_rate": "constant",
            "classifier:sgd:loss": "perceptron",
            "classifier:sgd:penalty": "l2",
            "classifier:sgd:tol": 0.001,
        },
    ),
    147: (
        {"algorithm": "RF", "hyperparameters": {"min_samples_split": 4, "criterion": "entropy"}},
        {
            "classifier:__choice__": "random_forest",
            "classifier:random_forest:bootstrap": "True",
            "classifier:random_forest:criterion": "entropy",
            "classifier:random_forest:max_depth": "None",
            "classifier:random_forest:max_features": 0.5,
            "classifier:random_forest:max_leaf_nodes": "None",
            "classifier:random_forest:min_impurity_decrease": 0.0,
            "classifier:random_forest:min_samples_leaf": 1,
            "classifier:random_forest:min_samples_split": 4,
            "classifier:random_forest:min_weight_fraction_leaf": 0.0,
        },
    ),
    178: (
        {"algorithm": "kSVM", "hyperparameters": {"C": 0.25, "kernel": "rbf", "coef0": 0}},
        {
            "classifier:__choice__": "libsvm_svc",
            "classifier:libsvm_svc:C": 0.25,
            "classifier:libsvm_svc:gamma": 0.1,
            "classifier:libsvm_svc:kernel": "rbf",  # no coef0, no degree
            "classifier:libsvm_svc:max_iter": -1,
            "classifier:libsvm_svc:shrinking": "True",
            "classifier:libsvm_svc:tol": 0.001,
        },
    ),
    205: (
        {"algorithm": "kSVM", "hyperparameters": {"C": 8, "kernel": "poly", "coef0": 10}},
        {
            "classifier:__choice__": "libsvm_svc",
            "classifier:libsvm_svc:C": 8.0,
            "classifier:libsvm_svc:coef0": 1.0,  # clipped from 10
            "classifier:libsvm_svc:degree": 3,
            "classifier:libsvm_svc:gamma": 0.1,
            "classifier:libsvm_svc:kernel": "poly",
            "classifier:libsvm_svc:max_iter": -1,
            "classifier:libsvm_svc:shrinking": "True",
            "classifier:libsvm_svc:tol": 0.001,
        },
    ),
    216: (
        {"algorithm": "lSVM", "hyperparameters": {"C": 4}},
        {
            "classifier:__choice__": "liblinear_svc",
            "classifier:liblinear_svc:C": 4.0,
            "classifier:liblinear_svc:dual": "False",
            "classifier:liblinear_svc:fit_intercept": "True",
            "classifier:liblinear_svc:intercept_scaling": 1,
            "classifier:liblinear_svc:loss": "squared_hinge",
            "classifier:liblinear_svc:multi_class": "ovr",
            "classifier:liblinear_svc:penalty": "l2",
            "classifier:liblinear_svc:tol": 0.0001,
        },
    ),
}


@pytest.mark.parametrize("column", sorted(HAND_PICKED))
def test_hand_picked_model_arrives_under_our_names(column, translated, oboe) -> None:
    header, expected = HAND_PICKED[column]
    assert oboe.pool.descriptions[column] == header
    assert classifier_part(config_of(translated, column)) == expected


# ---------------------------------------------------------------------------------------------
# What was dropped, clipped, merged
# ---------------------------------------------------------------------------------------------


def test_counts_per_algorithm(translated) -> None:
    info = translated.info
    assert info["kept"] == {
        "AB": 6, "DT": 5, "ExtraTrees": 10, "GBT": 12, "GNB": 1, "KNN": 16, "MLP": 6,
        "Perceptron": 1, "RF": 10, "kSVM": 27, "lSVM": 9,
    }  # fmt: skip
    assert info["dropped"] == {"DT": 4, "ExtraTrees": 10, "Logit": 32, "MLP": 6, "RF": 10}
    merged = Counter()
    for record in info["merged"]:
        merged[record["kept"]] += len(record["merged"])
    assert sum(merged.values()) == 219 - 103 - 62
    assert info["classifiers"]["Logit"] is None and info["classifiers"]["GBT"] == (
        "gradient_boosting"
    )
    assert info["translation"].endswith(".") and info["translation"].count(". ") == 0


def test_dropped_are_fractions_logit_and_sgd_mlps(translated, oboe) -> None:
    """The dropped columns, found here from the headers: every Logit, every MLP trained by SGD,
    every tree model whose min_samples_split is a float (a fraction of the rows)."""
    expected = {
        j
        for j, d in enumerate(oboe.pool.descriptions)
        if d["algorithm"] == "Logit"
        or d["hyperparameters"].get("solver") == "sgd"
        or isinstance(d["hyperparameters"].get("min_samples_split"), float)
    }
    merged = {j for r in translated.info["merged"] for j in r["merged"]}
    kept = set(translated.info["source_configs"])
    assert len(expected) == 62
    assert kept | merged | expected == set(range(219))
    assert not (kept & merged) and not (kept & expected) and not (merged & expected)
    assert set(translated.info["dropped_why"]) == {"DT", "ExtraTrees", "Logit", "MLP", "RF"}


def test_clipped_values(translated) -> None:
    clipped = translated.info["clipped"]
    assert set(clipped) == {"AB", "DT", "ExtraTrees", "GBT", "Perceptron", "RF", "kSVM"}
    columns = {a: {c for r in records for c in r["columns"]} for a, records in clipped.items()}
    assert {a: len(c) for a, c in columns.items()} == {
        "AB": 4, "DT": 6, "ExtraTrees": 12, "GBT": 4, "Perceptron": 1, "RF": 12, "kSVM": 9,
    }  # fmt: skip
    # Kept columns measured with a value we clipped: min_samples_split 32 (DT, ET, RF), the
    # Perceptron, and the polynomial SVMs with coef0 = 10.
    kept_clipped = set().union(*columns.values()) & set(translated.info["source_configs"])
    assert sorted(kept_clipped) == [14, 32, 33, 143, 152, 153, *range(177, 210, 4)]
    assert clipped["AB"] == [
        {"hyperparameter": "classifier:adaboost:learning_rate", "from": 2.5, "to": 2.0,
         "columns": [3, 8]},
        {"hyperparameter": "classifier:adaboost:learning_rate", "from": 3, "to": 2.0,
         "columns": [4, 9]},
    ]  # fmt: skip
    assert clipped["GBT"] == [
        {"hyperparameter": "classifier:gradient_boosting:learning_rate", "from": 0.001,
         "to": 0.01, "columns": [54, 55, 56, 57]}
    ]  # fmt: skip
    assert clipped["kSVM"] == [
        {"hyperparameter": "classifier:libsvm_svc:coef0", "from": 10, "to": 1.0,
         "columns": list(range(177, 210, 4))}
    ]  # fmt: skip
    rf = clipped["RF"]
    assert [(r["from"], r["to"]) for r in rf] == [(n, 20) for n in (32, 64, 128, 256, 512, 1024)]
    assert rf[0]["columns"] == [152, 153]
    assert {(r["hyperparameter"], r["from"], r["to"]) for r in clipped["Perceptron"]} == {
        ("classifier:sgd:eta0", 1.0, 0.1),
        ("classifier:sgd:alpha", 0.0, 1e-07),
    }
    assert translated.info["approximated"]["GBT"]["max_features"]["columns"] == list(
        range(55, 82, 2)
    )


def test_merges_keep_the_column_measured_closest(translated) -> None:
    merged = {r["kept"]: r["merged"] for r in translated.info["merged"]}
    # GBT, learning rate 0.01, depth 3: Oboe's own 0.01 (58), not 0.001 clipped (54) or
    # max_features="log2" (55, 59).
    assert merged[58] == [54, 55, 59]
    # min_samples_split 32..1024, all clipped to 20: the first, 32, the closest.
    assert merged[152] == [154, 156, 158, 160, 162]
    # AdaBoost's learning rates 2, 2.5 and 3 -> 2.0: Oboe's own 2.
    assert merged[2] == [3, 4]
    # An RBF kernel ignores coef0: coef0 = 0 and 10 are one model.
    assert merged[174] == [175]
    assert 54 not in translated.info["source_configs"]


def test_what_the_translation_set_or_could_not_is_recorded(translated) -> None:
    """The records docs/data.md describes: the settings made for scikit-learn defaults Oboe
    relied on, the defaults no setting expresses, and why models were dropped."""
    info = translated.info
    assert info["implied"]["DT"] == {"classifier:decision_tree:max_depth_factor": 2.0}
    assert info["implied"]["GBT"] == {"classifier:gradient_boosting:min_samples_leaf": 1}
    assert info["implied"]["MLP"] == {
        "classifier:mlp:num_nodes_per_layer": 100,
        "classifier:mlp:early_stopping": "train",
    }
    assert set(info["implied"]) == {"DT", "GBT", "MLP", "Perceptron"}
    # Only for algorithms with kept columns: Logit, all dropped, has none.
    assert set(info["unmatched_defaults"]) == {"AB", "ExtraTrees", "RF", "GBT", "kSVM", "MLP"}
    assert info["dropped_why"]["MLP"] == ["an MLP trained by SGD (our MLP is trained by adam)"]
    for algorithm in ("DT", "ExtraTrees", "RF"):
        assert info["dropped_why"][algorithm] == [
            "min_samples_split as a fraction of the rows (our space takes a count)"
        ]


def test_unknown_settings_are_errors_not_silent_losses(space) -> None:
    extra = {"algorithm": "RF", "hyperparameters": {"min_samples_split": 2, "criterion": "gini",
                                                    "max_depth": 3}}  # fmt: skip
    with pytest.raises(DatasetError, match="max_depth"):
        translate(extra, space)
    with pytest.raises(DatasetError, match="XGB"):
        translate({"algorithm": "XGB", "hyperparameters": {}}, space)


def test_cache_name_names_the_space_plugin_version() -> None:
    from importlib.metadata import version

    assert OboeAutoSklearn().cache_name().endswith(f"-automl-sklearn-{version('automl-sklearn')}")


# ---------------------------------------------------------------------------------------------
# End to end: translated configurations build into pipelines that learn
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def breast_cancer():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)


def balanced_accuracy(pipeline: Any, data: Any) -> float:
    from sklearn.metrics import balanced_accuracy_score

    X_train, X_test, y_train, y_test = data
    pipeline.fit(X_train, y_train)
    assert pipeline.predict_proba(X_test).shape == (len(X_test), 2)
    return balanced_accuracy_score(y_test, pipeline.predict(X_test))


def test_the_random_forest_fits_and_predicts_breast_cancer(translated, space, breast_cancer):
    config = config_of(translated, 147)
    pipeline = space.build(config, BuildContext("classification", seed=0))
    assert type(pipeline[-1].estimator).__name__ == "RandomForestClassifier"
    assert balanced_accuracy(pipeline, breast_cancer) > 0.9


@pytest.mark.filterwarnings("ignore:Stochastic Optimizer")  # the MLP, cut short on purpose
def test_every_classifier_fits_breast_cancer(translated, space, breast_cancer) -> None:
    """The first configuration of each classifier, at a sixteenth of its iterations (GBT at
    learning rate 0.01 and the MLP at 1e-4 take tens of seconds at full length)."""
    first: dict[str, dict[str, Any]] = {}
    for config in translated.configs:
        first.setdefault(config["classifier:__choice__"], config)
    assert len(first) == 11
    for name, config in first.items():
        pipeline = space.build(config, BuildContext("classification", seed=0, budget=1 / 16))
        assert balanced_accuracy(pipeline, breast_cancer) > 0.8, name
