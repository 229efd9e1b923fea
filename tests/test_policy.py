"""``task.resampling: auto``: a policy selector chooses the resampling once the data is known."""

from __future__ import annotations

import pytest
from toy_plugin import DoublesPlugin, FailingStrategy, FixedPolicySelector, ToyPlugin, toy_recipe

from automl_core import hookimpl
from automl_core.contracts import AUTO_POLICY_SELECTOR, Policy
from automl_core.errors import PluginError, RecipeError
from automl_core.plugins import load_plugins
from automl_engine.compose import policy_strategy, prepare
from automl_engine.history import RunHistory
from automl_engine.recipe import check_names, parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run


def auto_recipe(resampling: object = "auto") -> dict:
    recipe = toy_recipe()
    recipe["task"]["resampling"] = resampling
    return recipe


def test_auto_names_the_default_selector_and_a_mapping_names_another():
    assert parse_recipe(auto_recipe()).task.policy.name == AUTO_POLICY_SELECTOR == "auto"
    chosen = parse_recipe(auto_recipe({"auto": "fixed-policy"})).task.policy
    assert chosen.name == "fixed-policy"
    assert parse_recipe(toy_recipe()).task.policy is None


def test_an_unknown_selector_is_a_recipe_error_naming_the_path(plugins):
    recipe = parse_recipe(auto_recipe({"auto": "fixed-polcy"}))
    with pytest.raises(RecipeError, match=r"task\.resampling.*fixed-policy"):
        check_names(recipe, plugins)


def test_a_malformed_resampling_still_lists_auto_as_expected():
    with pytest.raises(RecipeError, match="auto"):
        parse_recipe(auto_recipe({"bootstrap": 3}))


def test_the_selector_sees_the_training_split_and_its_choice_is_used(plugins, tmp_path):
    FixedPolicySelector.seen.clear()
    recipe = parse_recipe(
        auto_recipe({"auto": "fixed-policy"}) | {"budget": {"trials": 2, "wall_time": 60}}
    )
    setup = prepare(recipe, plugins)
    task, budget = FixedPolicySelector.seen[-1]
    assert budget == 60
    assert task.n_rows == setup.task.train.n_rows and task.n_features == 30
    assert setup.task.evaluator.resampling.kind == "cv"
    assert setup.task.evaluator.resampling.folds == 3
    run(recipe, tmp_path / "run", plugins=plugins)
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        policy = history.get_meta("policy")
    assert policy == {
        "name": "fixed",
        "resampling": {"cv": 3},
        "halving": False,
        "racing_strategy": None,
        "strategy": "random",
        "info": {"why": "a test"},
    }


def test_a_policy_with_an_invalid_resampling_is_the_plugins_error(plugins):
    recipe = toy_recipe()
    recipe["task"]["resampling"] = {"auto": {"params": {}}}
    with pytest.raises(RecipeError, match=r"task\.resampling\.auto\.name"):
        parse_recipe(recipe)  # a mapping names its selector
    recipe["task"]["resampling"] = {"auto": {"name": "fixed-policy", "params": {"x": 1}}}
    assert parse_recipe(recipe).task.policy.params == {"x": 1}  # the selector's parameters
    recipe = parse_recipe(auto_recipe({"auto": "fixed-policy"}))
    bad = plugins.get("policy_selector", "fixed-policy")
    original = bad.obj
    try:
        object.__setattr__(bad, "obj", lambda: FixedPolicySelector(resampling={"cv": 1}))
        with pytest.raises(PluginError, match="invalid resampling"):
            prepare(recipe, plugins)
    finally:
        object.__setattr__(bad, "obj", original)


def test_a_halving_policy_must_name_the_strategy_that_races(plugins):
    """The engine knows no strategy by name: a selector that chooses halving names the
    racing strategy, or the run stops before it starts, saying so."""
    recipe = parse_recipe(auto_recipe({"auto": "fixed-policy"}))
    registration = plugins.get("policy_selector", "fixed-policy")
    original = registration.obj
    try:
        unnamed = lambda: FixedPolicySelector(halving=True, racing_strategy=None)  # noqa: E731
        object.__setattr__(registration, "obj", unnamed)
        with pytest.raises(PluginError, match=r"races candidates .* names no racing_strategy"):
            prepare(recipe, plugins)
    finally:
        object.__setattr__(registration, "obj", original)


