"""Class weighting by default under balanced accuracy: the space's ``balancing`` and
``metric`` parameters, and the runner handing the space the run's metric."""

from __future__ import annotations

import pytest

from automl_core.errors import PluginError
from automl_core.plugins import load_plugins
from automl_core.space import BuildContext
from automl_engine.compose import prepare
from automl_engine.recipe import parse_recipe
from automl_sklearn.plugin import COMPONENTS
from automl_sklearn.spaces import balancing_default, classification_space
from automl_sklearn.wrappers import BalancedSampleWeights

STRATEGY = "balancing:strategy"


@pytest.mark.parametrize(
    "balancing, metric, expected",
    [
        ("auto", "balanced_accuracy", "weighting"),
        ("auto", "accuracy", "none"),
        ("auto", "roc_auc", "none"),
        ("auto", "f1_macro", "none"),
        ("auto", "log_loss", "none"),
        ("auto", None, "none"),  # no metric known (a space built outside a run): auto-sklearn's
        ("none", "balanced_accuracy", "none"),
        ("weighting", "accuracy", "weighting"),
    ],
)
def test_the_default_strategy_follows_the_metric(balancing, metric, expected) -> None:
    assert balancing_default(balancing, metric) == expected


def test_the_space_default_is_the_chosen_strategy() -> None:
    for metric, expected in (("balanced_accuracy", "weighting"), (None, "none")):
        space = classification_space(list(COMPONENTS), metric=metric)
        assert space.default()[STRATEGY] == expected


def test_both_strategies_stay_in_the_space_with_the_same_encoding() -> None:
    weighted = classification_space(list(COMPONENTS), metric="balanced_accuracy")
    plain = classification_space(list(COMPONENTS), metric="accuracy")
    configs = [{**plain.default(), STRATEGY: s} for s in ("none", "weighting")]
    for config in configs:
        assert weighted.validate(config) == plain.validate(config)
    assert (weighted.encode(configs) == plain.encode(configs)).all()


def test_an_unknown_balancing_is_refused() -> None:
    with pytest.raises(ValueError, match="balancing must be one of"):
        classification_space(list(COMPONENTS), balancing="oversampling")


@pytest.mark.parametrize(
    "classifier, weighted",
    [
        ("random_forest", lambda final: "balanced" in final.get_params().values()),
        ("gaussian_nb", lambda final: isinstance(final, BalancedSampleWeights)),
    ],
)
def test_the_default_pipeline_under_balanced_accuracy_is_class_weighted(
    classifier, weighted
) -> None:
    for metric, expected in (("balanced_accuracy", True), ("accuracy", False)):
        space = classification_space(
            list(COMPONENTS), include={"classifier": [classifier]}, metric=metric
        )
        pipeline = space.build(space.default(), BuildContext("classification", 0))
        assert weighted(pipeline.named_steps["classifier"]) is expected, metric


def _recipe(metric: str | None, space_params: dict) -> dict:
    task = {"dataset": "sklearn:breast_cancer", "resampling": {"holdout": 0.3}}
    if metric is not None:
        task["metric"] = metric
    space = {"name": "autosklearn-classification", "params": space_params}
    return {"name": "t", "task": task, "space": space, "budget": {"trials": 1}, "seed": 0}


@pytest.fixture(scope="module")
def plugins():
    return load_plugins()


@pytest.mark.parametrize(
    "metric, space_params, expected",
    [
        (None, {}, "weighting"),  # the default metric is balanced accuracy
        ("balanced_accuracy", {}, "weighting"),
        ("accuracy", {}, "none"),
        ("balanced_accuracy", {"balancing": "none"}, "none"),  # a recipe can force none
        ("accuracy", {"balancing": "weighting"}, "weighting"),
        ("accuracy", {"metric": "balanced_accuracy"}, "weighting"),  # the recipe's own wins
    ],
)
def test_a_run_hands_the_space_its_metric(plugins, metric, space_params, expected) -> None:
    setup = prepare(parse_recipe(_recipe(metric, space_params)), plugins)
    assert setup.space.default()[STRATEGY] == expected
    assert setup.space.task == "classification"


def test_a_recipe_with_an_unknown_balancing_is_refused(plugins) -> None:
    with pytest.raises(PluginError, match="balancing must be one of"):
        prepare(parse_recipe(_recipe(None, {"balancing": "smote"})), plugins)
