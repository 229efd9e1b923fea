"""The run's phases are hooks (``run_search``, ``run_finishing``): the engine implements them
last, so a plugin can wrap them or replace them, as pytest's main loop is a hook."""

from __future__ import annotations

from typing import Any

import numpy as np
from toy_plugin import ToyPlugin, toy_recipe

from automl_core.hookspecs import hookimpl
from automl_core.plugins import load_plugins
from automl_core.trial import Trial
from automl_engine.history import RunHistory
from automl_engine.phases import PLUGIN_NAME, with_engine_phases
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run


class AroundTheSearch:
    """Wraps both phases: sees the engine's loop run (the history before and after) and its
    reason, and the summary the finishing returned."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    @hookimpl(wrapper=True)
    def run_search(self, history):
        self.calls.append(("before search", history.count()))
        stopped = yield
        self.calls.append(("after search", history.count(), stopped))
        return stopped

    @hookimpl(wrapper=True)
    def run_finishing(self, stopped):
        self.calls.append(("before finishing", stopped))
        summary = yield
        self.calls.append(("after finishing", summary.model_path is not None))
        return summary


class DesignOfItsOwn:
    """Replaces the search: evaluates the space's default and two seeded samples, in order,
    on the run's executor and history, then stops (what a plugin with a loop of its own
    looks like)."""

    def __init__(self) -> None:
        self.configs: list[dict[str, Any]] = []

    @hookimpl
    def run_search(self, setup, history):
        space = setup.space
        self.configs = [space.default(), *space.sample(np.random.default_rng(0), 2)]
        for index, config in enumerate(self.configs):
            trial = Trial(index, config, origin="design-of-its-own")
            history.start(trial)
            history.finish(trial, setup.executor.submit(setup.task.evaluator, trial).result())
        return "the plugin's design is done"


def test_a_plugin_wraps_the_search_and_the_finishing(tmp_path):
    around = AroundTheSearch()
    plugins = load_plugins(extra=[ToyPlugin(), around], entry_points=False)
    summary = run(parse_recipe(toy_recipe()), tmp_path / "run", plugins=plugins)
    assert around.calls == [
        ("before search", 0),
        ("after search", 6, "trial budget reached"),  # the engine's loop ran inside
        ("before finishing", "trial budget reached"),
        ("after finishing", True),
    ]
    assert summary.n_trials == 6 and summary.stopped_because == "trial budget reached"


def test_a_plugin_replaces_the_search_and_the_engine_finishes_its_trials(tmp_path):
    design = DesignOfItsOwn()
    plugins = load_plugins(extra=[ToyPlugin(), design], entry_points=False)
    summary = run(parse_recipe(toy_recipe()), tmp_path / "run", plugins=plugins)
    assert summary.stopped_because == "the plugin's design is done"
    with RunHistory(tmp_path / "run" / HISTORY_FILE, read_only=True) as history:
        trials = history.trials()
    assert [t.trial.origin for t in trials] == ["design-of-its-own"] * 3  # no strategy ask
    assert [t.trial.config for t in trials] == design.configs
    assert summary.n_trials == 3 and summary.model_path  # the engine's finishing saved it


def test_the_engine_phases_are_registered_once_and_last():
    plugins = load_plugins(extra=[ToyPlugin()], entry_points=False)
    with_engine_phases(with_engine_phases(plugins))
    impls = plugins.manager.hook.run_search.get_hookimpls()
    assert [impl.plugin_name for impl in impls].count(PLUGIN_NAME) == 1
    assert impls[0].plugin_name == PLUGIN_NAME and impls[0].trylast  # called after the others
