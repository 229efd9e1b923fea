"""The surrogate is found by name, built from a recipe's params, and declared as an entry
point of the ``automl_core`` group."""

from __future__ import annotations

from importlib import metadata

import numpy as np

import automl_surrogate_rf.plugin
from automl_core.contracts import Surrogate
from automl_core.plugins import ENTRY_POINT_GROUP, load_plugins
from automl_surrogate_rf import RandomForestSurrogate


def test_registered_as_rf_and_built_from_recipe_params():
    plugins = load_plugins(extra=[automl_surrogate_rf.plugin], entry_points=False)
    assert "rf" in plugins.registry.names("surrogate")
    surrogate = plugins.create("surrogate", "rf", {"n_trees": 5, "log_y": True})
    assert isinstance(surrogate, RandomForestSurrogate) and isinstance(surrogate, Surrogate)
    assert surrogate.n_trees == 5 and surrogate.log_y
    X = np.random.default_rng(0).random((30, 3))
    assert surrogate.fit(X, X.sum(axis=1)).tree_predictions(X).shape == (5, 30)


def test_its_parameters_are_listed_with_their_defaults():
    plugins = load_plugins(extra=[automl_surrogate_rf.plugin], entry_points=False)
    assert plugins.get("surrogate", "rf").parameters() == {
        "n_trees": 10,
        "max_features": 5 / 6,
        "min_samples_split": 3,
        "min_samples_leaf": 3,
        "max_depth": 20,
        "bootstrap": True,
        "log_y": False,
        "seed": 0,
        "update_from": 100,
        "update_trees": 2,
    }


def test_the_entry_point_names_the_plugin_module():
    points = {p.name: p.value for p in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    assert points.get("surrogate-rf") == "automl_surrogate_rf.plugin"
