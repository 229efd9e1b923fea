"""The plugin registers the surrogate under the name recipes use."""

from __future__ import annotations

import numpy as np

from automl_core.plugins import load_plugins
from automl_surrogate_gp import GPSurrogate, plugin


def test_registered_as_gp():
    plugins = load_plugins(extra=[plugin], entry_points=False)
    surrogate = plugins.create("surrogate", "gp", {"iterations": 20, "include_noise": True})
    assert isinstance(surrogate, GPSurrogate)
    assert (surrogate.iterations, surrogate.include_noise) == (20, True)
    assert "iterations" in plugins.get("surrogate", "gp").parameters()


def test_found_through_its_entry_point():
    registration = load_plugins().get("surrogate", "gp")
    assert registration.obj.load() is GPSurrogate  # registered lazily: torch loads on use
    assert registration.origin.distribution == "automl-surrogate-gp"


def test_the_registered_factory_builds_a_working_surrogate():
    surrogate = load_plugins(extra=[plugin], entry_points=False).create("surrogate", "gp")
    X = np.random.default_rng(0).random((8, 2))
    mean, std = surrogate.fit(X, X.sum(axis=1)).predict(X)
    assert mean.shape == std.shape == (8,)
