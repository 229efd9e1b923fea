"""The spaces: auto-sklearn's names and structure, restriction, third-party components."""

from __future__ import annotations

import numpy as np
import pytest
from ConfigSpace import Integer
from sklearn.tree import DecisionTreeClassifier

from automl_core.errors import InvalidConfigurationError
from automl_core.space import BuildContext, PipelineComponent
from automl_sklearn.hyperparameters import make_space
from automl_sklearn.plugin import COMPONENTS
from automl_sklearn.spaces import classification_space, regression_space

CATEGORICAL = "data_preprocessor:feature_type:categorical_transformer"
NUMERICAL = "data_preprocessor:feature_type:numerical_transformer"


def test_stages_and_prefixes_are_auto_sklearns(classification, regression) -> None:
    assert [(s.name, s.prefix, s.choice) for s in classification.stages] == [
        ("categorical_encoding", f"{CATEGORICAL}:categorical_encoding", True),
        ("category_coalescence", f"{CATEGORICAL}:category_coalescence", True),
        ("imputation", f"{NUMERICAL}:imputation", False),
        ("rescaling", f"{NUMERICAL}:rescaling", True),
        ("balancing", "balancing", False),
        ("feature_preprocessor", "feature_preprocessor", True),
        ("classifier", "classifier", True),
    ]
    assert [s.name for s in regression.stages] == [
        "categorical_encoding",
        "category_coalescence",
        "imputation",
        "rescaling",
        "feature_preprocessor",
        "regressor",
    ]


def test_defaults_and_constants(classification, regression) -> None:
    default = classification.default()
    assert default["data_preprocessor:__choice__"] == "feature_type"
    assert default["classifier:__choice__"] == "random_forest"
    assert default["feature_preprocessor:__choice__"] == "no_preprocessing"
    assert default[f"{NUMERICAL}:rescaling:__choice__"] == "standardize"
    assert default[f"{NUMERICAL}:imputation:strategy"] == "mean"
    assert default["balancing:strategy"] == "none"
    assert regression.default()["regressor:__choice__"] == "random_forest"


def test_an_auto_sklearn_configuration_validates(classification) -> None:
    # A row of auto-sklearn 0.15's stored configurations (balanced_accuracy, binary, dense).
    config = {
        "balancing:strategy": "weighting",
        "classifier:__choice__": "libsvm_svc",
        "classifier:libsvm_svc:C": 2.3,
        "classifier:libsvm_svc:gamma": 0.06,
        "classifier:libsvm_svc:kernel": "poly",
        "classifier:libsvm_svc:degree": 2,
        "classifier:libsvm_svc:coef0": 0.39,
        "classifier:libsvm_svc:max_iter": -1,
        "classifier:libsvm_svc:shrinking": "False",
        "classifier:libsvm_svc:tol": 0.002,
        f"{CATEGORICAL}:categorical_encoding:__choice__": "one_hot_encoding",
        f"{CATEGORICAL}:category_coalescence:__choice__": "no_coalescense",
        f"{NUMERICAL}:imputation:strategy": "median",
        f"{NUMERICAL}:rescaling:__choice__": "robust_scaler",
        f"{NUMERICAL}:rescaling:robust_scaler:q_max": 0.75,
        f"{NUMERICAL}:rescaling:robust_scaler:q_min": 0.25,
        "feature_preprocessor:__choice__": "feature_agglomeration",
        "feature_preprocessor:feature_agglomeration:affinity": "euclidean",
        "feature_preprocessor:feature_agglomeration:linkage": "ward",
        "feature_preprocessor:feature_agglomeration:n_clusters": 182,
        "feature_preprocessor:feature_agglomeration:pooling_func": "max",
    }
    assert classification.validate(config)["classifier:__choice__"] == "libsvm_svc"


def test_component_forbidden_clauses_hold(classification) -> None:
    config = classification.default()
    config.update(
        {
            "feature_preprocessor:__choice__": "feature_agglomeration",
            "feature_preprocessor:feature_agglomeration:affinity": "cosine",
            "feature_preprocessor:feature_agglomeration:linkage": "ward",
            "feature_preprocessor:feature_agglomeration:n_clusters": 25,
            "feature_preprocessor:feature_agglomeration:pooling_func": "mean",
        }
    )
    with pytest.raises(InvalidConfigurationError):
        classification.validate(config)


def test_stage_combination_forbidden_clauses_hold(classification) -> None:
    configs = classification.sample(np.random.default_rng(0), 400)
    pairs = {(c["classifier:__choice__"], c["feature_preprocessor:__choice__"]) for c in configs}
    assert ("mlp", "kernel_pca") not in pairs
    assert ("random_forest", "nystroem_sampler") not in pairs
    assert ("multinomial_nb", "pca") not in pairs
    assert ("gaussian_nb", "random_trees_embedding") not in pairs
    assert ("sgd", "kernel_pca") in pairs or ("lightgbm", "kernel_pca") in pairs


def test_include_and_exclude_restrict_the_space() -> None:
    space = classification_space(
        list(COMPONENTS),
        include={"classifier": ["lda", "sgd"]},
        exclude={"feature_preprocessor": ["pca", "polynomial"]},
    )
    assert space.forbidden  # restriction keeps the space's forbidden combinations
    assert [c.name for c in space.stage("classifier").components] == ["lda", "sgd"]
    preprocessors = {c.name for c in space.stage("feature_preprocessor").components}
    assert "no_preprocessing" in preprocessors and not {"pca", "polynomial"} & preprocessors
    for config in space.sample(np.random.default_rng(1), 50):
        assert config["classifier:__choice__"] in {"lda", "sgd"}
    assert not any(name.startswith("classifier:random_forest") for name in space.configspace)
    with pytest.raises(KeyError):
        classification_space(list(COMPONENTS), include={"no_such_stage": ["x"]})