def test_halving_policy_needs_a_halving_strategy(plugins):
    """The toy plugin set has no successive halving: the switch fails by name, clearly."""
    recipe = parse_recipe(auto_recipe({"auto": "fixed-policy"}))
    registration = plugins.get("policy_selector", "fixed-policy")
    original = registration.obj
    try:
        object.__setattr__(registration, "obj", lambda: FixedPolicySelector(halving=True))
        with pytest.raises(Exception, match="successive_halving"):
            prepare(recipe, plugins)
    finally:
        object.__setattr__(registration, "obj", original)


class BudgetPolicySelector(FixedPolicySelector):
    """Like the real selector, its choice depends on the time budget it is told."""

    def select(self, task, time_budget):
        folds = 3 if (time_budget or 0) < 300 else 5
        return Policy(f"cv{folds}", {"cv": folds}, False, {})


def test_a_resumed_run_keeps_the_policy_its_trials_were_run_with(plugins, tmp_path, monkeypatch):
    """Resuming may raise the budget; the policy (the trials' resampling) must not change."""
    registration = plugins.get("policy_selector", "fixed-policy")
    original = registration.obj
    setups = []
    real_prepare = prepare

    def recording_prepare(*args, **kwargs):
        setups.append(real_prepare(*args, **kwargs))
        return setups[-1]

    try:
        object.__setattr__(registration, "obj", BudgetPolicySelector)
        first = auto_recipe({"auto": "fixed-policy"}) | {"budget": {"trials": 2, "wall_time": 60}}
        run(parse_recipe(first), tmp_path / "run", plugins=plugins)
        more = first | {"budget": {"trials": 4, "wall_time": 3600}}
        monkeypatch.setattr("automl_engine.runner.prepare", recording_prepare)
        run(parse_recipe(more), tmp_path / "run", plugins=plugins, resume=True)
    finally:
        object.__setattr__(registration, "obj", original)
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        assert history.get_meta("policy")["name"] == "cv3"
    assert setups[-1].task.policy.name == "cv3"
    assert setups[-1].task.evaluator.resampling.folds == 3


class RacingStrategy(FailingStrategy):
    """Stands for a multi-fidelity strategy: it says it races budgets."""

    races_budgets = True


class RacingPlugin:
    """``hyperband`` and ``asha`` as strategies that race budgets, by the contract's flag."""

    @hookimpl
    def register_search_strategies(self, register):
        register("hyperband", RacingStrategy)
        register("asha", RacingStrategy)


RACING_PLUGINS = load_plugins(
    extra=[ToyPlugin(), DoublesPlugin(), RacingPlugin()], entry_points=False
)


@pytest.mark.parametrize(
    ("strategy", "params", "halving", "used"),
    [
        ("random", {"max_retries": 3}, False, "random"),
        ("random", {"max_retries": 3}, True, "successive_halving"),
        ("hyperband", {"eta": 2}, True, "hyperband"),
        ("asha", {}, True, "asha"),
    ],
)
def test_a_halving_policy_switches_only_a_strategy_that_does_not_race(
    strategy, params, halving, used
):
    """A strategy that already races candidates over budgets keeps its name and parameters;
    any other is replaced by successive halving, without the replaced one's parameters."""
    recipe = parse_recipe(toy_recipe(search={"strategy": strategy, "params": params}))
    policy = Policy("p", {"cv": 3}, halving, racing_strategy="successive_halving")
    chosen = policy_strategy(recipe, policy, RACING_PLUGINS)
    assert chosen.name == used
    assert chosen.params == (params if used == strategy else {})
    assert policy_strategy(recipe, None, RACING_PLUGINS) is recipe.search.strategy
