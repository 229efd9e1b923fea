"""A run builds each component of its recipe once: what checking the recipe built, the run
uses (``automl_engine.build_once``). Before, every factory was called twice at set-up (the
check, then the composition) and the ensembler three times."""

from __future__ import annotations

import collections

import numpy as np
from toy_plugin import toy_recipe

from automl_core.plugins import Plugins
from automl_engine.build_once import BuildOnce, Kept
from automl_engine.recipe import parse_recipe
from automl_engine.runner import run


def counted_factory_calls(monkeypatch) -> collections.Counter:
    calls: collections.Counter = collections.Counter()
    create = Plugins.create

    def counting(self, kind, name, params=None):
        calls[kind, name] += 1
        return create(self, kind, name, params)

    monkeypatch.setattr(Plugins, "create", counting)
    return calls


def test_a_run_calls_each_factory_of_its_recipe_once(plugins, tmp_path, monkeypatch):
    """Every component once; the surrogate once per request of the strategy (this one asks
    for a fresh one per fit), the first of them the one the check built."""
    from automl_engine import compose

    calls = counted_factory_calls(monkeypatch)
    requests = []
    factory_of = compose._surrogate_factory

    def counted_requests(recipe, plugins):
        build = factory_of(recipe, plugins)
        return None if build is None else (lambda: requests.append(1) or build())

    monkeypatch.setattr(compose, "_surrogate_factory", counted_requests)
    recipe = toy_recipe(
        search={"strategy": "greedy-surrogate", "surrogate": "mean"},
        ensemble="best-two",
        warmstart="fixed",
        executor="sequential",
        budget={"trials": 8},
    )
    run(parse_recipe(recipe), tmp_path / "run", plugins=plugins)
    assert len(requests) > 1
    assert calls == {
        ("search_strategy", "greedy-surrogate"): 1,
        ("surrogate", "mean"): len(requests),
        ("ensembler", "best-two"): 1,
        ("warmstarter", "fixed"): 1,
        ("executor", "sequential"): 1,
        ("space", "toy-classification"): 1,
    }


def test_after_the_check_each_kept_component_is_handed_out_once_then_built_afresh(plugins):
    """A strategy asking for a fresh surrogate per fit gets the checked one first, then new
    ones; parameters that differ are another component."""
    once = BuildOnce.around(plugins)
    checked = once.create("surrogate", "mean", {})
    once.checked()
    assert once.create("surrogate", "mean", {}) is checked
    assert once.create("surrogate", "mean", {}) is not checked
    assert once.kept == []
    unchecked = BuildOnce.around(plugins)
    unchecked.create("space", "toy-classification", {})
    unchecked.checked()
    include = {"include": {"classifier": ["decision_tree"]}}
    other = unchecked.create("space", "toy-classification", include)
    assert other is not None and len(unchecked.kept) == 1


def test_parameters_that_cannot_be_compared_are_another_component():
    kept = Kept("surrogate", "gp", {"x": np.arange(3)}, object())
    assert not kept.matches("surrogate", "gp", {"x": np.arange(3)})
    assert Kept("surrogate", "gp", {"k": 2}, object()).matches("surrogate", "gp", {"k": 2})


def test_checking_a_recipe_builds_each_of_its_components_once(plugins):
    """The check keeps what it builds for the run: a component built twice while checking
    (the surrogate, once for the strategy and once for its space) would be kept twice."""
    from automl_engine.validation import check_recipe

    once = BuildOnce.around(plugins)
    recipe = toy_recipe(
        search={"strategy": "greedy-surrogate", "surrogate": "mean"}, ensemble="best-two"
    )
    check_recipe(parse_recipe(recipe), once)
    built = collections.Counter((kept.kind, kept.name) for kept in once.kept)
    assert built[("surrogate", "mean")] == 1 and set(built.values()) == {1}
