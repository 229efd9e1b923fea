"""The hooks register what they claim, and the core's plugin loader finds them."""

from __future__ import annotations

from automl_core.plugins import load_plugins
from automl_core.space import PipelineComponent
from automl_sklearn import plugin
from automl_spaces.pipeline_space import PipelineSpace

CLASSIFIERS = {
    "adaboost", "bernoulli_nb", "decision_tree", "extra_trees", "gaussian_nb",
    "gradient_boosting", "k_nearest_neighbors", "lda", "liblinear_svc", "libsvm_svc", "mlp",
    "multinomial_nb", "passive_aggressive", "qda", "random_forest", "sgd", "lightgbm", "xgboost",
}  # fmt: skip
REGRESSORS = {
    "adaboost", "ard_regression", "decision_tree", "extra_trees", "gaussian_process",
    "gradient_boosting", "k_nearest_neighbors", "liblinear_svr", "libsvm_svr", "mlp",
    "random_forest", "ridge", "sgd", "lightgbm", "xgboost",
}  # fmt: skip
SHARED_PREPROCESSORS = {
    "no_preprocessing", "fast_ica", "feature_agglomeration", "kernel_pca", "kitchen_sinks",
    "nystroem_sampler", "pca", "polynomial", "random_trees_embedding",
}  # fmt: skip
CLASSIFICATION_PREPROCESSORS = {
    "extra_trees_preproc_for_classification", "liblinear_svc_preprocessor",
    "select_percentile_classification", "select_rates_classification",
}  # fmt: skip
REGRESSION_PREPROCESSORS = {
    "extra_trees_preproc_for_regression", "select_percentile_regression",
    "select_rates_regression",
}  # fmt: skip
RESCALERS = {
    "minmax", "none", "normalize", "power_transformer", "quantile_transformer",
    "robust_scaler", "standardize",
}  # fmt: skip


def _registered_components() -> list[PipelineComponent]:
    registered: list[PipelineComponent] = []
    plugin.register_components(register=registered.append)
    return registered


def _names(components: list[PipelineComponent], stage: str, task: str) -> set[str]:
    return {c.name for c in components if c.stage == stage and task in c.tasks}


def test_register_components_registers_each_component_once() -> None:
    registered = _registered_components()
    assert all(isinstance(c, PipelineComponent) for c in registered)
    keys = [f"{c.stage}:{c.name}" for c in registered]
    assert len(keys) == len(set(keys))
    assert _names(registered, "classifier", "classification") == CLASSIFIERS
    assert _names(registered, "regressor", "regression") == REGRESSORS
    assert _names(registered, "classifier", "regression") == set()
    assert (
        _names(registered, "feature_preprocessor", "classification")
        == SHARED_PREPROCESSORS | CLASSIFICATION_PREPROCESSORS
    )
    assert (
        _names(registered, "feature_preprocessor", "regression")
        == SHARED_PREPROCESSORS | REGRESSION_PREPROCESSORS
    )
    assert _names(registered, "rescaling", "regression") == RESCALERS
    assert _names(registered, "categorical_encoding", "classification") == {
        "encoding",
        "no_encoding",
        "one_hot_encoding",
    }
    assert _names(registered, "category_coalescence", "classification") == {
        "minority_coalescer",
        "no_coalescense",
    }
    assert _names(registered, "imputation", "classification") == {"numerical_imputation"}
    assert _names(registered, "balancing", "classification") == {"balancing"}
    assert _names(registered, "balancing", "regression") == set()
    assert all(c.description for c in registered)


def test_register_spaces_registers_two_factories() -> None:
    registered: list[tuple] = []
    plugin.register_spaces(register=lambda name, factory: registered.append((name, factory)))
    assert [name for name, _ in registered] == [
        "autosklearn-classification",
        "autosklearn-regression",
    ]
    for name, factory in registered:
        space = factory(_registered_components())
        assert isinstance(space, PipelineSpace)
        assert space.name == name


def test_core_loader_finds_the_registrations() -> None:
    plugins = load_plugins([plugin], entry_points=False, defaults=False)
    assert not plugins.broken
    assert "classifier:random_forest" in plugins.registry.names("component")
    assert "regressor:gaussian_process" in plugins.registry.names("component")
    assert {"autosklearn-classification", "autosklearn-regression"} <= set(
        plugins.registry.names("space")
    )
    space = plugins.create("space", "autosklearn-regression")
    assert space.task == "regression"
