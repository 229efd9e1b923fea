"""A space factory that takes a ``metric`` parameter is given the run's metric."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from toy_plugin import ToyPlugin, toy_recipe, toy_space

from automl_core import hookimpl
from automl_core.plugins import load_plugins
from automl_engine.compose import prepare
from automl_engine.recipe import parse_recipe


class MetricSpaces:
    """``metric-space`` records the metric it was built for; ``plain-space`` takes none."""

    built: ClassVar[list[str | None]] = []

    @hookimpl
    def register_spaces(self, register: Any) -> None:
        def metric_space(components: list, metric: str | None = None) -> Any:
            MetricSpaces.built.append(metric)
            return toy_space("classification", "classifier")(components)

        def plain_space(components: list, **params: Any) -> Any:
            assert "metric" not in params
            return toy_space("classification", "classifier")(components)

        register("metric-space", metric_space)
        register("plain-space", plain_space)


@pytest.fixture
def plugins() -> Any:
    MetricSpaces.built = []
    return load_plugins(extra=[ToyPlugin(), MetricSpaces()], entry_points=False)


@pytest.mark.parametrize(
    "metric, params, expected",
    [
        ("accuracy", {}, "accuracy"),
        (None, {}, "balanced_accuracy"),  # the default classification metric
        ("accuracy", {"metric": "roc_auc"}, "roc_auc"),  # the recipe's own value wins
    ],
)
def test_the_space_gets_the_runs_metric(plugins, metric, params, expected) -> None:
    recipe = toy_recipe(space={"name": "metric-space", "params": params})
    recipe["task"].pop("metric")
    if metric is not None:
        recipe["task"]["metric"] = metric
    prepare(parse_recipe(recipe), plugins)
    assert MetricSpaces.built == [expected]


def test_a_space_without_a_metric_parameter_gets_none(plugins) -> None:
    setup = prepare(parse_recipe(toy_recipe(space="plain-space")), plugins)
    assert setup.space.task == "classification"
