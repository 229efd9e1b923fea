"""The `automl` distribution registers the default recipes, and every component they name is
installed with it (its dependencies)."""

from __future__ import annotations

from importlib import metadata

import pytest

from automl_core.plugins import load_plugins
from automl_defaults.plugin import RECIPES_DIR
from automl_engine.recipe import component_refs, load_recipe, parse_recipe


@pytest.fixture(scope="module")
def plugins():
    return load_plugins()


def test_the_default_recipes_are_registered_by_this_distribution(plugins):
    names = {path.stem for path in RECIPES_DIR.glob("*.yaml")}
    assert {"default-classification", "default-regression"} <= names
    for name in names:
        origin = plugins.get("recipe", name).origin
        assert origin.distribution == "automl", (name, origin)


@pytest.mark.parametrize("name", ["default-classification", "default-regression"])
def test_every_component_a_default_recipe_names_comes_from_a_dependency(plugins, name):
    requires = metadata.requires("automl") or []
    dependencies = {r.split(";")[0].split("[")[0].strip() for r in requires if "extra" not in r}
    recipe = load_recipe(name, plugins=plugins)
    refs = list(component_refs(recipe))
    assert refs, "the recipe names no component"
    for _, kind, ref in refs:
        distribution = plugins.get(kind, ref.name).origin.distribution
        assert distribution in dependencies | {"automl-core", "automl-engine"}, (
            f"{name} names the {kind} {ref.name!r} of {distribution}, which the `automl` "
            "distribution does not depend on"
        )


def test_what_the_defaults_are(plugins):
    """The choices issue 44's grids made (docs/recipes.md, "Why these defaults")."""
    for name, task in (
        ("default-classification", "classification"),
        ("default-regression", "regression"),
    ):
        registration = plugins.get("recipe", name)
        assert registration.description.startswith("The estimators' default")
        recipe = parse_recipe(registration.obj)
        assert recipe.task.type == task and recipe.space.name == f"autosklearn-{task}"
        assert recipe.search.strategy.name == "mcts" and recipe.search.surrogate.name == "rf"
        assert recipe.ensemble.name == "caruana"
        assert recipe.executor.name == "processes"
        assert recipe.task.policy.name == "bagged-by-rows"  # bagged on small data
    classification = parse_recipe(plugins.get("recipe", "default-classification").obj)
    assert classification.task.policy.params["max_bagged_rows"] == 500
    assert classification.warmstart.starter.name == "portfolio"
    assert classification.warmstart.optional
    regression = parse_recipe(plugins.get("recipe", "default-regression").obj)
    assert regression.warmstart is None  # its portfolio was level with the cold start (issue 46)