def test_restriction_keeps_only_relevant_forbidden_combinations() -> None:
    space = regression_space(
        list(COMPONENTS),
        include={"regressor": ["gaussian_process"], "feature_preprocessor": ["kernel_pca"]},
    )
    # Every remaining pipeline would be forbidden: the combination is dropped, not the space.
    assert space.default()["feature_preprocessor:__choice__"] == "kernel_pca"


def _third_party_tree(params: dict, context: BuildContext) -> DecisionTreeClassifier:
    return DecisionTreeClassifier(max_depth=int(params["depth"]), random_state=context.seed)


THIRD_PARTY = PipelineComponent(
    name="shallow_tree",
    stage="classifier",
    build=_third_party_tree,
    hyperparameters=lambda: make_space(Integer("depth", (1, 4), default=2)),
    tasks=frozenset({"classification"}),
    description="A third-party classifier.",
)


def test_third_party_component_joins_its_stage(cancer) -> None:
    components = [*COMPONENTS, THIRD_PARTY]
    space = classification_space(components)
    assert "shallow_tree" in [c.name for c in space.stage("classifier").components]
    assert "classifier:shallow_tree:depth" in space.configspace
    assert "shallow_tree" not in [
        c.name for c in regression_space(components).stage("regressor").components
    ]
    only = classification_space(components, include={"classifier": ["shallow_tree"]})
    X_train, X_test, y_train, y_test = cancer
    model = only.build(only.default(), BuildContext("classification", 0)).fit(X_train, y_train)
    assert model.score(X_test, y_test) > 0.8


def test_fixed_stages_keep_this_plugins_component() -> None:
    other = PipelineComponent("other_imputer", "imputation", _third_party_tree)
    space = classification_space([*COMPONENTS, other])
    assert [c.name for c in space.stage("imputation").components] == ["numerical_imputation"]


def test_duplicate_component_names_are_refused() -> None:
    copy = PipelineComponent(
        "lda", "classifier", _third_party_tree, tasks=frozenset({"classification"})
    )
    with pytest.raises(ValueError, match="more than one"):
        classification_space([*COMPONENTS, copy])


ITERATIVE = {
    "classification": {
        "adaboost": "n_estimators",
        "extra_trees": "n_estimators",
        "random_forest": "n_estimators",
        "gradient_boosting": "max_iter",
        "mlp": "max_iter",
        "passive_aggressive": "max_iter",
        "sgd": "max_iter",
        "lightgbm": "n_estimators",
        "xgboost": "n_estimators",
    },
    "regression": {
        "adaboost": "n_estimators",
        "extra_trees": "n_estimators",
        "random_forest": "n_estimators",
        "gradient_boosting": "max_iter",
        "mlp": "max_iter",
        "sgd": "max_iter",
        "lightgbm": "n_estimators",
        "xgboost": "n_estimators",
    },
}


@pytest.mark.parametrize(
    "task,name", [(task, name) for task, names in ITERATIVE.items() for name in names]
)
def test_a_budget_shortens_each_iterative_model(task, name) -> None:
    """At a quarter budget the model trains a quarter of its iterations (never fewer than
    its declared minimum), whether the count is a hyper-parameter or fixed."""
    factory = classification_space if task == "classification" else regression_space
    stage = "classifier" if task == "classification" else "regressor"
    space = factory(COMPONENTS, include={stage: [name]})
    component = space.stage(stage).component(name)
    assert component.iterations is not None
    assert component.iterations.parameter == ITERATIVE[task][name]
    config = space.sample(np.random.default_rng(0), 1)[0]

    def iterations(budget: float | None) -> int:
        built = space.build(config, BuildContext(task, seed=0, budget=budget))
        counts = {
            key: value
            for key, value in built.get_params(deep=True).items()
            if (
                key.startswith(f"{stage}__") and key.endswith(f"__{component.iterations.parameter}")
            )
            or key == f"{stage}__{component.iterations.parameter}"
        }
        assert len(counts) == 1, counts
        return int(next(iter(counts.values())))

    full = iterations(None)
    assert iterations(0.25) == component.iterations.at_budget(0.25, full) < full
    assert iterations(1 / 64) == component.iterations.min


def test_sampled_and_decoded_configurations_equal_configspaces_own(
    classification, regression
) -> None:
    """``sample`` and ``decode`` turn vectors into configurations column by column; the
    result must be what ConfigSpace's per-value path gives (values, types, rounding and key
    order), on both of auto-sklearn's spaces."""
    from automl_core.space import plain_config

    for space in (classification, regression):
        rng = np.random.default_rng(5)
        configurations = space._sample_configurations(rng, 500)
        expected = [plain_config(c) for c in configurations]
        vectors = np.array([c.get_array() for c in configurations])
        got = space._plain_rows(vectors)
        assert [list(c.items()) for c in got] == [list(c.items()) for c in expected]
        assert [[type(v) for v in c.values()] for c in got] == [
            [type(v) for v in c.values()] for c in expected
        ]
        assert space.sample(np.random.default_rng(5), 500) == expected
        encoded = space.encode(expected[:50])
        assert [space.decode(row) for row in encoded] == expected[:50]
